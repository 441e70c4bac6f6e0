package model

import (
	"math"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
)

// mropePerturb holds perturbations of multimodal RoPE for the reference,
// each named by its tag (mustMoveEach): the extra section's pairs turned
// by the token's position (what plain NEOX RoPE does, and Hugging Face's
// Qwen3-VL for the pairs no axis claims), the height section at position
// 0, and each section's pairs numbered from 0 for their frequency instead
// of by their index in the head.
type mropePerturb struct {
	ExtraTurns   bool `perturb:"extra pairs turned"`
	HeightAtZero bool `perturb:"height at position 0"`
	SectionFreqs bool `perturb:"frequencies per section"`
}

// ropeHeads rotates the first RopeDim of c (the layer's: a windowed
// laguna layer's own) of each of heads heads (hd wide) of v for the
// token at pos: refRopeHeads, or multimodal RoPE when the
// Config has sections (the rest of each head passing through, as ggml's
// rope_multi copies it).
func (r *refDecoder) ropeHeads(c *Config, v []float64, heads, hd, pos int, base float64, yarn bool) {
	if c.RopeSections == [4]int{} {
		factors := r.global("rope_freqs.weight")
		if factors == nil {
			// LongRoPE's short factors: the sessions the reference is
			// compared with are no longer than the original context.
			factors = r.global("rope_factors_short.weight")
		}
		refRopeHeads(v, heads, hd, c.RopeDim, pos, base, c, yarn, factors)
		return
	}
	if yarn || !c.RopeNeox {
		r.t.Fatalf("the multimodal RoPE reference takes NEOX pairs and no YaRN")
	}
	for h := range heads {
		r.mropeHead(v[h*hd:h*hd+c.RopeDim], pos, base)
	}
}

// mropeHead rotates the first RopeDim dimensions x of one head (d of
// them) for a text token at pos, as ggml's
// ggml_rope_multi does with the positions llama.cpp's graph input gives
// text (temporal, height and width pos, extra 0; llama_graph_input_pos):
// pair i (dims i and i+d/2) turns by its section's position times
// base^(-2i/d), scaled by 1/RopeScale, with the cosine and sine times
// the attention factor.
func (r *refDecoder) mropeHead(x []float64, pos int, base float64) {
	c := r.c
	d := len(x)
	s := c.RopeSections
	sum := s[0] + s[1] + s[2] + s[3]
	mag := float64(c.RopeMScale())
	for i := range d / 2 {
		sector := i % sum
		axis, first := 3, 0 // the section and its first sector
		if c.RopeInterleaved {
			// Sector j cycles temporal, height, width while j is below
			// three times the axis's count; past those it is the extra's.
			if a := sector % 3; sector < 3*s[a] {
				axis = a
			}
		} else {
			for a, end := 0, 0; a < 4; a++ {
				if end += s[a]; sector < end {
					axis, first = a, end-s[a]
					break
				}
			}
		}
		p := float64(pos)
		switch {
		case axis == 3 && !r.mrope.ExtraTurns, axis == 1 && r.mrope.HeightAtZero:
			p = 0
		}
		f := float64(i)
		if r.mrope.SectionFreqs {
			f = float64(sector - first)
			if c.RopeInterleaved {
				f = float64(sector / 3)
			}
		}
		th := p * math.Pow(base, -2*f/float64(d)) / float64(c.RopeScale)
		a, b := x[i], x[i+d/2]
		x[i] = (a*math.Cos(th) - b*math.Sin(th)) * mag
		x[i+d/2] = (a*math.Sin(th) + b*math.Cos(th)) * mag
	}
}

