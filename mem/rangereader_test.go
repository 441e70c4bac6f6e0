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

// load reads range i into slot and checks the bytes against data.
func load(t *testing.T, s *RangeReader, data []byte, ranges []Range, i, slot int) {
	t.Helper()
	if err := s.Load(i, slot); err != nil {
		t.Fatalf("Load(%d, %d): %v", i, slot, err)
	}
	if err := s.Wait(slot); err != nil {
		t.Fatalf("Wait(%d) for range %d: %v", slot, i, err)
	}
	r := ranges[i]
	if b := s.View(i, slot); !bytes.Equal(b, data[r.Off:r.Off+r.Len]) {
		t.Fatalf("range %d %v in slot %d: bytes differ from the file", i, r, slot)
	}
	if got, done := s.Loaded(slot); got != i || !done {
		t.Fatalf("Loaded(%d) = %d, %v; want %d, true", slot, got, done, i)
	}
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
			for _, readers := range []int{1, 3} {
				s, err := NewRangeReader(path, tc.ranges, slots, readers)
				if err != nil {
					t.Fatal(err)
				}
				for cycle := range 4 {
					for i := range tc.ranges {
						load(t, s, data, tc.ranges, i, (cycle+i)%slots)
					}
				}
				if st := s.Stats(); st.Loads != int64(4*len(tc.ranges)) {
					t.Errorf("%s: %d loads counted, want %d", tc.name, st.Loads, 4*len(tc.ranges))
				}
				s.Close()
			}
		}
	}
}

// Loads queued together all complete, each in its own slot, whatever the
// order they are waited for in.
func TestRangeReaderLoadsAhead(t *testing.T) {
	smallChunks(t)
	data := pattern(300_000)
	ranges := randomRanges(rand.New(rand.NewPCG(3, 4)), 6, int64(len(data)), 50000)
	s := openReader(t, writeFile(t, data), ranges, 3, 4)
	for k := 0; k < 30; k += 3 {
		idx := [3]int{k % 6, (k + 1) % 6, (k + 5) % 6}
		for slot, i := range idx {
			if err := s.Load(i, slot); err != nil {
				t.Fatal(err)
			}
		}
		for _, slot := range []int{2, 0, 1} {
			if err := s.Wait(slot); err != nil {
				t.Fatal(err)
			}
			r := ranges[idx[slot]]
			if !bytes.Equal(s.View(idx[slot], slot), data[r.Off:r.Off+r.Len]) {
				t.Fatalf("range %d: bytes differ", idx[slot])
			}
		}
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
		s, err := NewRangeReader(path, tc.ranges, tc.slots, 0)
		if err == nil {
			s.Close()
			t.Errorf("%s: NewRangeReader succeeded", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
	if _, err := NewRangeReader(path+".missing", []Range{{0, 1}}, 1, 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
	s := openReader(t, path, []Range{{0, 10}}, 1, 0)
	for _, c := range [][2]int{{-1, 0}, {1, 0}, {0, 1}, {0, -1}} {
		if err := s.Load(c[0], c[1]); err == nil {
			t.Errorf("Load(%d, %d) of 1 range and 1 slot succeeded", c[0], c[1])
		}
	}
	if err := s.Wait(0); err != nil {
		t.Errorf("Wait on a slot never loaded: %v", err)
	}
}

// A file that shrinks under the reader makes the load fail with an error
// naming the range, instead of waiting forever for bytes that will not
// come; later loads of ranges still in the file work.
func TestRangeReaderTruncatedFile(t *testing.T) {
	smallChunks(t)
	data := pattern(100_000)
	path := writeFile(t, data)
	ranges := []Range{{0, 30000}, {30000, 30000}, {60000, 40000}}
	s := openReader(t, path, ranges, 1, 2)
	load(t, s, data, ranges, 0, 0)
	if err := os.Truncate(path, 50000); err != nil {
		t.Fatal(err)
	}
	// Range 1 lies partly past the new end.
	for range 3 {
		if err := s.Load(1, 0); err != nil {
			t.Fatal(err)
		}
		err := s.Wait(0)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("Wait after truncation: err = %v, want io.ErrUnexpectedEOF", err)
		}
		if !strings.Contains(err.Error(), "range 1") {
			t.Fatalf("error %q does not name the range", err)
		}
	}
	load(t, s, data, ranges, 0, 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRangeReaderClose(t *testing.T) {
	data := pattern(50000)
	s, err := NewRangeReader(writeFile(t, data), []Range{{0, 20000}, {20000, 30000}}, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Load(0, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Load(1, 1); !errors.Is(err, ErrReaderClosed) {
		t.Fatalf("Load after Close: err = %v, want ErrReaderClosed", err)
	}
	if err := s.Discard(); err != nil {
		t.Fatalf("Discard after Close: %v", err)
	}
}

func TestRangeReaderAllocatesNothing(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("os.File.ReadAt allocates under js/wasm (syscall/js calls into Node)")
	}
	smallChunks(t)
	data := pattern(300_000)
	ranges := randomRanges(rand.New(rand.NewPCG(5, 6)), 6, int64(len(data)), 50000)
	s := openReader(t, writeFile(t, data), ranges, 2, 2)
	cycle := func() {
		for i := range ranges {
			if err := s.Load(i, i%2); err != nil {
				t.Fatal(err)
			}
			if err := s.Wait(i % 2); err != nil {
				t.Fatal(err)
			}
		}
	}
	cycle()
	if n := testing.AllocsPerRun(20, cycle); n != 0 {
		t.Fatalf("a cycle of Load/Wait allocates %.1f times, want 0", n)
	}
	if st := s.Stats(); st.BytesRead < int64(len(ranges)) {
		t.Fatalf("Stats().BytesRead = %d after 22 cycles", st.BytesRead)
	}
}

// Discard waits for the loads in flight and leaves the reader usable.
func TestRangeReaderDiscard(t *testing.T) {
	smallChunks(t)
	data := pattern(200_000)
	ranges := []Range{{0, 90000}, {90000, 100000}}
	s := openReader(t, writeFile(t, data), ranges, 2, 2)
	s.Load(0, 0)
	s.Load(1, 1)
	if err := s.Discard(); err != nil {
		t.Fatal(err)
	}
	for slot := range 2 {
		if i, done := s.Loaded(slot); i != -1 || !done {
			t.Fatalf("after Discard slot %d holds %d (done %v), want -1", slot, i, done)
		}
	}
	load(t, s, data, ranges, 1, 0)
}

func TestSlotBytes(t *testing.T) {
	if got := SlotBytes([]Range{{1, 10}, {4095, 2}, {8192, 4096}}); got != 8192 {
		t.Fatalf("SlotBytes = %d, want 8192 (the range across a page boundary)", got)
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

// openReader is NewRangeReader's reader, closed when the test ends.
func openReader(t *testing.T, path string, ranges []Range, slots, readers int) *RangeReader {
	t.Helper()
	s, err := NewRangeReader(path, ranges, slots, readers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
