package llm_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/quant"
)

// TestRepackOnOff loads Q4_0 models of three layouts (llama; phi3's fused
// QKV and gate-up, whose halves are bands of one matrix; qwen2's tied
// output, which stays in place), and Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS, Q3_K
// and Q2_K llamas, and Q4_0, Q8_0, IQ4_NL and Q5_0 llamas whose rows are not a
// multiple of 256 (widths 96 and 160, FFN 288: blocks past the last eight,
// as gpt-oss's 2880 or Gemma 3 1B's 1152 have, every matrix repacked) and
// gpt-oss of width 96 in Q8_0 and in the MXFP4_MOE mix (MXFP4 experts,
// every other matrix Q8_0), with the default WithRepack(true) and
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
	for _, wt := range []quant.Type{quant.IQ4_XS, quant.Q3_K, quant.Q2_K, quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ1_S, quant.IQ1_M} {
		s := llama
		s.WeightType = wt
		specs = append(specs, s)
	}
	for i := range specs {
		specs[i].Embd, specs[i].FFN = 256, 512
	}
	if raceEnabled {
		// Each model is quantized and loaded twice, ten times slower
		// under the race detector: the three layouts in Q4_0, Q8_0 and
		// Q4_K exercise every path repacking runs concurrently.
		specs = specs[:5]
	}
	for _, c := range []struct {
		wt        quant.Type
		embd, ffn int
	}{{quant.Q8_0, 160, 288}, {quant.Q4_0, 96, 288}, {quant.IQ4_NL, 160, 288}, {quant.Q5_0, 160, 288}} {
		s := llama
		s.WeightType, s.Embd, s.FFN = c.wt, c.embd, c.ffn
		specs = append(specs, s)
	}
	// gpt-oss's Q8_0 attention, experts and output at a width of three
	// blocks (its 2880 is 90).
	gptOss := testutil.TinyGptOss()
	gptOss.Embd = 96
	gptOssMXFP4 := gptOss
	gptOssMXFP4.ExpertType = quant.MXFP4
	specs = append(specs, gptOss, gptOssMXFP4)
	for _, spec := range specs {
		if _, ok := quant.X8(spec.WeightType, 256); !ok {
			continue
		}
		name := fmt.Sprintf("%s/%v/%d", spec.Arch, spec.WeightType, spec.Embd)
		if spec.ExpertType != 0 {
			name = fmt.Sprintf("%s/%v+%v/%d", spec.Arch, spec.WeightType, spec.ExpertType, spec.Embd)
		}
		t.Run(name, func(t *testing.T) {
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
			if !strings.Contains(on.Info().Kernels, "x8") || strings.Contains(off.Info().Kernels, "x8") {
				t.Errorf("kernels %q repacked, %q not", on.Info().Kernels, off.Info().Kernels)
			}
			if spec.Embd%256 != 0 {
				checkRepackedAll(t, path, spec, p)
			}
			son, soff := session(t, on), session(t, off)
			ctx := context.Background()
			for i, toks := range steps {
				got := mustEval(t, ctx, son.Eval, toks)
				want := mustEval(t, ctx, soff.Eval, toks)
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

// checkRepackedAll checks that the plan p of the model at path (of spec,
// a llama or a gpt-oss) repacks every matrix of its blocks (gpt-oss's
// four attention matrices: not its router or experts) and its output,
// the file's bytes of each, into exactly as many bytes of the "repacked
// weights" component as the X8 layout takes (the file's: no padding),
// each rounded up to a direct-I/O buffer as the repack allocates it.
func checkRepackedAll(t *testing.T, path string, spec testutil.ModelSpec, p llm.MemoryPlan) {
	t.Helper()
	want := 7*spec.Layers + 1 // gpt-oss: four of attention, three of experts
	if _, ok := quant.X8(spec.ExpertType, spec.Embd); spec.ExpertType == quant.MXFP4 && !ok {
		want = 4*spec.Layers + 1 // no MXFP4 X8 kernels on this CPU: the experts keep the file's layout
	}
	sh, err := memplan.ReadShape(path)
	if err != nil {
		t.Fatal(err)
	}
	var file, anon int64
	for _, r := range sh.Repack {
		if r.X8 != r.Len {
			t.Errorf("range %+v: %d bytes in the X8 layout, the file's %d", r.Range, r.X8, r.Len)
		}
		file += r.Len
		anon += (r.X8 + mem.DirectAlign - 1) / mem.DirectAlign * mem.DirectAlign
	}
	if len(sh.Repack) != want || p.Repacked != file {
		t.Errorf("%d matrices repacked (%d bytes, the plan's %d), want %d", len(sh.Repack), file, p.Repacked, want)
	}
	for _, c := range p.Components {
		if c.Name == memplan.RepackedComponent && c.Bytes != anon {
			t.Errorf("%q %d bytes, want %d", c.Name, c.Bytes, anon)
		}
	}
}
