//go:build linux && !memfallback

package mem

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rangeFile reads a file by ranges: through an O_DIRECT descriptor when
// the filesystem accepts one, else through a normal descriptor whose pages
// are dropped from the page cache after each read.
type rangeFile struct {
	path     string
	direct   *os.File // nil when O_DIRECT was refused
	buffered *os.File
	// noDirect is set when a direct read failed with EINVAL (a filesystem
	// that accepts the flag at open but not the reads); later reads go
	// through buffered.
	noDirect atomic.Bool
}

// tryDirect is cleared by tests to exercise the buffered path.
var tryDirect = true

func openRangeFile(path string) (*rangeFile, error) {
	b, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	f := &rangeFile{path: path, buffered: b}
	// Readahead would cache bytes past each read that dropCache, which
	// covers only the bytes read, then leaves behind.
	unix.Fadvise(int(b.Fd()), 0, 0, unix.FADV_RANDOM)
	if !tryDirect {
		return f, nil
	}
	if d, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0); err == nil {
		f.direct = d
	}
	return f, nil
}

func (f *rangeFile) size() (int64, error) { return statSize(f.buffered) }

func (f *rangeFile) isDirect() bool { return f.direct != nil && !f.noDirect.Load() }

// readAt reads len(b) bytes at off; b and off are 4096-aligned, as
// O_DIRECT requires.
func (f *rangeFile) readAt(b []byte, off int64) (int, error) {
	if f.isDirect() {
		n, err := f.direct.ReadAt(b, off)
		if !errors.Is(err, unix.EINVAL) {
			return n, err
		}
		f.noDirect.Store(true)
	}
	n, err := f.buffered.ReadAt(b, off)
	// The whole aligned window, not just n: the kernel keeps a partial
	// page at the end of a DONTNEED range, which the file's last page is.
	f.dropCache(off, int64(len(b)))
	return n, err
}

// dropCache evicts [off, off+n) of the file from the page cache. Pages
// mapped by a process or dirty are kept by the kernel; failure is harmless,
// so it is not reported.
func (f *rangeFile) dropCache(off, n int64) {
	if n > 0 {
		unix.Fadvise(int(f.buffered.Fd()), off, n, unix.FADV_DONTNEED)
	}
}

func (f *rangeFile) close() error {
	var err error
	if f.direct != nil {
		err = f.direct.Close()
	}
	return errors.Join(err, f.buffered.Close())
}

// discardPages gives a slot buffer's pages back to the system; the
// mapping stays, and the next write faults in zeroed pages.
func discardPages(b []byte) error { return unix.Madvise(b, unix.MADV_DONTNEED) }

// hugePage is the size of a transparent huge page on the CPUs this runs
// on (x86-64 and arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// allocSlots maps n anonymous buffers of size bytes each: page-aligned as
// O_DIRECT requires, outside the Go heap so the garbage collector neither
// scans them nor counts them toward its next goal.
//
// The mapping starts on a huge-page boundary and asks for transparent huge
// pages (MADV_HUGEPAGE; kernels set to "madvise" give them only then). An
// O_DIRECT read becomes one disk request per physically contiguous run of
// its buffer, up to the device's segment limit: on 4 KiB pages that the
// allocator handed out scattered (after the page cache has churned) a 4 MiB
// read went as four requests of 1 MiB and the same bytes took 40–50 % longer
// to arrive (an 8B model streaming 12 blocks: 38,000 requests of 1.0 MiB
// against 11,300 of 3.5 MiB, measured with /proc/diskstats). The advice
// fails harmlessly where THP is off.
func allocSlots(n, size int) ([][]byte, func() error, error) {
	if size <= 0 {
		return nil, nil, fmt.Errorf("slot size %d", size)
	}
	total := n * size
	pad := 0
	if total >= hugePage {
		pad = hugePage
	}
	all, err := unix.Mmap(-1, 0, total+pad, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, nil, err
	}
	buf := all
	if pad > 0 {
		// mmap returns page-aligned addresses; move to the next huge page.
		// The pad stays untouched, so it costs address space, not memory.
		off := (hugePage - int(uintptr(unsafe.Pointer(&all[0]))%hugePage)) % hugePage
		buf = all[off : off+total]
		unix.Madvise(buf, unix.MADV_HUGEPAGE)
	}
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = buf[i*size : (i+1)*size : (i+1)*size]
	}
	var once sync.Once
	var errUnmap error
	return bufs, func() error {
		once.Do(func() { errUnmap = unix.Munmap(all) })
		return errUnmap
	}, nil
}
