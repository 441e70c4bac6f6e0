//go:build linux && !memfallback

package mem

import (
	"bytes"
	"os"
	"testing"
)

// Streamed bytes must not stay in the page cache, whether they were read
// with O_DIRECT or read normally and dropped.
func TestRangeReaderLeavesPageCacheEmpty(t *testing.T) {
	for _, direct := range []bool{true, false} {
		t.Run(map[bool]string{true: "direct", false: "buffered"}[direct], func(t *testing.T) {
			tryDirect = direct
			defer func() { tryDirect = true }()
			testLeavesPageCacheEmpty(t, direct)
		})
	}
}

func testLeavesPageCacheEmpty(t *testing.T, direct bool) {
	smallChunks(t)
	data := pattern(400_000)
	m := uncachedFile(t, data)
	ranges := []Range{{100, 150_000}, {150_100, 200_000}, {350_100, 49_900}}
	s, err := NewRangeReader(m.Path(), ranges, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 5 {
		for i, r := range ranges {
			b, _, err := s.Acquire(i)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, data[r.Off:r.Off+r.Len]) {
				t.Fatalf("range %d: bytes differ", i)
			}
			s.Release(i)
		}
	}
	if direct != s.Direct() {
		t.Logf("O_DIRECT asked %v, used %v (filesystem)", direct, s.Direct())
	}
	// The readers are reading ahead; a buffered read holds its chunk in the
	// cache until it drops it. Close waits for them.
	s.Close()
	if res, err := m.Resident(0, m.Size()); err != nil || res != 0 {
		t.Fatalf("after reading, %d bytes of the file are in the page cache (%v), want 0", res, err)
	}
}

// NewRangeReader evicts the ranges from the page cache when it starts.
func TestRangeReaderDropsCachedRanges(t *testing.T) {
	data := pattern(300_000)
	m := uncachedFile(t, data)
	f, err := os.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(make([]byte, len(data)), 0); err != nil {
		t.Fatal(err)
	}
	if res, _ := m.Resident(0, m.Size()); res == 0 {
		t.Skip("reading the file did not cache it")
	}
	s, err := NewRangeReader(m.Path(), []Range{{0, 300_000}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res, err := m.Resident(0, m.Size()); err != nil || res != 0 {
		t.Fatalf("after NewRangeReader, %d bytes cached (%v), want 0", res, err)
	}
}
