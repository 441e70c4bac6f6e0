package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// GLM-4.5 (glm4moe: TinyGLM4MoE with its Q/K norms, TinyGLM4MoEAir
// without) and Ling 2.0 (bailingmoe2: TinyBailingMoE2) against the
// float64 reference written from llama.cpp's glm4moe and bailingmoe2
// graphs — partial NEOX RoPE, a dense layer 0, sigmoid routing chosen
// with the selection bias (Ling's within its best 2 of 4 groups),
// weighted by the sigmoids renormalised and scaled, the shared expert
// added, the NextN block not run — in one pass, in chunks of 4 and token
// by token, within 5e-3: 4.6e-6, 1.1e-4 and 4.1e-6 measured on these
// seeds (8.6e-4, 1.5e-3 and 1.8e-3 with LLM_CPU=avx2; 4.5e-6, 1.5e-3
// and 1.8e-3 with -tags purego); on others (53, 63, 65 for glm4moe; 61, 64 for bailingmoe2) an
// attention weight whose float32 value lands on the other side of an F16
// rounding midpoint from the float64 one moves them by up to 5.1e-3 from
// that token on, as for the other architectures. Each ingredient left out (the shared expert,
// the selection bias, the Q/K norms, the attention biases, the group
// limit, the renormalisation, the scale, sigmoid gating, NEOX pairs, the
// partial rotation) or the NextN block run as a layer moves the
// reference by more than 1e-2.
func TestGLM4MoEMatchesReference(t *testing.T) {
	const tol = 5e-3
	for _, spec := range []testutil.ModelSpec{testutil.TinyGLM4MoE(), testutil.TinyGLM4MoEAir(), testutil.TinyBailingMoE2()} {
		t.Run(fmt.Sprintf("%s/seed%d", spec.Arch, spec.Seed), func(t *testing.T) {
			pool, m, f, data := loadF32(t, spec)
			c := &m.Config
			if c.Layers != 3 || c.NextN != 1 || len(m.Blocks) != 3 || c.DenseLead != 1 || c.Experts != 8 || c.ExpertsUsed != 2 ||
				c.ExpertGating != GatingSigmoid || !c.ExpertNorm || c.ExpertScale != 2.5 || !c.RopeNeox || c.RopeDim != c.HeadDimK/2 ||
				m.Blocks[1].ExpProbsB == nil || m.Blocks[0].Router != nil || m.Blocks[2].ShDown == nil ||
				(m.Blocks[1].QNorm != nil) != (spec.Routing.QKNorm || spec.Arch == "bailingmoe2") {
				t.Fatalf("config: %+v", m.Config)
			}
			toks := prompt(13)
			ref, want := checkedRefWithin(t, m, pool, f, data, toks, tol)
			mustMove(t, "no shared expert", ref(refDecoder{noShared: true}), want, 1e-2)
			drops := [][]string{{"exp_probs_b.bias"}}
			if m.Blocks[1].QNorm != nil {
				drops = append(drops, []string{"attn_q_norm.weight", "attn_k_norm.weight"})
			}
			if spec.Arch == "glm4moe" {
				drops = append(drops, []string{"attn_q.bias", "attn_k.bias", "attn_v.bias"})
			}
			for _, w := range drops {
				mustMove(t, "without "+w[0], ref(refDecoder{without: w}), want, 1e-2)
			}
			perturbs := []string{"softmax gating", "no selection bias", "no renormalisation", "no expert scale", "NORM pairs", "every dim rotated", "NextN block run"}
			if c.ExpertGroups > 1 {
				perturbs = append(perturbs, "no group limit")
			}
			mustMoveAll(t, m, f, data, toks, want, 1e-2, perturbs...)
		})
	}
}

// A NextN block is never read: with every byte of its tensors made 0xFF
// (NaN in F32; in Q8_0 a NaN scale) the logits are the same bits, and
// SkippedRanges covers exactly the block's tensors.
func TestNextNBlocksNotRead(t *testing.T) {
	pool := ops.NewPool(2)
	t.Cleanup(pool.Close)
	for _, spec := range []testutil.ModelSpec{testutil.TinyGLM4MoE(), testutil.TinyBailingMoE2()} {
		for _, wt := range []quant.Type{quant.F32, quant.Q8_0} {
			spec.WeightType = wt
			t.Run(spec.Arch+"/"+wt.String(), func(t *testing.T) {
				m, f, data := loadSpec(t, spec)
				toks := prompt(9)
				want := forwardAll(t, m, pool, toks, len(toks), 16)
				var n, bytes int64
				for _, ti := range f.Tensors {
					if strings.HasPrefix(ti.Name, "blk.3.") {
						n, bytes = n+1, bytes+ti.Size
					}
				}
				rs := SkippedRanges(f, &m.Config)
				var covered int64
				spoilt := slices.Clone(data)
				for _, r := range rs {
					covered += r.Len
					for i := range r.Len {
						spoilt[r.Off+i] = 0xFF
					}
				}
				if n < 10 || int64(len(rs)) != n || covered != bytes {
					t.Fatalf("%d ranges of %d bytes, want the NextN block's %d tensors of %d", len(rs), covered, n, bytes)
				}
				g, _ := testutil.Parse(t, spoilt, nil)
				ms, err := New(g, spoilt)
				if err != nil {
					t.Fatal(err)
				}
				if got := forwardAll(t, ms, pool, toks, len(toks), 16); !slices.Equal(got, want) {
					t.Error("logits moved with the NextN block spoilt")
				}
			})
		}
	}
}
