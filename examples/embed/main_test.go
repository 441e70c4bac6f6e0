package main

import (
	"bytes"
	"encoding/json"
	"fmt"
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

	// -query on a model that is not a reranker fails, naming the cause.
	if _, err := embed("", "-query", "q", "a"); err == nil || !strings.Contains(err.Error(), "not a reranker") {
		t.Errorf("-query on an embedder: %v", err)
	}

	for _, args := range [][]string{{"-pooling", "max", "x"}, {"-dims", "65", "x"}, {}} {
		if _, err := embed("", args...); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// TestRerankCommand: -query ranks the texts by a reranker's scores, most
// relevant first, one line each.
func TestRerankCommand(t *testing.T) {
	spec := testutil.TinyBert()
	spec.Pooling, spec.RankLabels = 4, []string{"relevance"}
	path := filepath.Join(t.TempDir(), "r.gguf")
	if err := testutil.WriteModelFile(path, spec); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if err := run([]string{"-m", path, "-query", "the quick fox", "the dog", "a fox", "brown"}, strings.NewReader(""), &out, &errs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "3 texts by relevance to") {
		t.Fatalf("output:\n%s", out.String())
	}
	prev := math.Inf(1)
	for _, l := range lines[1:] {
		var score float64
		if _, err := fmt.Sscan(strings.Fields(l)[0], &score); err != nil || score > prev {
			t.Errorf("line %q: not in descending order of score", l)
		}
		prev = score
	}
}
