package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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

// VocabCase is one pair of llama.cpp's test-tokenizer-0: a text and the
// ids it tokenizes to, without special tokens.
type VocabCase struct {
	Input string
	Want  []int32
}

// VocabCases reads the pairs of the vocabulary at path from path.inp and
// path.out (the shared test data's manifest, §7); it fails the test when
// they cannot be read or do not pair up.
func VocabCases(t testing.TB, path string) []VocabCase {
	t.Helper()
	inp, err := os.ReadFile(path + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(path + ".out")
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	inputs := strings.Split(string(inp), sep)
	if inputs[len(inputs)-1] != "" {
		t.Fatalf("%s.inp does not end with the separator", path)
	}
	inputs = inputs[:len(inputs)-1]
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("%d inputs but %d output lines", len(inputs), len(lines))
	}
	cases := make([]VocabCase, len(inputs))
	for i, in := range inputs {
		cases[i].Input = in
		for _, f := range strings.Fields(lines[i]) {
			id, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", path, i+1, err)
			}
			cases[i].Want = append(cases[i].Want, int32(id))
		}
	}
	return cases
}
