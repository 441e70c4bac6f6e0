//go:build linux && !memfallback

package mem

import (
	"bytes"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// uncachedFile writes a file and evicts it from the page cache, so
// residency starts at zero. It skips the test if the filesystem keeps the
// pages anyway (tmpfs, some overlays).
func uncachedFile(t *testing.T, data []byte) *Mapping {
	t.Helper()
	p := writeFile(t, data)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	// Dirty pages cannot be dropped: write them back first.
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m, err := Map(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if r, err := m.Resident(0, m.Size()); err != nil || r != 0 {
		t.Skipf("cannot evict the test file from the page cache (resident %d, %v)", r, err)
	}
	return m
}

func TestResidentCountsBytesInRange(t *testing.T) {
	size := 3*pageSize + 100
	m := uncachedFile(t, pattern(int(size)))
	// Touching every page makes the whole file resident.
	touchPages(m.Bytes())
	tests := []struct{ off, length, want int64 }{
		{0, size, size},
		{10, 50, 50},
		{pageSize - 5, 10, 10},
		{size - 1, 1, 1},
		{3 * pageSize, 100, 100},
		{pageSize, 2 * pageSize, 2 * pageSize},
		{7, 0, 0},
	}
	for _, tc := range tests {
		got, err := m.Resident(tc.off, tc.length)
		if err != nil || got != tc.want {
			t.Errorf("Resident(%d, %d) = %d, %v; want %d", tc.off, tc.length, got, err, tc.want)
		}
	}
}

func TestMapPopulateMakesResident(t *testing.T) {
	data := pattern(int(64 * pageSize))
	m := uncachedFile(t, data)
	p := m.Path()
	m2, err := Map(p, MapPopulate())
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if r, err := m2.Resident(0, m2.Size()); err != nil || r != m2.Size() {
		t.Errorf("after MapPopulate Resident = %d, %v; want %d", r, err, m2.Size())
	}
}

// waitResident polls until [off, off+length) is fully cached. Prefetch
// reads asynchronously, so there is no moment to check at; the generous
// bound only keeps a broken prefetch from hanging the test.
func waitResident(t *testing.T, m *Mapping, off, length int64) {
	t.Helper()
	var r int64
	var err error
	for range 3000 {
		r, err = m.Resident(off, length)
		if err != nil {
			t.Fatal(err)
		}
		if r == length {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("Resident(%d, %d) = %d after waiting, want all", off, length, r)
}

func TestPrefetch(t *testing.T) {
	// Several readahead chunks, and a range that starts and ends mid-page.
	size := 8*prefetchChunk + 3*pageSize + 17
	data := pattern(int(size))
	m := uncachedFile(t, data)

	off, length := int64(prefetchChunk+100), int64(3*prefetchChunk+50)
	if err := m.Prefetch(off, length); err != nil {
		t.Fatal(err)
	}
	waitResident(t, m, off, length)

	if err := m.Prefetch(0, size); err != nil {
		t.Fatal(err)
	}
	waitResident(t, m, 0, size)
	if !bytes.Equal(m.Bytes(), data) {
		t.Error("bytes differ after Prefetch")
	}
}

// TestPageOutEvicts checks that PageOut really drops clean file pages this
// process alone maps; DontNeed alone would leave them cached.
func TestPageOutEvicts(t *testing.T) {
	size := 16 * pageSize
	data := pattern(int(size))
	m := uncachedFile(t, data)
	if !bytes.Equal(m.Bytes(), data) { // faults every page in
		t.Fatal("bytes differ from the file")
	}
	if r, _ := m.Resident(0, size); r != size {
		t.Fatalf("Resident after reading = %d, want %d", r, size)
	}
	if err := m.Advise(0, size, PageOut); err != nil {
		t.Fatal(err)
	}
	r, err := m.Resident(0, size)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("resident after PageOut: %d of %d bytes", r, size)
	if r == size {
		t.Skip("kernel kept the pages (MADV_PAGEOUT unsupported or pages shared)")
	}
	if !bytes.Equal(m.Bytes(), data) {
		t.Error("bytes differ after PageOut and refault")
	}
}
