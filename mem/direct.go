package mem

import "fmt"

// DirectAlign is the alignment DirectFile.ReadAt needs of its buffer's
// address, its length and its file offset: the O_DIRECT rules, with 4096
// covering every common logical block size.
const DirectAlign = rangeAlign

// DirectFile reads a file without filling the page cache, for readers
// other than RangeReader that load parts of a model file into their own
// buffers (an expert cache). It is the RangeReader's file: opened with
// O_DIRECT where the system allows it; otherwise (tmpfs, a filesystem
// that refuses direct reads, non-Linux systems) read normally, each read
// then dropped from the page cache on Linux (POSIX_FADV_DONTNEED). ReadAt
// is safe for concurrent use.
type DirectFile struct {
	f    *rangeFile
	path string
	size int64
}

// OpenDirect opens path for direct reads.
func OpenDirect(path string) (*DirectFile, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, fmt.Errorf("mem: open for direct reads: %w", err)
	}
	return &DirectFile{f: f, path: path, size: size}, nil
}

// Path is the file's path.
func (f *DirectFile) Path() string { return f.path }

// Size is the file's size when it was opened: the bytes a reader checks
// its ranges against.
func (f *DirectFile) Size() int64 { return f.size }

// Direct reports whether reads bypass the page cache with O_DIRECT (false
// after a filesystem refused a direct read and reads fell back).
func (f *DirectFile) Direct() bool { return f.f.isDirect() }

// ReadAt reads len(b) bytes at off. b's address, len(b) and off must be
// multiples of DirectAlign (see AlignedSpan and AllocAligned). A read
// past the end of the file returns fewer bytes and io.EOF, as
// os.File.ReadAt does.
func (f *DirectFile) ReadAt(b []byte, off int64) (int, error) { return f.f.readAt(b, off) }

// DropCache asks the kernel to drop [off, off+n) of the file from the page
// cache (bytes a parser or an earlier run left there). Failure is harmless
// and not reported.
func (f *DirectFile) DropCache(off, n int64) { f.f.dropCache(off, n) }

// Close closes the file.
func (f *DirectFile) Close() error { return f.f.close() }

// AlignedSpan is the DirectAlign-aligned window of the file that holds r:
// the bytes [start, end) to read, r beginning skip bytes into them.
func AlignedSpan(r Range) (start, end int64, skip int) {
	start = r.Off &^ (DirectAlign - 1)
	end = (r.Off + r.Len + DirectAlign - 1) &^ (DirectAlign - 1)
	return start, end, int(r.Off - start)
}

// AllocAligned allocates n buffers of size bytes each (size a multiple of
// DirectAlign), each starting on a DirectAlign boundary, as ReadAt needs.
// On Linux they are one anonymous mapping outside the Go heap (the garbage
// collector neither scans nor counts them; pages are charged when first
// written); free unmaps it, and the buffers must not be used after it.
func AllocAligned(n, size int) (bufs [][]byte, free func() error, err error) {
	if n < 1 || size <= 0 || size%DirectAlign != 0 {
		return nil, nil, fmt.Errorf("mem: %d aligned buffers of %d bytes: need n >= 1 and a positive multiple of %d", n, size, DirectAlign)
	}
	if size > int(^uint(0)>>1)/n {
		return nil, nil, fmt.Errorf("mem: %d buffers of %d bytes do not fit in the address space", n, size)
	}
	return allocSlots(n, size)
}
