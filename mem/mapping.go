package mem

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/lowmem/llm/internal/enum"
)

// ErrClosed is returned by operations on a Mapping after Close.
var ErrClosed = errors.New("mem: mapping is closed")

// ErrEmptyFile is returned by Map for a file of zero bytes, which cannot be
// memory-mapped and cannot hold a model.
var ErrEmptyFile = errors.New("mem: file is empty")

// ErrNotRegular is returned by Map and OpenFile for a path that is not a
// regular file: a directory, a device such as /dev/null, a FIFO or a
// socket.
var ErrNotRegular = errors.New("mem: not a regular file")

// OpenFile opens the regular file at path for reading and returns it with
// its size. It checks the type before reading anything: the open does not
// block (O_NONBLOCK), so a FIFO that nobody writes to is refused rather
// than waited on forever. A path that is not a regular file gives an error
// wrapping ErrNotRegular; an empty file, ErrEmptyFile.
func OpenFile(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case !fi.Mode().IsRegular():
		err = fmt.Errorf("mem: %s (mode %v): %w", path, fi.Mode().Type(), ErrNotRegular)
	case fi.Size() == 0:
		err = fmt.Errorf("mem: %s: %w", path, ErrEmptyFile)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// ErrUnsupported is returned (wrapped) by functions that have no
// implementation on this operating system. It is errors.ErrUnsupported, so
// either value matches with errors.Is.
var ErrUnsupported = errors.ErrUnsupported

// Mapping is a read-only view of a whole file.
//
// On Unix systems the view is a shared memory mapping: the bytes are the
// kernel's page cache, so mapping costs no anonymous memory and pages the
// process has not touched are not resident. Elsewhere the portable fallback
// reads the file into the Go heap on the first call to Bytes (see Mapped).
//
// The methods are safe for concurrent use, except that slices returned by
// Bytes must not be used after Close: the memory behind them is unmapped
// and touching it crashes the process.
type Mapping struct {
	path string
	size int64
	data []byte

	// mu is held for reading by every operation that passes the mapping's
	// addresses or file descriptor to the kernel, and for writing by Close,
	// so no advice, prefetch or read can land on an address range or
	// descriptor number the process has since reused for something else.
	mu     sync.RWMutex
	closed atomic.Bool

	sys mappingSys
}

// MapOption changes how Map maps a file.
type MapOption func(*mapConfig)

type mapConfig struct {
	populate bool
	lock     bool
}

// MapPopulate makes Map read the whole file into the page cache and fill
// the page tables before returning (MAP_POPULATE on Linux, touching every
// page on other Unix systems), so later accesses never wait for the disk.
// Map then takes as long as reading the file. It has no effect on the
// portable fallback, which reads the file anyway.
func MapPopulate() MapOption {
	return func(c *mapConfig) { c.populate = true }
}

// MapLock locks the mapped pages in RAM (mlock), so the kernel can never
// evict model weights under memory pressure. Map fails if the pages cannot
// be locked, typically because the file is larger than RLIMIT_MEMLOCK
// allows (see ulimit -l) and the process lacks CAP_IPC_LOCK. Locking reads
// the whole file, like MapPopulate.
func MapLock() MapOption {
	return func(c *mapConfig) { c.lock = true }
}

// Path returns the path the mapping was opened with.
func (m *Mapping) Path() string { return m.path }

// Size returns the length of the file in bytes.
func (m *Mapping) Size() int64 { return m.size }

// Close unmaps the file (or, in the portable fallback, drops its heap
// copy) and closes it. It waits for operations in progress on the mapping
// (advice, prefetch, reads through ReaderAt) to finish. Closing twice is
// harmless: the second call returns nil.
func (m *Mapping) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Load() {
		return nil
	}
	m.closed.Store(true)
	return m.release()
}

// ReaderAt returns an io.ReaderAt over the file's bytes, for parsers that
// want one. Reads after Close fail with ErrClosed. It is safe for
// concurrent use.
func (m *Mapping) ReaderAt() io.ReaderAt { return mappingReader{m} }

type mappingReader struct{ m *Mapping }

func (r mappingReader) ReadAt(p []byte, off int64) (int, error) {
	m := r.m
	if off < 0 {
		return 0, fmt.Errorf("mem: read %s at negative offset %d", m.path, off)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed.Load() {
		return 0, fmt.Errorf("mem: read %s: %w", m.path, ErrClosed)
	}
	if off >= m.size {
		return 0, io.EOF
	}
	n, err := m.readAt(p, off)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// checkRange validates [off, off+length) against the mapping.
func (m *Mapping) checkRange(op string, off, length int64) error {
	if off < 0 || length < 0 || off > m.size || length > m.size-off {
		return fmt.Errorf("mem: %s %s: range [%d, %d+%d) outside file of %d bytes", op, m.path, off, off, length, m.size)
	}
	return nil
}

// pageSpan rounds [off, off+length) outward to whole pages. The mapping
// starts on a page boundary and its last page is mapped in full, so the
// result never leaves the mapping even though end may exceed size.
func pageSpan(off, length, pageSize int64) (start, end int64) {
	start = off &^ (pageSize - 1)
	end = (off + length + pageSize - 1) &^ (pageSize - 1)
	return start, end
}

// Advice tells the kernel how a range of a Mapping will be used.
type Advice int

// Advice values, mapped to madvise(2) on Linux. On other systems Advise
// accepts them and does nothing.
const (
	// Normal restores the default readahead behaviour.
	Normal Advice = iota
	// Sequential asks for aggressive readahead and early reclaim behind
	// the reader: right for streaming weights layer by layer.
	Sequential
	// Random disables readahead: right when only scattered rows are read,
	// such as token embeddings.
	Random
	// WillNeed starts reading the range into the page cache
	// asynchronously.
	WillNeed
	// DontNeed unmaps the range from this process: resident set size drops
	// at once, the page cache keeps the data and the next access maps it
	// again without changing the bytes.
	DontNeed
	// Cold marks the pages as first in line for reclaim while keeping them
	// (MADV_COLD, Linux 5.4). Older kernels get DontNeed instead.
	Cold
	// PageOut asks the kernel to reclaim the pages now (MADV_PAGEOUT,
	// Linux 5.4); a later access reads them back from the file. Older
	// kernels get DontNeed instead.
	PageOut
)

var adviceNames = [...]string{"Normal", "Sequential", "Random", "WillNeed", "DontNeed", "Cold", "PageOut"}

// String returns the name of the advice, such as "WillNeed".
func (a Advice) String() string { return enum.Name(a, adviceNames[:], "Advice") }

func (a Advice) valid() bool { return a >= Normal && a <= PageOut }

var pageSize = int64(os.Getpagesize())
