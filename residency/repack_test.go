package residency

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/quant"
)

// repackSpec is a model whose matrices the plan may repack: Q4_0, rows of
// 256 and 512 elements.
func repackSpec(t *testing.T) testutil.ModelSpec {
	testutil.NeedX8(t)
	s := testutil.TinyLlama()
	s.Embd, s.FFN, s.WeightType = 256, 512, quant.Q4_0
	return s
}

// TestRepackReleasesMapping: a plan with Repack (under WeightsAuto, with
// room for everything) holds the Q4_0 matrices repacked and every block
// pinned (no layer source), and the whole pages of each repacked range are
// out of the page cache; the logits follow the file's layout within the
// drift of another kernel's order of float operations, and a decode step
// allocates nothing.
func TestRepackReleasesMapping(t *testing.T) {
	path := testutil.TempModel(t, repackSpec(t))
	ref := load(t, path, request(memplan.WeightsResident, 1<<40), nil)
	want := forced(t, ref)
	ref.close()
	evicted := evictFile(t, path)
	r := request(memplan.WeightsAuto, 1<<40)
	r.Repack = true
	l := load(t, path, r, nil)
	p := l.w.Plan()
	if p.Repacked == 0 || p.Repacked != rangeBytes(l.sh.Repack) {
		t.Fatalf("plan repacked %d bytes, the shape lists %d", p.Repacked, rangeBytes(l.sh.Repack))
	}
	if l.m.Source != nil || l.w.dynamic {
		t.Fatal("blocks of a repacked model may still move to disk")
	}
	got := l.w.Repacked()
	slices.SortFunc(got, func(a, b mem.Range) int { return cmp.Compare(a.Off, b.Off) })
	if !slices.Equal(got, ranges(l.sh.Repack)) {
		t.Fatalf("repacked %v, the plan lists %v", got, l.sh.Repack)
	}
	for _, m := range l.m.Repackable() {
		t.Errorf("%s left in the file's layout", m.T.Name)
	}
	if evicted {
		waitAhead(t, l)
		for _, rg := range l.w.Repacked() {
			// Release keeps the pages a range shares with its neighbours.
			lo, hi := (rg.Off+4095)&^4095, (rg.Off+rg.Len)&^4095
			if n, err := l.mp.Resident(lo, hi-lo); err != nil || n != 0 {
				t.Errorf("repacked range [%d, %d): %d bytes of its whole pages in the page cache (%v)", rg.Off, rg.Off+rg.Len, n, err)
			}
		}
	} else {
		t.Log("the file's pages could not be dropped (tmpfs?): page cache not checked")
	}
	compareForced(t, forced(t, l), want)
	checkDecodeAllocs(t, l)
}

// checkDecodeAllocs runs decode steps of a new state of l (after a prompt
// of three tokens) and fails if they allocate.
func checkDecodeAllocs(t *testing.T, l *loaded) {
	t.Helper()
	st, err := l.newState()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.eval(1, 2, 3); err != nil {
		t.Fatal(err)
	}
	pos := 3 // a recurrent state follows the positions
	if n := testing.AllocsPerRun(20, func() {
		if err := st.st.Forward([]int32{5}, pos, st.logits); err != nil {
			t.Fatal(err)
		}
		pos++
	}); n != 0 {
		t.Fatalf("a decode step of a repacked model allocates %.1f times, want 0", n)
	}
}

// forced is the logits of a prompt (a small batch), a batch past the GEMM
// threshold and single tokens, each step's input fixed.
func forced(t *testing.T, l *loaded) [][]float32 {
	t.Helper()
	s, err := l.newState()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	for _, toks := range [][]int32{{1, 40, 41, 42, 100, 7}, {9}, {200, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, {55}, {66}} {
		lg, err := s.eval(toks...)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, slices.Clone(lg))
	}
	return out
}

// compareForced checks the logits of each step against the file layout's
// within 3 % of the largest: a float rounding apart in a sum can move an
// activation's 8-bit quantization by a step, which the row layout's own
// AVX2 and AVX-512 kernels differ by too (1 % here). Argmax must agree
// wherever the reference's top two are further apart than the difference.
func compareForced(t *testing.T, got, want [][]float32) {
	t.Helper()
	for s := range want {
		var scale, worst float64
		for i := range want[s] {
			scale = max(scale, math.Abs(float64(want[s][i])))
			worst = max(worst, math.Abs(float64(got[s][i]-want[s][i])))
		}
		if worst > 0.03*scale {
			t.Errorf("step %d: logits differ by up to %g (largest %g)", s, worst, scale)
		}
		a, b := argmax(got[s]), argmax(want[s])
		second := math.Inf(-1)
		for i, v := range want[s] {
			if i != b {
				second = max(second, float64(v))
			}
		}
		if a != b && float64(want[s][b])-second > 2*worst {
			t.Errorf("step %d: argmax %d repacked, %d in the file's layout", s, a, b)
		}
	}
}

// TestRepackOnlyResident: streaming plans and requests without Repack
// keep the file's layout.
func TestRepackOnlyResident(t *testing.T) {
	path := testutil.TempModel(t, repackSpec(t))
	for _, c := range []struct {
		w      memplan.WeightsMode
		repack bool
	}{{memplan.WeightsStreaming, true}, {memplan.WeightsResident, false}} {
		r := request(c.w, 1<<40)
		r.Repack = c.repack
		l := load(t, path, r, nil)
		if n := l.w.Plan().Repacked; n != 0 || len(l.w.Repacked()) != 0 {
			t.Errorf("%v, repack %v: %d bytes repacked", c.w, c.repack, n)
		}
		for _, m := range l.m.Repackable() {
			if m.X8() {
				t.Errorf("%v, repack %v: %s in the X8 layout", c.w, c.repack, m.T.Name)
			}
		}
		l.close()
	}
}