// The text models of Qwen's vision-language releases against the float64
// reference written from llama.cpp's qwen3vl, qwen3vlmoe and qwen2vl
// graphs and ggml's multimodal RoPE: qwen3vl (interleaved sections
// [8, 4, 4, 0] over 16 pairs: pairs 13 and 14 unturned), the same with
// sections summing to half the pairs (repeating: [4, 2, 2, 0]),
// qwen3vlmoe, and qwen2vl (contiguous [2, 3, 2, 1]: pair 7 unturned) —
// in one pass, in chunks of 4 and token by token, within 5e-3. Turning
// the extra section's pairs (plain NEOX RoPE), the height section at
// position 0, frequencies numbered within each section, contiguous
// sections for interleaved ones (or the reverse) and no sections at all
// each move the reference by more than 1.5e-2, so the comparison pins the
// rotation of every pair. The file's n_deepstack_layers changes nothing:
// without the key the logits are the same to the bit.
func TestQwenVLMatchesReference(t *testing.T) {
	// Before the first attention weight whose float32 value lands on the
	// other side of an F16 rounding midpoint from the float64 one, the
	// logits agree within 1e-5; Qwen3's per-head Q/K norms make each such
	// flip move them by up to 3e-3 from there on (the repeated sections'
	// file: 2.7e-3 with -tags purego, 2.9e-3 with LLM_CPU=avx2, 5e-5
	// with AVX-512; qwen3vlmoe on seeds 49 to 55: 3e-6 to 8.6e-3, the
	// first 7 tokens within 3.3e-6 on each).
	const qwenVLTol = 5e-3
	half := testutil.TinyQwen3VL()
	half.RopeSections = []int32{4, 2, 2, 0}
	for _, tc := range []struct {
		name string
		spec testutil.ModelSpec
	}{
		{"qwen3vl", testutil.TinyQwen3VL()},
		{"qwen3vl/repeated", half},
		{"qwen3vlmoe", testutil.TinyQwen3VLMoE()},
		{"qwen2vl", testutil.TinyQwen2VL()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, m, f, data := loadF32(t, tc.spec)
			var want [4]int
			for i, x := range tc.spec.RopeSections {
				want[i] = int(x)
			}
			if m.RopeSections != want || m.RopeInterleaved != (m.Arch != "qwen2vl") || !m.RopeNeox || m.RopeDim != m.HeadDimK {
				t.Fatalf("config: sections %v, interleaved %v, NEOX %v, rope %d of %d", m.RopeSections, m.RopeInterleaved, m.RopeNeox, m.RopeDim, m.HeadDimK)
			}
			toks := prompt(13)
			ref, wantLogits := checkedRefWithin(t, m, pool, f, data, toks, qwenVLTol)
			mustMoveEach(t, ref, wantLogits, 3*qwenVLTol, func(p mropePerturb) refDecoder { return refDecoder{mrope: p} })
			mustMoveAll(t, m, f, data, toks, wantLogits, 3*qwenVLTol, "other section layout", "no sections")
			if tc.spec.Deepstack > 0 {
				plain := tc.spec
				plain.Deepstack = 0
				_, pm, _, _ := loadF32(t, plain)
				got, none := forwardAll(t, m, pool, toks, 4, 32), forwardAll(t, pm, pool, toks, 4, 32)
				if i, ok := sameLogitBits(got, none); !ok {
					t.Errorf("logit %d: %v with %d DeepStack layers, %v without the key", i, got[i], tc.spec.Deepstack, none[i])
				}
			}
		})
	}
}

// A context shift turns the cached keys as multimodal RoPE turns a text:
// the pairs of the extra section stay where they are. A one-layer qwen3vl
// and qwen2vl, shifted, continue as a fresh state fed the kept tokens
// does, within 5e-3 (the re-rotated keys rounded to F16 again: 2.4e-3 and
// 1.5e-3 measured); a shift that turns every pair, as plain NEOX RoPE
// would, moves them by more than 0.1 (1.3 and 1.9).
func TestQwenVLShiftMatchesFresh(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyQwen3VL(), testutil.TinyQwen2VL()} {
		t.Run(spec.Arch, func(t *testing.T) {
			spec.Layers, spec.Deepstack = 1, 0
			pool, m, _, _ := loadF32(t, spec)
			toks := prompt(21)
			const keep, drop = 3, 10
			kept := slices.Concat(toks[:keep], toks[keep+drop:])
			want := shiftedLogits(t, m, pool, kept, 0, 0, nil)
			got := shiftedLogits(t, m, pool, toks, keep, drop, nil)
			neox := shiftedLogits(t, m, pool, toks, keep, drop, func(st *State) { st.rope.Sections = [4]int{} })
			worst, moved := maxDiff(got, want), maxDiff(neox, want)
			if worst > 5e-3 {
				t.Errorf("the shifted state's logits differ from a fresh one's by up to %g", worst)
			}
			if moved < 0.1 {
				t.Errorf("a shift turning every pair moves the logits by only %g: the test cannot see it", moved)
			}
			t.Logf("worst difference %.3g; turning every pair: %.3g", worst, moved)
		})
	}
}

// shiftedLogits feeds toks but the last to a fresh state one at a time,
// shifts its cache (keep, drop; none when drop is 0) with shift (when not
// nil) changing the state for the shift alone, and returns the logits of
// the last token.
func shiftedLogits(t *testing.T, m *Model, pool *ops.Pool, toks []int32, keep, drop int, shift func(*State)) []float32 {
	t.Helper()
	st := mustState(t, m, pool, StateOptions{Batch: 32, Cache: kv.F16, Cells: 64})
	out := make([]float32, m.Vocab)
	n := len(toks) - 1
	for i, tk := range toks[:n] {
		if err := st.Forward([]int32{tk}, i, out); err != nil {
			t.Fatal(err)
		}
	}
	if drop > 0 {
		saved := st.rope
		if shift != nil {
			shift(st)
		}
		if err := st.Shift(keep, drop); err != nil {
			t.Fatal(err)
		}
		st.rope = saved
	}
	if err := st.Forward(toks[n:], n-drop, out); err != nil {
		t.Fatal(err)
	}
	return out
}
