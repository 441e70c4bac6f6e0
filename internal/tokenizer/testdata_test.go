package tokenizer

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// testdataDir returns the shared test data directory: $LLM_TESTDATA, or
// ../shared/testdata next to the repository root. A relative LLM_TESTDATA
// is taken relative to the repository root. When the directory is missing
// the test is skipped, or fails if LLM_REQUIRE_TESTDATA=1.
func testdataDir(t testing.TB) string {
	t.Helper()
	root := repoRoot(t)
	dir := os.Getenv("LLM_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "shared", "testdata")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if _, err := os.Stat(dir); err != nil {
		missingTestdata(t, "test data directory "+dir+" not found (set LLM_TESTDATA)")
	}
	return dir
}

// testdataFile returns dir/rel, skipping the test when it is missing.
func testdataFile(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(testdataDir(t), rel)
	if _, err := os.Stat(p); err != nil {
		missingTestdata(t, "test data file "+p+" not found")
	}
	return p
}

func missingTestdata(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("LLM_REQUIRE_TESTDATA") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

var (
	tokCacheMu sync.Mutex
	tokCache   = map[string]*Tokenizer{}
)

// cachedTokenizer loads the tokenizer of a GGUF file once per test binary.
func cachedTokenizer(t testing.TB, path string) *Tokenizer {
	t.Helper()
	tokCacheMu.Lock()
	defer tokCacheMu.Unlock()
	if tok, ok := tokCache[path]; ok {
		return tok
	}
	tok, err := loadTokenizer(t, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tokCache[path] = tok
	return tok
}
