package mem

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A file larger than a 32-bit address space can hold must be refused with
// an error that says so, not wrap its size to a small int.
func TestMapLargerThanAddressSpace(t *testing.T) {
	if strconv.IntSize != 32 {
		t.Skip("needs a 32-bit target (GOARCH=386 runs here)")
	}
	path := filepath.Join(t.TempDir(), "big.gguf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: takes no disk space.
	if err := f.Truncate(3 << 30); err != nil {
		f.Close()
		t.Skipf("cannot make a sparse 3 GiB file here: %v", err)
	}
	f.Close()
	m, err := Map(path)
	if err == nil {
		m.Close()
		t.Fatal("Map of a 3 GiB file on a 32-bit target succeeded")
	}
	t.Log(err)
}
