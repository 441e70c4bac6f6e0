package mem

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// pattern returns n bytes that differ from page to page and within pages,
// so a misplaced offset shows up as wrong data.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>12)
	}
	return b
}

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.bin")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMapContents(t *testing.T) {
	for _, n := range []int{1, 100, int(pageSize), int(pageSize) + 1, 3*int(pageSize) + 123} {
		want := pattern(n)
		m, err := Map(writeFile(t, want))
		if err != nil {
			t.Fatalf("Map(%d bytes): %v", n, err)
		}
		if m.Size() != int64(n) {
			t.Errorf("Size = %d, want %d", m.Size(), n)
		}
		if !bytes.Equal(m.Bytes(), want) {
			t.Errorf("Bytes of %d-byte file differ from the file", n)
		}
		got, err := io.ReadAll(io.NewSectionReader(m.ReaderAt(), 0, m.Size()))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("ReaderAt of %d-byte file: err %v, equal %v", n, err, bytes.Equal(got, want))
		}
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func TestMapReaderAt(t *testing.T) {
	data := pattern(1000)
	m, err := Map(writeFile(t, data))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := m.ReaderAt()
	tests := []struct {
		off     int64
		n       int
		wantN   int
		wantErr error
	}{
		{0, 10, 10, nil},
		{990, 10, 10, nil},
		{995, 10, 5, io.EOF},
		{1000, 1, 0, io.EOF},
		{5000, 1, 0, io.EOF},
		{500, 0, 0, nil},
	}
	for _, tc := range tests {
		p := make([]byte, tc.n)
		n, err := r.ReadAt(p, tc.off)
		if n != tc.wantN || err != tc.wantErr {
			t.Errorf("ReadAt(%d bytes at %d) = %d, %v; want %d, %v", tc.n, tc.off, n, err, tc.wantN, tc.wantErr)
			continue
		}
		if n > 0 && !bytes.Equal(p[:n], data[tc.off:tc.off+int64(n)]) {
			t.Errorf("ReadAt(%d bytes at %d) returned wrong bytes", tc.n, tc.off)
		}
	}
	if _, err := r.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("ReadAt at -1 succeeded")
	}
}

func TestMapErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Map(empty); !errors.Is(err, ErrEmptyFile) {
		t.Errorf("Map(empty file) error %v, want ErrEmptyFile", err)
	}
	if _, err := Map(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Map(missing file) error %v, want ErrNotExist", err)
	}
	if _, err := Map(dir); err == nil {
		t.Error("Map(directory) succeeded")
	}
}

func TestMapClose(t *testing.T) {
	m, err := Map(writeFile(t, pattern(5000)))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if b := m.Bytes(); b != nil {
		t.Errorf("Bytes after Close has %d bytes, want nil", len(b))
	}
	if _, err := m.ReaderAt().ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrClosed) {
		t.Errorf("ReadAt after Close: %v, want ErrClosed", err)
	}
	if err := m.Advise(0, 10, WillNeed); !errors.Is(err, ErrClosed) {
		t.Errorf("Advise after Close: %v, want ErrClosed", err)
	}
	if err := m.Prefetch(0, 10); !errors.Is(err, ErrClosed) {
		t.Errorf("Prefetch after Close: %v, want ErrClosed", err)
	}
	if m.Size() != 5000 {
		t.Errorf("Size after Close = %d, want 5000", m.Size())
	}
}

// TestMapConcurrentClose races reads, advice and prefetches against Close;
// run with -race. None may crash or touch unmapped memory.
func TestMapConcurrentClose(t *testing.T) {
	m, err := Map(writeFile(t, pattern(1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			p := make([]byte, 4096)
			for i := range 200 {
				off := int64((g*200 + i) * 997 % (1 << 20))
				m.ReaderAt().ReadAt(p, off)
				m.Advise(off, 4096, WillNeed)
				m.Prefetch(0, 1<<20)
			}
		})
	}
	m.Close()
	wg.Wait()
}

