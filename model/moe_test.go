package model

import (
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// TestExpertsOneMatchesEach: a decode step runs a token's experts in a few
// dispatches (expertsOne), the model's own or those of an ExpertSource
// that holds them all (HeldExperts), and computes the bits that one
// expert at a time does, for every mixture-of-experts architecture, with
// gpt-oss's biases, a shared expert, more experts a token than one
// dispatch takes, and quantized weights.
func TestExpertsOneMatchesEach(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	many := testutil.TinyQwen3MoE()
	many.Arch, many.Experts, many.ExpertsUsed = "qwen3moe", 24, 10 // two dispatches of gate-and-up pairs
	dense := func(s testutil.ModelSpec) bool { return s.Experts == 0 }
	for _, spec := range append(slices.DeleteFunc(testutil.TinyDecoders(), dense), many) {
		for _, wt := range []quant.Type{quant.F32, quant.Q8_0} {
			spec.WeightType = wt
			t.Run(spec.Arch+"/"+wt.String(), func(t *testing.T) {
				m, _, _ := loadSpec(t, spec)
				// llama4 weights its experts' inputs for one a token, the
				// one count its config takes: the bits are still checked.
				if m.ExpertsUsed < 2 && !m.ExpertInputWeighted {
					t.Fatalf("%d experts a token", m.ExpertsUsed)
				}
				toks := prompt(12)
				// The model's own experts, a source that holds them all
				// (expertsOne through it), and one that does not say so
				// (one expert at a time, as each).
				held := &countingExperts{MappedExperts: MappedExperts{M: m}, t: t, announced: map[int][]int32{}}
				sources := []ExpertSource{nil, held, oneAtATime{MappedExperts{M: m}}}
				sts := make([]*State, len(sources))
				for i := range sts {
					sts[i] = newState(t, m, pool, 1, 32)
				}
				each := newState(t, m, pool, 1, 32)
				each.moe.each = true
				outs, want := make([][]float32, len(sts)), make([]float32, m.Vocab)
				steps := make([]uint64, len(sts))
				for i, tok := range toks {
					for j, st := range sts {
						m.ExpertSource = sources[j]
						outs[j] = make([]float32, m.Vocab)
						before := st.e.Products()
						err := st.Forward([]int32{tok}, i, outs[j])
						steps[j] = st.e.Products() - before
						m.ExpertSource = nil
						if err != nil {
							t.Fatal(err)
						}
					}
					if err := each.Forward([]int32{tok}, i, want); err != nil {
						t.Fatal(err)
					}
					for j, out := range outs {
						for k := range out {
							if out[k] != want[k] {
								t.Fatalf("source %d, position %d, token %d: logit %d is %v, one expert at a time %v (off by %g)", j, i, tok, k, out[k], want[k], out[k]-want[k])
							}
						}
					}
				}
				// One expert a token (llama4) is one dispatch either way.
				if steps[1] != steps[0] || (steps[2] <= steps[0] && m.ExpertsUsed > 1) {
					t.Errorf("products a step: %d with the model's experts, %d through a source holding them all (want the same), %d through one that does not (want more)", steps[0], steps[1], steps[2])
				}
			})
		}
	}
}

// oneAtATime is an ExpertSource that does not say it holds its experts:
// a pass takes them one at a time.
type oneAtATime struct{ src MappedExperts }

func (o oneAtATime) Fetch(il int, ids []int32) { o.src.Fetch(il, ids) }
func (o oneAtATime) Expert(il, e int) *Expert  { return o.src.Expert(il, e) }
func (o oneAtATime) Release(il int)            { o.src.Release(il) }
