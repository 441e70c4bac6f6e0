package llm_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// fullKL is KL(p‖q) between the softmax distributions of two logit vectors.
func fullKL(ref, z []float32) float64 {
	lp, lq := logSumExp(ref), logSumExp(z)
	var kl float64
	for i := range ref {
		lpi := float64(ref[i]) - lp
		kl += math.Exp(lpi) * (lpi - (float64(z[i]) - lq))
	}
	return kl
}

// margin is the gap between the two largest logits.
func margin(z []float32) float64 {
	a, b := math.Inf(-1), math.Inf(-1)
	for _, v := range z {
		switch x := float64(v); {
		case x > a:
			a, b = x, a
		case x > b:
			b = x
		}
	}
	return a - b
}

// TestContextShiftLongGeneration generates three times the context length
// with context shift on, one token at a time and through Generate.
func TestContextShiftLongGeneration(t *testing.T) {
	const n = 64
	m := loadStories(t, llm.WithContextSize(n), llm.WithThreads(2))
	ctx := context.Background()
	s, err := m.NewSession(llm.WithContextShift(4))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids, _ := m.Tokenize("Once upon a time")
	z := mustEval(t, ctx, s.Eval, ids)
	first := s.Tokens()[:4]
	for i := 0; i < 3*n; i++ {
		if z, err = s.Eval(ctx, []int32{argmax(z)}); err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if s.Len() > n {
			t.Fatalf("token %d: session holds %d tokens, context %d", i, s.Len(), n)
		}
	}
	st := s.KVStats()
	if st.Shifts < 5 || st.Used != s.Len() {
		t.Errorf("after %d tokens: %+v", 3*n, st)
	}
	if got := s.Tokens()[:4]; !equalIDs(got, first) {
		t.Errorf("kept tokens %v, want %v", got, first)
	}

	g, err := m.NewSession(llm.WithContextShift(0))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	count := 0
	for _, err := range g.Stream(ctx, "Once upon a time", llm.MaxTokens(3*n), llm.Temperature(1), llm.Seed(3)) {
		if err != nil {
			t.Fatalf("stream after %d tokens: %v", count, err)
		}
		count++
	}
	t.Logf("Stream gave %d tokens with %d shifts", count, g.KVStats().Shifts)

	if _, err := m.NewSession(llm.WithContextShift(-1)); !errors.Is(err, llm.ErrInvalidOption) {
		t.Errorf("WithContextShift(-1): err = %v", err)
	}
	// Keeping the whole context leaves nothing to drop: refused when the
	// context is known, not at the first shift.
	if _, err := m.NewSession(llm.WithContextShift(n)); !errors.Is(err, llm.ErrInvalidOption) || !strings.Contains(err.Error(), fmt.Sprint(n)) {
		t.Errorf("NewSession with keep = context: err = %v, want ErrInvalidOption naming the context", err)
	}
	if _, err := m.NewSession(llm.WithContextSize(32), llm.WithContextShift(40)); !errors.Is(err, llm.ErrInvalidOption) {
		t.Errorf("NewSession with keep > context: err = %v, want ErrInvalidOption", err)
	}
	path := testutil.Testdata(t, "models/stories260K-f32.gguf")
	if _, err := llm.Load(path, llm.WithContextSize(n), llm.WithContextShift(n)); !errors.Is(err, llm.ErrInvalidOption) {
		t.Errorf("Load with keep = context: err = %v, want ErrInvalidOption", err)
	}
	// One less is the most there is, and it works: a long prompt goes in
	// a token at a time.
	k, err := m.NewSession(llm.WithContextShift(n - 1))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if _, err := k.Eval(ctx, randTokens(4, 2*n, m.Info().VocabSize)); err != nil {
		t.Fatalf("keep = context-1, a prompt of twice the context: %v", err)
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestContextShiftMatchesFresh compares the logits after a context shift
// with a fresh session that evaluates the kept tokens from scratch. In a
// one-layer model a token's key and value depend only on the token and its
// position, so the shifted cache must equal the fresh one up to the
// rounding of the re-rotated keys (F16 or INT8): this checks the row moves
// and the RoPE shift (NORM pairs for llama, NEOX pairs and biases for
// qwen2). The tolerance is the parity kind: a last-bit difference in the
// attention output can flip a rounding when the activations are quantized
// to Q8 for the next matmul, which is what most of the measured KL is
// (about 2e-4 with F16, 6e-4 with INT8, for the llama model; an
// off-by-one rotation gives 2.5e-2). A sliding-window layer (gemma2)
// keeps its ring instead, so it must match a session that never shifted.
// stories260K (five layers) is only logged: its deeper layers
// legitimately remember the dropped tokens, so no fresh evaluation can
// reproduce it.
func TestContextShiftMatchesFresh(t *testing.T) {
	type modelCase struct {
		name     string
		path     string
		vsPlain  bool // compare with an unshifted session instead of a fresh one
		tol      float64
		informal bool
	}
	dir := t.TempDir()
	spec := func(s testutil.ModelSpec) string {
		s.Layers, s.Context = 1, 4096
		p := filepath.Join(dir, s.Arch+".gguf")
		if err := testutil.WriteModelFile(p, s); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gemma := testutil.TinyGemma2()
	gemma.SlidingWindow = 8
	g3n := testutil.TinyGemma3n() // one global layer, owning its cache
	g3n.SWALayers, g3n.SharedKV = []bool{false}, 0
	// DeepSeek-V2's latent cache: the shift rotates each cached key's
	// rotated part (its first RopeDim) alone; the one layer has experts.
	ds := testutil.TinyDeepSeek2()
	ds.DenseLead = 0
	vl := testutil.TinyQwen3VL()
	vl.Deepstack = 0 // below the one layer
	cases := []modelCase{
		{"llama-1-layer", spec(testutil.TinyLlama()), false, 2e-3, false},
		{"gemma3n-1-layer", spec(g3n), false, 2e-3, false},
		{"deepseek2-1-layer", spec(ds), false, 2e-3, false},
		{"qwen2-1-layer", spec(testutil.TinyQwen2()), false, 2e-3, false},
		// GLM-4: half of each head rotated in NORM pairs, the shift
		// re-rotating that half alone.
		{"glm4-1-layer", spec(testutil.TinyGLM4()), false, 2e-3, false},
		// ChatGLM: the same half in NORM pairs, Q, K and V fused.
		{"chatglm-1-layer", spec(testutil.TinyChatGLM()), false, 2e-3, false},
		// Multimodal RoPE through the sessions' shift (these files'
		// logits are too flat here to tell a shift that turns the extra
		// section's pairs: model.TestQwenVLShiftMatchesFresh does).
		{"qwen3vl-1-layer", spec(vl), false, 2e-3, false},
		{"qwen2vl-1-layer", spec(testutil.TinyQwen2VL()), false, 2e-3, false},
		// GLM-4.5: half of each head rotated in NEOX pairs, Q/K norms,
		// the NextN block after the layer never read.
		{"glm4moe-1-layer", spec(testutil.TinyGLM4MoE()), false, 2e-3, false},
		// Nemotron: half of each head rotated in NEOX pairs, the shift
		// re-rotating that half alone.
		{"nemotron-1-layer", spec(testutil.TinyNemotron()), false, 2e-3, false},
		// StableLM: a quarter of each head rotated in NEOX pairs.
		{"stablelm-1-layer", spec(testutil.TinyStableLM()), false, 2e-3, false},
		// BLOOM and MPT: ALiBi, no rotation; the shift renumbers the
		// kept keys, and each query's bias depends on its distance to
		// them alone, as llama.cpp's shifted cells' positions give it.
		{"bloom-1-layer", spec(testutil.TinyBloom()), false, 2e-3, false},
		{"mpt-1-layer", spec(testutil.TinyMPTClamp()), false, 2e-3, false},
		{"gemma2-1-layer-window", spec(gemma), true, 2e-3, false},
		{"stories260K", testutil.Testdata(t, "models/stories260K-f32.gguf"), false, 0, true},
	}
	const n, keep = 48, 5
	ctx := context.Background()
	for _, c := range cases {
		for _, kvt := range []llm.KVType{llm.KVF16, llm.KVInt8} {
			if raceEnabled && kvt == llm.KVInt8 {
				// The shift's threads are the same for both types; under
				// the race detector F16 alone (every other run does both).
				continue
			}
			t.Run(c.name+"/"+kvt.String(), func(t *testing.T) {
				m := load(t, c.path, llm.WithContextSize(n), llm.WithKVType(kvt), llm.WithThreads(2))
				vocab := m.Info().VocabSize
				ids := randTokens(7, 3*n, vocab)
				s, _ := m.NewSession(llm.WithContextShift(keep))
				defer s.Close()
				plain, _ := m.NewSession(llm.WithContextSize(4 * n))
				defer plain.Close()
				if _, err := s.Eval(ctx, ids[:n]); err != nil {
					t.Fatal(err)
				}
				if _, err := plain.Eval(ctx, ids[:n]); err != nil {
					t.Fatal(err)
				}
				var sumKL, maxKL, plainKL float64
				steps := 0
				for i := n; i < 3*n; i++ {
					z := mustEval(t, ctx, s.Eval, ids[i:i+1])
					var ref []float32
					if c.informal {
						zp := mustEval(t, ctx, plain.Eval, ids[i:i+1])
						plainKL += fullKL(zp, z)
					}
					if c.vsPlain {
						ref = mustEval(t, ctx, plain.Eval, ids[i:i+1])
					} else {
						f, _ := m.NewSession()
						all, err := f.EvalAll(ctx, s.Tokens())
						f.Close()
						if err != nil {
							t.Fatal(err)
						}
						ref = all[len(all)-vocab:]
					}
					kl := fullKL(ref, z)
					sumKL += kl
					maxKL = max(maxKL, kl)
					steps++
					if !c.informal && margin(ref) >= 0.5 && argmax(z) != argmax(ref) {
						t.Errorf("step %d: top-1 %d, reference %d (margin %.2f)", i, argmax(z), argmax(ref), margin(ref))
					}
				}
				mean := sumKL / float64(steps)
				t.Logf("%d steps, %d shifts: KL vs reference mean %.3g, max %.3g", steps, s.KVStats().Shifts, mean, maxKL)
				if c.informal {
					t.Logf("KL vs a session that never dropped a token: mean %.3g", plainKL/float64(steps))
				}
				if s.KVStats().Shifts < 3 {
					t.Errorf("only %d shifts", s.KVStats().Shifts)
				}
				if !c.informal && mean > c.tol {
					t.Errorf("mean KL %.3g > %.3g", mean, c.tol)
				}
			})
		}
	}
}
