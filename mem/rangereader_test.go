package mem

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// smallChunks makes range readers built during the test read in chunks of
// 8 KiB, so ranges of a few pages exercise several chunks and readers.
func smallChunks(t *testing.T) {
	old := rangeChunk
	rangeChunk = 2 * rangeAlign
	t.Cleanup(func() { rangeChunk = old })
}

// randomRanges returns n ranges of random (mostly unaligned) offsets and
// lengths up to maxLen inside a file of size bytes.
func randomRanges(rng *rand.Rand, n int, size, maxLen int64) []Range {
	rs := make([]Range, n)
	for i := range rs {
		l := 1 + rng.Int64N(maxLen)
		rs[i] = Range{Off: rng.Int64N(size - l + 1), Len: l}
	}
	return rs
}

// randomReader reads n random ranges of at most maxLen bytes (drawn from
// seed) of a file of size pattern bytes, into slots buffers of small
// chunks; it closes when the test ends.
func randomReader(t *testing.T, size int, seed uint64, n int, maxLen int64, slots int) ([]byte, []Range, *RangeReader) {
	t.Helper()
	smallChunks(t)
	data := pattern(size)
	ranges := randomRanges(rand.New(rand.NewPCG(seed, seed+1)), n, int64(size), maxLen)
	s, err := NewRangeReader(writeFile(t, data), ranges, slots)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return data, ranges, s
}

func TestRangeReaderServesFileBytes(t *testing.T) {
	smallChunks(t)
	const size = 200_000
	data := pattern(size)
	path := writeFile(t, data)
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		ranges []Range
	}{
		{"aligned", []Range{{0, 4096}, {4096, 8192}, {12288, 40960}}},
		{"unaligned", []Range{{1, 10}, {4095, 2}, {5000, 70000}, {size - 3, 3}}},
		{"one range", []Range{{123, 45678}}},
		{"whole file", []Range{{0, size}, {7, size - 7}}},
		{"random", randomRanges(rng, 7, size, 60000)},
		{"random small", randomRanges(rng, 5, size, 300)},
	}
	for _, tc := range tests {
		for _, slots := range []int{1, 2, 3} {
			t.Run(tc.name+"/"+string(rune('0'+slots)), func(t *testing.T) {
				s, err := NewRangeReader(path, tc.ranges, slots)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				for cycle := range 12 {
					for i, r := range tc.ranges {
						b, slot, err := s.Acquire(i)
						if err != nil {
							t.Fatalf("cycle %d: Acquire(%d): %v", cycle, i, err)
						}
						if !bytes.Equal(b, data[r.Off:r.Off+r.Len]) {
							t.Fatalf("cycle %d: range %d %v: bytes differ from the file", cycle, i, r)
						}
						if v := s.View(i, slot); &v[0] != &b[0] || len(v) != len(b) {
							t.Fatalf("cycle %d: View(%d, %d) is not the acquired slice", cycle, i, slot)
						}
						s.Release(i)
					}
				}
			})
		}
	}
}

// A consumer may hold several slots at once and release them later.
func TestRangeReaderHoldsSeveralSlots(t *testing.T) {
	data, ranges, s := randomReader(t, 100_000, 3, 5, 20000, 3)
	for k := 0; k < 30; k += 3 {
		var got [3][]byte
		idx := [3]int{k % 5, (k + 1) % 5, (k + 2) % 5}
		for j, i := range idx {
			var err error
			if got[j], _, err = s.Acquire(i); err != nil {
				t.Fatalf("Acquire(%d): %v", i, err)
			}
		}
		// A fourth acquire can never be served.
		if _, _, err := s.Acquire((k + 3) % 5); err == nil || !strings.Contains(err.Error(), "slots held") {
			t.Fatalf("Acquire with every slot held: err = %v, want a slots-held error", err)
		}
		for j, i := range idx {
			r := ranges[i]
			if !bytes.Equal(got[j], data[r.Off:r.Off+r.Len]) {
				t.Fatalf("range %d: bytes differ", i)
			}
		}
		for _, i := range idx {
			s.Release(i)
		}
		s.Release(idx[0]) // not held: ignored
	}
}

