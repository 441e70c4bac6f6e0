package model

import (
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// TestExpertsOneMatchesEach: a decode step runs a token's experts in a few
// dispatches (expertsOne) and computes the bits that one expert at a time
// does, for every mixture-of-experts architecture, with
// gpt-oss's biases, a shared expert, more experts a token than one
// dispatch takes, and quantized weights.
func TestExpertsOneMatchesEach(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	many := testutil.TinyQwen3MoE()
	many.Arch, many.Experts, many.ExpertsUsed = "qwen3moe", 24, 10 // two dispatches of gate-and-up pairs
	for _, spec := range []testutil.ModelSpec{testutil.TinyQwen3MoE(), many, testutil.TinyGraniteMoE(), testutil.TinyGptOss(),
		testutil.TinyLFM2MoE(), testutil.TinyDeepSeek2(), testutil.TinyGraniteHybridMoE()} {
		for _, wt := range []quant.Type{quant.F32, quant.Q8_0} {
			spec.WeightType = wt
			t.Run(spec.Arch+"/"+wt.String(), func(t *testing.T) {
				m, _, _ := loadSpec(t, spec)
				if m.ExpertsUsed < 2 {
					t.Fatalf("%d experts a token", m.ExpertsUsed)
				}
				toks := prompt(12)
				st, each := newState(t, m, pool, 1, 32), newState(t, m, pool, 1, 32)
				each.moe.each = true
				out, want := make([]float32, m.Vocab), make([]float32, m.Vocab)
				for i, tok := range toks {
					if err := st.Forward([]int32{tok}, i, out); err != nil {
						t.Fatal(err)
					}
					if err := each.Forward([]int32{tok}, i, want); err != nil {
						t.Fatal(err)
					}
					for j := range out {
						if out[j] != want[j] {
							t.Fatalf("position %d, token %d: logit %d is %v, one expert at a time %v (off by %g)", i, tok, j, out[j], want[j], out[j]-want[j])
						}
					}
				}
			})
		}
	}
}
