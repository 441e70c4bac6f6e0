//go:build linux && !memfallback

package mem

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// populateFlag is OR-ed into the mmap flags for MapPopulate.
const populateFlag = unix.MAP_POPULATE

// Linux 5.4 advice values, spelled out so the numbers stay right even where
// x/sys lacks the names.
const (
	madvCold    = 20
	madvPageOut = 21
)

// prefetchChunk bounds each readahead request. The kernel trims a single
// request to the device's readahead window (128 KiB by default), so asking
// for more at once would silently prefetch only the start of the range.
const prefetchChunk = 128 << 10

// Advise passes advice for the bytes [off, off+length) of the file to the
// kernel (madvise). The range is widened to whole pages, which never reaches
// outside the mapping. Cold and PageOut fall back to DontNeed on kernels
// older than 5.4. DontNeed, Cold and PageOut fail with EINVAL on a mapping
// locked by MapLock, whose pages may not leave RAM.
// A zero length does nothing.
func (m *Mapping) Advise(off, length int64, a Advice) error {
	if !a.valid() {
		return fmt.Errorf("mem: advise %s: unknown advice %d", m.path, int(a))
	}
	return m.onPages("advise", off, length, func(start, end int64) error {
		return m.advise(start, end, a)
	})
}

// advise applies a to the whole pages [start, end).
func (m *Mapping) advise(start, end int64, a Advice) error {
	b := m.sys.pages[start:end]
	var err error
	switch a {
	case Normal:
		err = unix.Madvise(b, unix.MADV_NORMAL)
	case Sequential:
		err = unix.Madvise(b, unix.MADV_SEQUENTIAL)
	case Random:
		err = unix.Madvise(b, unix.MADV_RANDOM)
	case WillNeed:
		err = unix.Madvise(b, unix.MADV_WILLNEED)
	case DontNeed:
		err = unix.Madvise(b, unix.MADV_DONTNEED)
	case Cold, PageOut:
		advice := madvCold
		if a == PageOut {
			advice = madvPageOut
		}
		// EINVAL is how kernels before 5.4 reject the unknown value.
		if err = unix.Madvise(b, advice); errors.Is(err, unix.EINVAL) {
			err = unix.Madvise(b, unix.MADV_DONTNEED)
		}
	}
	if err != nil {
		return fmt.Errorf("mem: advise %s %v for [%d, %d): %w", m.path, a, start, end, err)
	}
	return nil
}

// Prefetch starts reading the bytes [off, off+length) of the file into the
// page cache and returns at once; a helper goroutine issues the readahead
// requests (fadvise WILLNEED on the open file, falling back to madvise)
// while the caller keeps computing. It does not map pages into the process,
// so resident set size grows only when the bytes are touched. Close stops a
// prefetch in progress. The error reports only a bad range or a closed
// mapping. On systems other than Linux it does nothing.
func (m *Mapping) Prefetch(off, length int64) error {
	if err := m.checkRange("prefetch", off, length); err != nil {
		return err
	}
	if m.closed.Load() {
		return fmt.Errorf("mem: prefetch %s: %w", m.path, ErrClosed)
	}
	if length == 0 {
		return nil
	}
	go m.prefetch(off, off+length)
	return nil
}

