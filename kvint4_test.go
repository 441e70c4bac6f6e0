package llm_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// TestKVInt4SaveRestore: a saved INT4 session restores bit for bit (its
// q4_0 rows are saved as they are, still rotated), and a session of
// another KV type refuses it.
func TestKVInt4SaveRestore(t *testing.T) {
	ctx := context.Background()
	m, err := llm.Load(testutil.Testdata(t, "models/tiny-llama-q4_k_m.gguf"), llm.WithContextSize(1024), llm.WithKVType(llm.KVInt4), llm.WithThreads(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() }) // after savedSession's session closes
	src, state := savedSession(t, m, randTokens(5, 300, m.Info().VocabSize))
	dst, err := m.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := dst.Eval(ctx, []int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := dst.Restore(bytes.NewReader(state)); err != nil {
		t.Fatal(err)
	}
	sameAsSaved(t, src, dst)
	for _, kvt := range []llm.KVType{llm.KVF16, llm.KVInt8} {
		other, err := m.NewSession(llm.WithKVType(kvt))
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Restore(bytes.NewReader(state)); !errors.Is(err, llm.ErrBadState) {
			t.Errorf("restoring an INT4 session into a %v one: err = %v, want ErrBadState", kvt, err)
		}
		other.Close()
	}
}

// TestKVInt4ContextShift runs a session past its context with an INT4
// cache: the keys Shift moves are dequantized, rotated back from the
// Hadamard basis, re-rotated by RoPE, rotated and quantized again. Each
// step's logits are compared with a fresh INT4 session fed the tokens the
// shifted one holds, which quantized every key once: the mean KL must stay
// below 2e-2.
func TestKVInt4ContextShift(t *testing.T) {
	spec := testutil.TinyLlama()
	spec.Layers, spec.Embd, spec.FFN = 1, 256, 256 // head size 64: keys and values rotated
	p := filepath.Join(t.TempDir(), "m.gguf")
	if err := testutil.WriteModelFile(p, spec); err != nil {
		t.Fatal(err)
	}
	const n, keep = 48, 5
	ctx := context.Background()
	m, err := llm.Load(p, llm.WithContextSize(n), llm.WithKVType(llm.KVInt4), llm.WithThreads(2))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	vocab := m.Info().VocabSize
	ids := randTokens(7, 3*n, vocab)
	s, err := m.NewSession(llm.WithContextShift(keep))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Eval(ctx, ids[:n]); err != nil {
		t.Fatal(err)
	}
	var sum, worst float64
	steps := 0
	for i := n; i < 3*n; i++ {
		z := mustEval(t, ctx, s.Eval, ids[i:i+1])
		f, _ := m.NewSession()
		all, err := f.EvalAll(ctx, s.Tokens())
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		kl := fullKL(all[len(all)-vocab:], z)
		sum += kl
		worst = max(worst, kl)
		steps++
	}
	mean := sum / float64(steps)
	t.Logf("%d steps, %d shifts: KL vs a fresh INT4 session mean %.3g, max %.3g", steps, s.KVStats().Shifts, mean, worst)
	if s.KVStats().Shifts < 3 {
		t.Errorf("only %d shifts", s.KVStats().Shifts)
	}
	if mean > 2e-2 {
		t.Errorf("mean KL %.3g > 2e-2", mean)
	}
}
