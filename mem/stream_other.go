//go:build !linux || memfallback

package mem

import (
	"fmt"
	"os"
	"unsafe"
)

// streamFile reads a streamed file through the page cache: O_DIRECT and
// fadvise are Linux facilities.
type streamFile struct {
	f *os.File
}

func openStreamFile(path string) (*streamFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &streamFile{f: f}, nil
}

func (f *streamFile) size() (int64, error) { return statSize(f.f) }

func (f *streamFile) isDirect() bool { return false }

func (f *streamFile) readAt(b []byte, off int64) (int, error) { return f.f.ReadAt(b, off) }

func (f *streamFile) dropCache(off, n int64) {}

func (f *streamFile) close() error { return f.f.Close() }

// allocSlots allocates n buffers of size bytes on the Go heap, each
// starting on a streamAlign boundary like the Linux version's.
func allocSlots(n, size int) ([][]byte, func() error, error) {
	if size <= 0 {
		return nil, nil, fmt.Errorf("slot size %d", size)
	}
	bufs := make([][]byte, n)
	for i := range bufs {
		raw := make([]byte, size+streamAlign)
		skip := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw))) & (streamAlign - 1))
		bufs[i] = raw[skip : skip+size : skip+size]
	}
	return bufs, func() error { return nil }, nil
}
