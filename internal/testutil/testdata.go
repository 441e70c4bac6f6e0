package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
)

// TestdataDir is the shared test data directory: $LLM_TESTDATA, or
// ../shared/testdata next to the repository root.
func TestdataDir() string {
	if d := os.Getenv("LLM_TESTDATA"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	return filepath.Join(root, "..", "shared", "testdata")
}

// Testdata returns the path of a file in the shared test data. When it is
// missing the test is skipped, or fails if LLM_REQUIRE_TESTDATA=1 (as in CI).
func Testdata(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(TestdataDir(), rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("LLM_REQUIRE_TESTDATA") == "1" {
			t.Fatalf("test data %s missing (LLM_REQUIRE_TESTDATA=1): %v", p, err)
		}
		t.Skipf("test data %s missing; set LLM_TESTDATA to the shared testdata directory", p)
	}
	return p
}

// ReadHeader reads the header of the GGUF file at path (metadata and tensor
// descriptors, no tensor data); it fails the test when that does not work.
func ReadHeader(t testing.TB, path string) *gguf.File {
	t.Helper()
	g, err := gguf.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TempModel writes the GGUF file of s into the test's temporary directory
// and returns its path; it fails the test when that does not work.
func TempModel(t testing.TB, s ModelSpec) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "model.gguf")
	if err := WriteModelFile(p, s); err != nil {
		t.Fatal(err)
	}
	return p
}

// TempModelFile writes the GGUF file of s into a new temporary directory,
// for examples, which have no testing.TB: remove deletes the directory.
func TempModelFile(s ModelSpec) (path string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "testutil")
	if err != nil {
		return "", nil, err
	}
	remove = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "model.gguf")
	if err := WriteModelFile(path, s); err != nil {
		remove()
		return "", nil, err
	}
	return path, remove, nil
}

// ReadModel reads the GGUF file at path whole and parses it, failing the
// test when either does not work: what model.New takes.
func ReadModel(t testing.TB, path string) (*gguf.File, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	return Parse(t, data, err)
}

// Parse parses data as a GGUF file, failing the test when err (from
// getting data) is set or the parse fails; it returns the parse and data.
func Parse(t testing.TB, data []byte, err error) (*gguf.File, []byte) {
	t.Helper()
	var f *gguf.File
	if err == nil {
		f, err = gguf.Read(bytes.NewReader(data), int64(len(data)))
	}
	if err != nil {
		t.Fatal(err)
	}
	return f, data
}