// Acquiring out of order skips the ranges in between, as a forward pass
// that failed halfway and started again does.
func TestRangeReaderSkipsRanges(t *testing.T) {
	smallChunks(t)
	data := pattern(90_000)
	ranges := []Range{{0, 10000}, {10000, 20000}, {30000, 5000}, {40000, 50000}}
	for _, slots := range []int{1, 2, 3} {
		s, err := NewRangeReader(writeFile(t, data), ranges, slots)
		if err != nil {
			t.Fatal(err)
		}
		seq := []int{0, 1, 0, 1, 2, 3, 2, 3, 3, 0, 1, 2, 3, 1, 0}
		for _, i := range seq {
			b, _, err := s.Acquire(i)
			if err != nil {
				t.Fatalf("%d slots: Acquire(%d): %v", slots, i, err)
			}
			r := ranges[i]
			if !bytes.Equal(b, data[r.Off:r.Off+r.Len]) {
				t.Fatalf("%d slots: range %d: bytes differ", slots, i)
			}
			s.Release(i)
		}
		s.Close()
	}
}

func TestRangeReaderRejectsBadArguments(t *testing.T) {
	path := writeFile(t, pattern(10000))
	tests := []struct {
		name   string
		ranges []Range
		slots  int
		want   string
	}{
		{"no slots", []Range{{0, 10}}, 0, "slots"},
		{"no ranges", nil, 2, "no ranges"},
		{"past end", []Range{{0, 10}, {9000, 1001}}, 2, "outside file"},
		{"negative offset", []Range{{-1, 10}}, 2, "outside file"},
		{"empty range", []Range{{5, 0}}, 2, "outside file"},
	}
	for _, tc := range tests {
		s, err := NewRangeReader(path, tc.ranges, tc.slots)
		if err == nil {
			s.Close()
			t.Errorf("%s: NewRangeReader succeeded", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
	if _, err := NewRangeReader(path+".missing", []Range{{0, 1}}, 1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
	s, err := NewRangeReader(path, []Range{{0, 10}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, i := range []int{-1, 1} {
		if _, _, err := s.Acquire(i); err == nil {
			t.Errorf("Acquire(%d) of 1 range succeeded", i)
		}
	}
}

// A file that shrinks under the reader makes Acquire fail, every time,
// instead of waiting forever for bytes that will not come.
func TestRangeReaderTruncatedFile(t *testing.T) {
	smallChunks(t)
	data := pattern(100_000)
	path := writeFile(t, data)
	ranges := []Range{{0, 30000}, {30000, 30000}, {60000, 40000}}
	// One slot: the reader cannot get ahead of the truncation below.
	s, err := NewRangeReader(path, ranges, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Acquire(0); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 50000); err != nil {
		t.Fatal(err)
	}
	s.Release(0)
	// Range 1 lies partly past the new end.
	for range 3 {
		_, _, err := s.Acquire(1)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("Acquire after truncation: err = %v, want io.ErrUnexpectedEOF", err)
		}
		if !strings.Contains(err.Error(), "range 1") {
			t.Fatalf("error %q does not name the range", err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRangeReaderClose(t *testing.T) {
	data := pattern(50000)
	s, err := NewRangeReader(writeFile(t, data), []Range{{0, 20000}, {20000, 30000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Acquire(0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, _, err := s.Acquire(1); !errors.Is(err, ErrReaderClosed) {
		t.Fatalf("Acquire after Close: err = %v, want ErrReaderClosed", err)
	}
	s.Release(0) // harmless
}

func TestRangeReaderAllocatesNothing(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("os.File.ReadAt allocates under js/wasm (syscall/js calls into Node)")
	}
	_, ranges, s := randomReader(t, 300_000, 5, 6, 50000, 2)
	cycle := func() {
		for i := range ranges {
			if _, _, err := s.Acquire(i); err != nil {
				t.Fatal(err)
			}
			s.Release(i)
		}
	}
	cycle()
	if n := testing.AllocsPerRun(20, cycle); n != 0 {
		t.Fatalf("a cycle of Acquire/Release allocates %.1f times, want 0", n)
	}
	if st := s.Stats(); st.BytesRead < int64(len(ranges)) {
		t.Fatalf("Stats().BytesRead = %d after %d cycles", st.BytesRead, 21)
	}
}

func TestRangeReaderBuffersAreAligned(t *testing.T) {
	bufs, free, err := allocSlots(3, 3*rangeAlign)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	for i, b := range bufs {
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); p%rangeAlign != 0 || len(b) != 3*rangeAlign {
			t.Errorf("buffer %d at %#x, %d bytes: want %d-aligned, %d bytes", i, p, len(b), rangeAlign, 3*rangeAlign)
		}
	}
}
