//go:build unix && !memfallback

package mem

import (
	"errors"
	"fmt"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mappingSys holds what the Unix mapping needs beyond the bytes.
type mappingSys struct {
	// f stays open while mapped so Prefetch can hand the kernel a file
	// descriptor for readahead.
	f *os.File
	// pages is the mapping extended to its last whole page; madvise and
	// mincore work on whole pages and the tail of the last page is mapped.
	pages []byte
}

// Map maps the whole file at path read-only.
//
// The mapping is shared (MAP_SHARED), so the bytes are the page cache
// itself: several processes mapping one model share one copy, and pages
// are read from disk the first time they are touched unless MapPopulate is
// given. Close releases it.
func Map(path string, opts ...MapOption) (*Mapping, error) {
	var cfg mapConfig
	for _, o := range opts {
		o(&cfg)
	}
	f, _, err := OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("mem: map: %w", err)
	}
	m, err := mapFile(f, path, cfg)
	if err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

func mapFile(f *os.File, path string, cfg mapConfig) (*Mapping, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("mem: map: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("mem: map %s (mode %v): %w", path, fi.Mode().Type(), ErrNotRegular)
	}
	size := fi.Size()
	if size == 0 {
		return nil, fmt.Errorf("mem: map %s: %w", path, ErrEmptyFile)
	}
	if size > math.MaxInt || size > math.MaxInt-pageSize {
		return nil, fmt.Errorf("mem: map %s: %d bytes do not fit in this process's address space", path, size)
	}
	flags := unix.MAP_SHARED
	if cfg.populate {
		flags |= populateFlag
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, flags)
	if err != nil {
		return nil, fmt.Errorf("mem: map %s (%d bytes): %w", path, size, err)
	}
	if cfg.populate && populateFlag == 0 {
		touchPages(data)
	}
	if cfg.lock {
		if err := unix.Mlock(data); err != nil {
			unix.Munmap(data)
			hint := ""
			if errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EAGAIN) {
				hint = " (the file is larger than RLIMIT_MEMLOCK allows: raise it with ulimit -l or grant CAP_IPC_LOCK)"
			}
			return nil, fmt.Errorf("mem: lock %s (%d bytes) in memory: %w%s", path, size, err, hint)
		}
	}
	_, end := pageSpan(0, size, pageSize)
	return &Mapping{
		path: path,
		size: size,
		data: data,
		sys: mappingSys{
			f:     f,
			pages: unsafe.Slice(unsafe.SliceData(data), end),
		},
	}, nil
}

// touchSink keeps the compiler from discarding the reads in touchPages.
var touchSink byte

// touchPages faults every page in, for systems without MAP_POPULATE.
func touchPages(b []byte) {
	var x byte
	for i := 0; i < len(b); i += int(pageSize) {
		x ^= b[i]
	}
	touchSink = x
}

// Bytes returns the file's contents. The slice aliases the page cache: it
// must not be written (the mapping is read-only, writing faults) and must
// not be used after Close. It returns nil after Close.
func (m *Mapping) Bytes() []byte { return m.data }

// Mapped reports whether Bytes is a view of the page cache (true on Unix)
// rather than a heap copy made by the portable fallback. A heap copy is
// anonymous memory and must be planned for as such.
func (m *Mapping) Mapped() bool { return true }

func (m *Mapping) readAt(p []byte, off int64) (int, error) {
	return copy(p, m.data[off:]), nil
}

// release unmaps the file and closes it; Close calls it once, holding
// m.mu.
func (m *Mapping) release() error {
	errUnmap := unix.Munmap(m.data)
	errClose := m.sys.f.Close()
	m.data, m.sys.pages = nil, nil
	if errUnmap != nil {
		return fmt.Errorf("mem: unmap %s: %w", m.path, errUnmap)
	}
	if errClose != nil {
		return fmt.Errorf("mem: close %s: %w", m.path, errClose)
	}
	return nil
}
