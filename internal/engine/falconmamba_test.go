package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
)

// Falcon-Mamba's files carry Falcon's tokenizer (a BPE of 65024 tokens,
// tokenizer.ggml.pre "falcon", as llama.cpp's ggml-vocab-falcon.gguf
// holds it): TinyMamba with that vocabulary's tokenizer keys in place of
// its own loads, and tokenizes llama.cpp's test-tokenizer-0 inputs for
// that vocabulary to its outputs.
func TestFalconMambaTokenizer(t *testing.T) {
	vocabPath := testutil.Testdata(t, "vocab/ggml-vocab-falcon.gguf")
	voc, err := gguf.ReadFile(vocabPath)
	if err != nil {
		t.Fatal(err)
	}
	if pre, _ := voc.String("tokenizer.ggml.pre"); pre != "falcon" {
		t.Fatalf("%s: pre-tokenizer %q, want falcon", vocabPath, pre)
	}
	spec := testutil.TinyMamba()
	spec.Vocab = 65024
	var buf bytes.Buffer
	if err := testutil.WriteModel(&buf, spec); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	f, err := gguf.Read(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		if !strings.HasPrefix(kv.Key, "tokenizer.") {
			w.AddKV(kv.Key, kv.Value)
		}
	}
	for _, kv := range voc.KV {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			w.AddKV(kv.Key, kv.Value)
		}
	}
	for _, ti := range f.Tensors {
		if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, file[ti.Offset:ti.Offset+ti.Size]); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "falcon-mamba.gguf")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(out); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	e, err := Load(context.Background(), path, Options{Request: memplan.Request{Threads: 1, Batch: 16, Limit: 1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cases := testutil.VocabCases(t, vocabPath)
	if len(cases) < 40 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		if got := e.Tok.Encode(c.Input, false); !slices.Equal(got, c.Want) {
			t.Errorf("%q: %v, want %v", c.Input, got, c.Want)
		}
	}
}
