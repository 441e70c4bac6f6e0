package main

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	// Only the test uses internal packages.
	"github.com/lowmem/llm/internal/testutil"
)

func TestEmbedCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := testutil.WriteModelFile(path, testutil.TinyQwen3()); err != nil {
		t.Fatal(err)
	}
	embed := func(stdin string, args ...string) (string, error) {
		var out, errs bytes.Buffer
		err := run(append([]string{"-m", path}, args...), strings.NewReader(stdin), &out, &errs)
		return out.String(), err
	}

	// The similarity matrix: a row a text, 1 on the diagonal.
	out, err := embed("", "a cat", "a kitten", "tax law")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "3 texts, 64 dimensions") {
		t.Fatalf("output:\n%s", out)
	}
	for i, l := range lines[1:] {
		if f := strings.Fields(l); f[i] != "1.000" {
			t.Errorf("row %d: %q, want 1.000 at %d", i, l, i)
		}
	}

	// JSON lines, from standard input, cut to 8 dimensions, unit length.
	out, err = embed("one\ntwo\n", "-json", "-dims", "8", "-pooling", "mean")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	for _, want := range []string{"one", "two"} {
		var v struct {
			Text      string
			Embedding []float64
		}
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var ss float64
		for _, x := range v.Embedding {
			ss += x * x
		}
		if v.Text != want || len(v.Embedding) != 8 || math.Abs(ss-1) > 1e-5 {
			t.Errorf("%q: %d dimensions, squared length %v", v.Text, len(v.Embedding), ss)
		}
	}

	for _, args := range [][]string{{"-pooling", "max", "x"}, {"-dims", "65", "x"}, {}} {
		if _, err := embed("", args...); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
