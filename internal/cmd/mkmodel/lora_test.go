package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// TestLoRA: -lora's adapter of a miniature shape (one fused attn_qkv and
// one of separate projections) loads with its model and moves its
// logits, the byte count reported being the file's.
func TestLoRA(t *testing.T) {
	for _, name := range []string{"qwen3-8b", "phi-4-mini"} {
		mini := miniature(mustShape(t, name))
		m, err := newModel(mini, mustType(t, "f16"), 7)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		path, adapter := filepath.Join(dir, "m.gguf"), filepath.Join(dir, "a.gguf")
		if _, err := writeFile(path, m); err != nil {
			t.Fatal(err)
		}
		n, err := create(adapter, func(w io.Writer) (int64, error) { return m.writeLoRA(w, 4, 1) })
		if err != nil {
			t.Fatal(err)
		}
		if f := testutil.ReadHeader(t, adapter); f.Size != n || len(f.Tensors) == 0 {
			t.Errorf("%s: %d bytes reported, the file %d; %d tensors", name, n, f.Size, len(f.Tensors))
		}
		logits := func(opts ...llm.Option) []float32 {
			md, err := llm.Load(path, append(opts, llm.WithThreads(1), llm.WithContextSize(32))...)
			if err != nil {
				t.Fatal(err)
			}
			defer md.Close()
			s, err := md.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			out, err := s.EvalAll(context.Background(), []int32{1, 2, 3})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		base, with := logits(), logits(llm.WithLoRA(adapter, 1))
		if testutil.FirstDiff(base, with) < 0 {
			t.Errorf("%s: the adapter leaves the logits as they were", name)
		}
	}
}