func rangeBytes(rs []memplan.RepackRange) int64 {
	var n int64
	for _, r := range rs {
		n += r.Len
	}
	return n
}

// ranges is the file ranges of rs.
func ranges(rs []memplan.RepackRange) []mem.Range {
	out := make([]mem.Range, len(rs))
	for i, r := range rs {
		out[i] = r.Range
	}
	return out
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// TestRepackLFM2: lfm2's in_proj and out_proj are repacked with the other
// block matrices, and the logits follow the file's layout as llama's do;
// granitehybrid's ssm_in and ssm_out too, qwen35's attn_qkv, attn_gate
// and ssm_out, qwen3next's ssm_ba and (older files) ssm_in,
// nemotron_h's ssm_in, ssm_out, ffn_up and ffn_down, and kimi-linear's
// KDA projections and low-rank pairs.
func TestRepackLFM2(t *testing.T) {
	testutil.NeedX8(t)
	for _, s := range []testutil.ModelSpec{testutil.TinyLFM2(), testutil.TinyGraniteHybrid(), testutil.TinyQwen35(), testutil.TinyQwen3Next(), testutil.TinyQwen3NextSSMIn(), testutil.TinyNemotronH(),
		testutil.TinyKimiLinear()} {
		t.Run(s.Variant(), func(t *testing.T) { repackHybrid(t, s) })
	}
}

// loadRepacked writes the model s describes, and loads it repacked (a plan
// with Repack and room for everything), returning it with the forced
// logits of the file's layout to compare its own with.
func loadRepacked(t *testing.T, s testutil.ModelSpec) (*loaded, [][]float32) {
	t.Helper()
	path := testutil.TempModel(t, s)
	ref := load(t, path, request(memplan.WeightsResident, 1<<40), nil)
	want := forced(t, ref)
	ref.close()
	r := request(memplan.WeightsAuto, 1<<40)
	r.Repack = true
	return load(t, path, r, nil), want
}

func repackHybrid(t *testing.T, s testutil.ModelSpec) {
	s.Embd, s.FFN, s.WeightType, s.TiedOutput = 256, 512, quant.Q4_0, false
	l, want := loadRepacked(t, s)
	defer l.close()
	in := l.m.Blocks[0].ConvIn
	if l.m.KDA {
		in = l.m.Blocks[0].Wq // kimi-linear's layer takes attn_q, attn_k and attn_v
	}
	if in == nil || !in.X8() || !l.m.Blocks[0].ConvOut.X8() {
		t.Fatal("the conv layer's in_proj and out_proj are not repacked")
	}
	for _, m := range l.m.Repackable() {
		t.Errorf("%s left in the file's layout", m.T.Name)
	}
	compareForced(t, forced(t, l), want)
}

// TestRepackExperts: a resident mixture-of-experts model holds its expert
// tensors in the X8 layout too, every expert multiplying its own slice,
// the plan counting them; the logits follow the file's layout, and a
// decode step allocates nothing. gpt-oss in the MXFP4_MOE mix (MXFP4
// experts, Q8_0 the rest) at a width of three blocks, as its 2880 is 90;
// Gemma 4's fused gate and up, each expert's two bands.
func TestRepackExperts(t *testing.T) {
	testutil.NeedX8(t)
	gptOss := testutil.TinyGptOss()
	gptOss.ExpertType = quant.MXFP4
	for _, s := range []testutil.ModelSpec{testutil.TinyQwen3MoE(), testutil.TinyGraniteMoE(), testutil.TinyLFM2MoE(), testutil.TinyDeepSeek2(), gptOss, testutil.TinyGemma4MoE(), testutil.TinyNemotronHMoE()} {
		t.Run(s.Arch, func(t *testing.T) {
			s.Embd, s.ExpertFFN, s.WeightType, s.TiedOutput = 256, 64, quant.Q4_0, false
			if s.ExpertType == quant.MXFP4 {
				s.Embd, s.WeightType = 96, quant.Q8_0
				if _, ok := quant.X8(quant.MXFP4, s.Embd); !ok {
					t.Skip("no MXFP4 X8 kernels on this CPU (AVX-512 VNNI only)")
				}
			}
			if s.Arch == "granitemoe" {
				s.FFN = s.ExpertFFN // llama.cpp sizes its experts by feed_forward_length
			}
			l, want := loadRepacked(t, s)
			defer l.close()
			if p := l.w.Plan(); p.Repacked != rangeBytes(l.sh.Repack) {
				t.Fatalf("plan repacked %d bytes, the shape lists %d", p.Repacked, rangeBytes(l.sh.Repack))
			}
			experts := 0
			for il := range l.m.Blocks {
				for e, x := range l.m.Blocks[il].Experts {
					for k, w := range []*ops.Matrix{x.Gate, x.Up, x.Down} {
						if w == nil {
							continue // a gate-less expert's gate (nemotron_h_moe)
						}
						if !w.X8() {
							t.Errorf("block %d expert %d matrix %d left in the file's layout", il, e, k)
						}
						experts++
					}
				}
			}
			if experts == 0 {
				t.Fatal("no experts")
			}
			for _, m := range l.m.Repackable() {
				t.Errorf("%s left in the file's layout", m.T.Name)
			}
			compareForced(t, forced(t, l), want)
			checkDecodeAllocs(t, l)
		})
	}
}
