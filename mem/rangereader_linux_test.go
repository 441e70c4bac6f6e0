//go:build linux && !memfallback

package mem

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
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
	s, err := NewRangeReader(m.Path(), ranges, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for k := range 5 * len(ranges) {
		load(t, s, data, ranges, k%len(ranges), k%2)
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

// Release gives a mapped range's pages back: unmapped and out of the page
// cache, so the memory a cgroup charged for them is free again.
func TestMappingReleaseAndPopulate(t *testing.T) {
	data := pattern(1 << 20)
	m := uncachedFile(t, data)
	if err := m.Populate(0, m.Size()); err != nil {
		t.Fatal(err)
	}
	if res, err := m.Resident(0, m.Size()); err != nil || res != m.Size() {
		t.Skipf("after Populate %d of %d bytes cached (%v): the file system does not cache", res, m.Size(), err)
	}
	rss := func() int64 {
		r, err := smapsRss(m.Bytes())
		if err != nil {
			t.Skipf("no smaps: %v", err)
		}
		return r
	}
	if r := rss(); r != m.Size() {
		t.Fatalf("after Populate the mapping's Rss is %d, want %d", r, m.Size())
	}
	// Unaligned ends: the pages only partly inside stay.
	if err := m.Release(1000, 600_000); err != nil {
		t.Fatal(err)
	}
	lo, hi := int64(4096), int64(600_000+1000)&^4095
	if res, err := m.Resident(lo, hi-lo); err != nil || res != 0 {
		t.Fatalf("after Release %d bytes of [%d, %d) still cached (%v)", res, lo, hi, err)
	}
	if res, _ := m.Resident(0, 4096); res != 4096 {
		t.Fatalf("the page shared with the rest of the file was dropped")
	}
	if r := rss(); r != m.Size()-(hi-lo) {
		t.Fatalf("after Release the mapping's Rss is %d, want %d", r, m.Size()-(hi-lo))
	}
	if !bytes.Equal(m.Bytes()[5000:9000], data[5000:9000]) {
		t.Fatal("released bytes read back differently")
	}
	if err := m.Release(0, m.Size()+1); err == nil {
		t.Fatal("Release past the end succeeded")
	}
}

// smapsRss is the Rss /proc/self/smaps reports for the mapping starting
// at b's address.
func smapsRss(b []byte) (int64, error) {
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	addr := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	in := false
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = strings.HasPrefix(line, addr)
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimPrefix(line, "Rss:"), "%d kB", &kb); err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("mapping at %s not in smaps", addr)
}

// TestAllocSlotsHugePageAligned: buffers of 2 MiB or more together start on
// a huge-page boundary (and are advised to use huge pages), so an O_DIRECT
// read into them is not split into small disk requests by scattered 4 KiB
// pages; smaller ones are page-aligned as O_DIRECT needs.
func TestAllocSlotsHugePageAligned(t *testing.T) {
	for _, tc := range []struct{ n, size, align int }{
		{2, 3<<20 + 4096, hugePage},
		{1, hugePage, hugePage},
		{3, 8192, 4096},
	} {
		bufs, free, err := allocSlots(tc.n, tc.size)
		if err != nil {
			t.Fatal(err)
		}
		if len(bufs) != tc.n {
			t.Fatalf("%d buffers, want %d", len(bufs), tc.n)
		}
		for i, b := range bufs {
			if len(b) != tc.size || cap(b) != tc.size {
				t.Errorf("%d×%d: buffer %d has len %d cap %d", tc.n, tc.size, i, len(b), cap(b))
			}
			b[0], b[len(b)-1] = 1, 1 // writable to its ends
		}
		if a := uintptr(unsafe.Pointer(&bufs[0][0])); a%uintptr(tc.align) != 0 {
			t.Errorf("%d×%d: first buffer at %#x, not aligned to %d", tc.n, tc.size, a, tc.align)
		}
		if err := free(); err != nil {
			t.Fatal(err)
		}
	}
}
