//go:build !linux || memfallback

package mem

import (
	"fmt"
	"os"
	"unsafe"
)

// rangeFile reads a file by ranges through the page cache: O_DIRECT and
// fadvise are Linux facilities.
type rangeFile struct {
	f *os.File
}

func openRangeFile(path string) (*rangeFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &rangeFile{f: f}, nil
}

func (f *rangeFile) size() (int64, error) { return statSize(f.f) }

func (f *rangeFile) isDirect() bool { return false }

func (f *rangeFile) readAt(b []byte, off int64) (int, error) { return f.f.ReadAt(b, off) }

func (f *rangeFile) dropCache(off, n int64) {}

func (f *rangeFile) close() error { return f.f.Close() }

// discardPages does nothing: the buffers are Go memory.
func discardPages(b []byte) error { return nil }

// allocSlots allocates n buffers of size bytes on the Go heap, each
// starting on a rangeAlign boundary like the Linux version's.
func allocSlots(n, size int) ([][]byte, func() error, error) {
	if size <= 0 {
		return nil, nil, fmt.Errorf("slot size %d", size)
	}
	bufs := make([][]byte, n)
	for i := range bufs {
		raw := make([]byte, size+rangeAlign)
		skip := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw))) & (rangeAlign - 1))
		bufs[i] = raw[skip : skip+size : skip+size]
	}
	return bufs, func() error { return nil }, nil
}