// onPages runs f on the whole pages spanning [off, off+length) under the
// read lock, once the range is known to lie in the file and the mapping
// to be open; op names the caller in errors. An empty range does nothing.
func (m *Mapping) onPages(op string, off, length int64, f func(start, end int64) error) error {
	if err := m.checkRange(op, off, length); err != nil {
		return err
	}
	if length == 0 {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed.Load() {
		return fmt.Errorf("mem: %s %s: %w", op, m.path, ErrClosed)
	}
	start, end := pageSpan(off, length, pageSize)
	return f(start, end)
}

func (m *Mapping) prefetch(off, end int64) {
	for off < end {
		n := min(end-off, prefetchChunk)
		// The lock is taken per chunk so Close waits for one request at
		// most, not for the whole range.
		m.mu.RLock()
		if m.closed.Load() {
			m.mu.RUnlock()
			return
		}
		if err := unix.Fadvise(int(m.sys.f.Fd()), off, n, unix.FADV_WILLNEED); err != nil {
			start, stop := pageSpan(off, n, pageSize)
			unix.Madvise(m.sys.pages[start:stop], unix.MADV_WILLNEED)
		}
		m.mu.RUnlock()
		off += n
	}
}

// mincoreChunk bounds the residency vector Resident allocates, in pages.
const mincoreChunk = 1 << 16

// Resident returns how many bytes of [off, off+length) are in the page
// cache now (mincore), whether or not this process has touched them. Pages
// still being read count as absent. It is meant for tests and streaming
// diagnostics; it allocates. On systems other than Linux it fails with
// ErrUnsupported.
func (m *Mapping) Resident(off, length int64) (int64, error) {
	var total int64
	err := m.onPages("resident", off, length, func(start, end int64) error {
		var err error
		total, err = m.resident(off, length, start, end)
		return err
	})
	return total, err
}

// resident counts the bytes of [off, off+length) in the page cache, the
// range spanning the whole pages [start, end).
func (m *Mapping) resident(off, length, start, end int64) (int64, error) {
	npages := (end - start) / pageSize
	vec := make([]byte, min(npages, mincoreChunk))
	var total int64
	for p := int64(0); p < npages; {
		k := min(npages-p, int64(len(vec)))
		addr := start + p*pageSize
		_, _, errno := unix.Syscall(unix.SYS_MINCORE,
			uintptr(unsafe.Pointer(&m.sys.pages[addr])), uintptr(k*pageSize),
			uintptr(unsafe.Pointer(&vec[0])))
		if errno != 0 {
			return 0, fmt.Errorf("mem: resident %s [%d, %d): %w", m.path, addr, addr+k*pageSize, errno)
		}
		for i, v := range vec[:k] {
			if v&1 == 0 {
				continue
			}
			// Count only the part of the page inside [off, off+length).
			lo := max(addr+int64(i)*pageSize, off)
			hi := min(addr+int64(i+1)*pageSize, off+length)
			total += hi - lo
		}
		p += k
	}
	return total, nil
}

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14): fault the range in
// for reading, synchronously.
const madvPopulateRead = 22

// Release gives back the memory the bytes [off, off+length) of the file
// hold: their pages are unmapped from this process (MADV_DONTNEED) and
// then dropped from the page cache (POSIX_FADV_DONTNEED), which frees them
// at once unless another process maps them or they are dirty. Pages only
// partly inside the range are kept, since a neighbouring range may be in
// use. A later access reads the bytes from disk again.
func (m *Mapping) Release(off, length int64) error {
	if err := m.checkRange("release", off, length); err != nil {
		return err
	}
	start := (off + pageSize - 1) &^ (pageSize - 1)
	end := (off + length) &^ (pageSize - 1)
	if off+length == m.size {
		end = (m.size + pageSize - 1) &^ (pageSize - 1) // the last page is the file's own
	}
	if end <= start {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed.Load() {
		return fmt.Errorf("mem: release %s: %w", m.path, ErrClosed)
	}
	if err := unix.Madvise(m.sys.pages[start:end], unix.MADV_DONTNEED); err != nil {
		return fmt.Errorf("mem: release %s [%d, %d): %w", m.path, start, end, err)
	}
	if err := unix.Fadvise(int(m.sys.f.Fd()), start, end-start, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("mem: release %s [%d, %d): %w", m.path, start, end, err)
	}
	return nil
}

// Populate reads the bytes [off, off+length) of the file into the page
// cache and maps them, returning when they are all in memory
// (MADV_POPULATE_READ; kernels before 5.14 touch every page). Unlike
// Prefetch it waits, so a caller knows when the range is resident.
func (m *Mapping) Populate(off, length int64) error {
	return m.onPages("populate", off, length, m.populate)
}

// populate faults in the whole pages [start, end).
func (m *Mapping) populate(start, end int64) error {
	b := m.sys.pages[start:end]
	err := unix.Madvise(b, madvPopulateRead)
	if errors.Is(err, unix.EINVAL) {
		touchPages(b)
		err = nil
	}
	if err != nil {
		return fmt.Errorf("mem: populate %s [%d, %d): %w", m.path, start, end, err)
	}
	return nil
}