func TestMapOptions(t *testing.T) {
	data := pattern(3*int(pageSize) + 5)
	m, err := Map(writeFile(t, data), MapPopulate())
	if err != nil {
		t.Fatalf("Map(MapPopulate): %v", err)
	}
	if !bytes.Equal(m.Bytes(), data) {
		t.Error("MapPopulate: Bytes differ from the file")
	}
	m.Close()

	m, err = Map(writeFile(t, data), MapLock())
	if err != nil {
		// Locking is optional for the process: an unprivileged run with a
		// small RLIMIT_MEMLOCK, or the fallback build, refuses it.
		if errors.Is(err, ErrUnsupported) || strings.Contains(err.Error(), "RLIMIT_MEMLOCK") {
			t.Skipf("MapLock: %v", err)
		}
		t.Fatalf("Map(MapLock): %v", err)
	}
	if !bytes.Equal(m.Bytes(), data) {
		t.Error("MapLock: Bytes differ from the file")
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close of locked mapping: %v", err)
	}
}

func TestAdviseArgs(t *testing.T) {
	size := int64(2*pageSize + 10)
	data := pattern(int(size))
	m, err := Map(writeFile(t, data))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for a := Normal; a <= PageOut; a++ {
		for _, r := range [][2]int64{{0, size}, {1, 1}, {size - 1, 1}, {pageSize - 1, 2}, {size, 0}} {
			if err := m.Advise(r[0], r[1], a); err != nil {
				t.Errorf("Advise(%d, %d, %v): %v", r[0], r[1], a, err)
			}
		}
		// Advice never changes the bytes.
		if !bytes.Equal(m.Bytes(), data) {
			t.Fatalf("bytes changed after Advise %v", a)
		}
	}
	for _, r := range [][2]int64{{-1, 1}, {0, size + 1}, {size, 1}, {size + 1, 0}, {0, -1}, {1, 1<<63 - 1}} {
		if err := m.Advise(r[0], r[1], Normal); err == nil {
			t.Errorf("Advise(%d, %d) outside the file succeeded", r[0], r[1])
		}
		if err := m.Prefetch(r[0], r[1]); err == nil {
			t.Errorf("Prefetch(%d, %d) outside the file succeeded", r[0], r[1])
		}
		if _, err := m.Resident(r[0], r[1]); err == nil {
			t.Errorf("Resident(%d, %d) outside the file succeeded", r[0], r[1])
		}
	}
	if err := m.Advise(0, 1, Advice(99)); err == nil {
		t.Error("Advise(Advice(99)) succeeded")
	}
}

func TestAdviceString(t *testing.T) {
	tests := []struct {
		a    Advice
		want string
	}{
		{Normal, "Normal"}, {Sequential, "Sequential"}, {Random, "Random"}, {WillNeed, "WillNeed"},
		{DontNeed, "DontNeed"}, {Cold, "Cold"}, {PageOut, "PageOut"}, {Advice(-1), "Advice(-1)"}, {Advice(7), "Advice(7)"},
	}
	for _, tc := range tests {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("Advice(%d).String() = %q, want %q", int(tc.a), got, tc.want)
		}
	}
}

func TestPageSpan(t *testing.T) {
	const ps = 4096
	tests := []struct {
		off, length, start, end int64
	}{
		{0, 1, 0, 4096},
		{0, 4096, 0, 4096},
		{0, 4097, 0, 8192},
		{4095, 2, 0, 8192},
		{4096, 4096, 4096, 8192},
		{5000, 100, 4096, 8192},
		{8191, 1, 4096, 8192},
		{10000, 0, 8192, 12288},
	}
	for _, tc := range tests {
		start, end := pageSpan(tc.off, tc.length, ps)
		if start != tc.start || end != tc.end {
			t.Errorf("pageSpan(%d, %d) = [%d, %d), want [%d, %d)", tc.off, tc.length, start, end, tc.start, tc.end)
		}
	}
}
