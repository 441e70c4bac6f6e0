package llm_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/quant"
)

// TestRepackOnOff loads Q4_0 models of three layouts (llama; phi3's fused
// QKV and gate-up, whose halves are bands of one matrix; qwen2's tied
// output, which stays in place), and Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS, Q3_K and Q2_K llamas, with the default WithRepack(true) and
// with false, and compares their logits for a prompt (a small batch), a
// batch that takes the GEMM path and single tokens, each step's input
// fixed: within 3 % of the largest logit (a rounding apart in a sum can
// move an activation's 8-bit quantization by a step, as the row layout's
// AVX2 and AVX-512 kernels differ too), argmax equal where the top two are
// further apart. A decode step of the repacked model allocates nothing.
func TestRepackOnOff(t *testing.T) {
	testutil.NeedX8(t)
	llama, phi3, qwen2 := testutil.TinyLlama(), testutil.TinyPhi3(), testutil.TinyQwen2()
	steps := [][]int32{{1, 40, 41, 42, 100, 7}, {9}, {200, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, {55}, {66}}
	llama4K, llama6K, llama8, llama5K := llama, llama, llama, llama
	llama4K.WeightType, llama6K.WeightType = quant.Q4_K, quant.Q6_K
	llama8.WeightType, llama5K.WeightType = quant.Q8_0, quant.Q5_K
	llama.WeightType, phi3.WeightType, qwen2.WeightType = quant.Q4_0, quant.Q4_0, quant.Q4_0
	ds := testutil.TinyDeepSeek2() // the experts, the shared experts and attn_q repacked
	ds.WeightType = quant.Q4_0
	specs := []testutil.ModelSpec{llama, phi3, qwen2, llama8, llama4K, llama5K, llama6K, ds}
	// The low-bit types: no GEMM, their batches take the decode kernel.
	for _, wt := range []quant.Type{quant.IQ4_XS, quant.Q3_K, quant.Q2_K} {
		s := llama
		s.WeightType = wt
		specs = append(specs, s)
	}
	if raceEnabled {
		// Each model is quantized and loaded twice, ten times slower
		// under the race detector: the three layouts in Q4_0, Q8_0 and
		// Q4_K exercise every path repacking runs concurrently.
		specs = specs[:5]
	}
	for _, spec := range specs {
		spec.Embd, spec.FFN = 256, 512
		if _, ok := quant.X8(spec.WeightType, 256); !ok {
			continue
		}
		t.Run(spec.Arch+"/"+spec.WeightType.String(), func(t *testing.T) {
			path := testutil.TempModel(t, spec)
			opts := []llm.Option{llm.WithThreads(2), llm.WithContextSize(64)}
			on := load(t, path, opts...)
			off := load(t, path, append(opts, llm.WithRepack(false))...)
			p, q := on.Plan(), off.Plan()
			if p.Repacked == 0 || q.Repacked != 0 {
				t.Fatalf("repacked %d bytes by default, %d with WithRepack(false)", p.Repacked, q.Repacked)
			}
			if !slices.ContainsFunc(p.Components, func(c memplan.Component) bool { return c.Name == memplan.RepackedComponent }) {
				t.Errorf("the plan has no %q component:\n%s", memplan.RepackedComponent, p)
			}
			// Kernels names the last matrix of each type: with experts, which
			// stay in the row layout, an expert's.
			if spec.Experts == 0 && !strings.Contains(on.Info().Kernels, "x8") || strings.Contains(off.Info().Kernels, "x8") {
				t.Errorf("kernels %q repacked, %q not", on.Info().Kernels, off.Info().Kernels)
			}
			son, soff := session(t, on), session(t, off)
			ctx := context.Background()
			for i, toks := range steps {
				got, err := son.Eval(ctx, toks)
				if err != nil {
					t.Fatal(err)
				}
				want, err := soff.Eval(ctx, toks)
				if err != nil {
					t.Fatal(err)
				}
				var scale, worst float64
				best, second := 0, -1
				for j := range want {
					scale = max(scale, math.Abs(float64(want[j])))
					worst = max(worst, math.Abs(float64(got[j]-want[j])))
					if want[j] > want[best] {
						best = j
					}
				}
				for j := range want {
					if j != best && (second < 0 || want[j] > want[second]) {
						second = j
					}
				}
				if worst > 0.03*scale {
					t.Errorf("step %d: logits differ by up to %g (largest %g)", i, worst, scale)
				}
				gotBest := slices.Index(got, slices.Max(got))
				if gotBest != best && float64(want[best]-want[second]) > 2*worst {
					t.Errorf("step %d: argmax %d repacked, %d in the file's layout", i, gotBest, best)
				}
			}
			if raceEnabled {
				return
			}
			tok := []int32{42}
			if n := testing.AllocsPerRun(20, func() {
				if _, err := son.Eval(ctx, tok); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("a decode step of the repacked model allocates %.1f times, want 0", n)
			}
		})
	}
}
