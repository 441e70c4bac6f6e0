//go:build !unix || memfallback

package mem

import (
	"fmt"
	"io"
	"runtime"
	"sync"

	"golang.org/x/exp/mmap"
)

// mappingSys is the portable fallback: golang.org/x/exp/mmap maps the file
// where it can (Windows) and reads it otherwise, but only offers an
// io.ReaderAt, so Bytes has to copy.
type mappingSys struct {
	r    *mmap.ReaderAt
	once sync.Once
}

// Map opens the whole file at path for reading.
//
// This build has no shared memory mapping: ReaderAt reads through
// golang.org/x/exp/mmap, and the first call to Bytes reads the entire file
// into a heap buffer, which then counts as anonymous memory (Mapped reports
// false). MapLock is not supported and makes Map fail; MapPopulate has no
// effect.
func Map(path string, opts ...MapOption) (*Mapping, error) {
	var cfg mapConfig
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.lock {
		return nil, fmt.Errorf("mem: lock %s in memory on %s: %w", path, runtime.GOOS, ErrUnsupported)
	}
	// Checked first: opening a FIFO for reading would wait for a writer.
	f, _, err := OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("mem: map: %w", err)
	}
	f.Close()
	r, err := mmap.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mem: map: %w", err)
	}
	if r.Len() == 0 {
		r.Close()
		return nil, fmt.Errorf("mem: map %s: %w", path, ErrEmptyFile)
	}
	if int64(r.Len()) > maxHeapCopy {
		r.Close()
		return nil, fmt.Errorf("mem: map %s: %d bytes are more than this %s/%s build can read into its heap (at most %d)",
			path, r.Len(), runtime.GOOS, runtime.GOARCH, int64(maxHeapCopy))
	}
	return &Mapping{path: path, size: int64(r.Len()), sys: mappingSys{r: r}}, nil
}

// Bytes returns the file's contents. In this fallback build the first call
// reads the whole file into a heap buffer; it returns nil if that read
// fails or the mapping is closed. The slice must not be written.
func (m *Mapping) Bytes() []byte {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed.Load() {
		return nil
	}
	m.sys.once.Do(func() {
		buf := make([]byte, m.size)
		if n, err := m.sys.r.ReadAt(buf, 0); n == len(buf) && (err == nil || err == io.EOF) {
			m.data = buf
		}
	})
	return m.data
}

// Mapped reports whether Bytes is a view of the page cache. It is false in
// this fallback build: Bytes is a heap copy, anonymous memory that must be
// planned for as such.
func (m *Mapping) Mapped() bool { return false }

func (m *Mapping) readAt(p []byte, off int64) (int, error) {
	n, err := m.sys.r.ReadAt(p, off)
	if err == io.EOF {
		err = nil // the caller reports short reads as io.EOF itself
	}
	return n, err
}

// release drops the heap copy, if any, and closes the file; Close calls
// it once, holding m.mu.
func (m *Mapping) release() error {
	m.data = nil
	if err := m.sys.r.Close(); err != nil {
		return fmt.Errorf("mem: close %s: %w", m.path, err)
	}
	return nil
}
