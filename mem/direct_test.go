package mem

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

// directTestFile writes n patterned bytes to a temporary file.
func directTestFile(t *testing.T, n int) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*13 + i>>11)
	}
	p := filepath.Join(t.TempDir(), "direct.bin")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, data
}

// Unaligned ranges read through their aligned windows into aligned
// buffers come back exactly, the file's last window short with io.EOF.
func TestDirectFileReadsAlignedSpans(t *testing.T) {
	const size = 300_001
	path, data := directTestFile(t, size)
	f, err := OpenDirect(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n := f.Size(); n != size {
		t.Fatalf("size %d; want %d", n, size)
	}
	if f.Path() != path {
		t.Errorf("path %q", f.Path())
	}
	t.Logf("direct: %v", f.Direct())
	bufs, free, err := AllocAligned(2, 64*DirectAlign)
	if err != nil {
		t.Fatal(err)
	}
	defer free()
	for i, b := range bufs {
		if len(b) != 64*DirectAlign || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%DirectAlign != 0 {
			t.Fatalf("buffer %d: %d bytes at %p, want %d aligned to %d", i, len(b), b, 64*DirectAlign, DirectAlign)
		}
	}
	for _, r := range []Range{{0, 1}, {1, 4095}, {4095, 2}, {5000, 100_000}, {8192, 4096}, {size - 10, 10}} {
		start, end, skip := AlignedSpan(r)
		if start%DirectAlign != 0 || end%DirectAlign != 0 || start > r.Off || end < r.Off+r.Len || int64(skip) != r.Off-start || end-start > r.Len+2*DirectAlign {
			t.Fatalf("range %+v: span [%d, %d) skip %d", r, start, end, skip)
		}
		b := bufs[0][:end-start]
		n, err := f.ReadAt(b, start)
		if end > size {
			if n != int(size-start) || !errors.Is(err, io.EOF) {
				t.Fatalf("range %+v: read %d, %v; want %d and EOF", r, n, err, size-start)
			}
		} else if n != len(b) || err != nil {
			t.Fatalf("range %+v: read %d, %v", r, n, err)
		}
		if !bytes.Equal(b[skip:skip+int(r.Len)], data[r.Off:r.Off+r.Len]) {
			t.Fatalf("range %+v: bytes differ", r)
		}
		f.DropCache(start, end-start)
	}
	if err := free(); err != nil {
		t.Fatal(err)
	}
}

func TestAllocAlignedRejects(t *testing.T) {
	for _, c := range []struct{ n, size int }{{0, DirectAlign}, {1, 0}, {1, 100}, {2, DirectAlign + 1}, {math.MaxInt / (1 << 20), 1 << 30}} {
		if _, _, err := AllocAligned(c.n, c.size); err == nil {
			t.Errorf("AllocAligned(%d, %d) succeeded", c.n, c.size)
		}
	}
}

func TestOpenDirectMissing(t *testing.T) {
	if _, err := OpenDirect(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err %v, want ErrNotExist", err)
	}
}
