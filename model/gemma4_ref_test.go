package model

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
)

// gemma4Perturb are changes to Gemma 4's graph, for the reference to show
// that the comparison sees each step Gemma 4 adds to Gemma 3's; each is
// named by its tag (mustMoveEach).
type gemma4Perturb struct {
	NoFactors  bool `perturb:"no rope_freqs factors"`       // the global layers rotate without rope_freqs' factors
	SqrtScale  bool `perturb:"scores scaled by 1/sqrt(d)"`  // 1/sqrt(head size), not 1
	VAfterK    bool `perturb:"values from normalised keys"` // a layer without attn_v takes its keys normalised and rotated as values
	NoOutScale bool `perturb:"no layer output scale"`       // layer_output_scale ignored
	NoPerLayer bool `perturb:"no per-layer input"`
	SwaBase    bool `perturb:"windowed layers with the global base"` // the windowed layers rotate with the global layers' base
}

// gemma4Hidden is every token's output of the final norm for Gemma 4,
// written from llama.cpp's src/models/gemma4.cpp in float64: the
// embedding scaled by sqrt(Embd); the per-layer inputs as Gemma 3n's; in
// each layer the attention norm, Q (and K and V, or K as V when the layer
// has no attn_v) at the layer's own head size and KV heads, per-head Q
// and K norms, V normalised per head without weight, NEOX RoPE (windowed
// layers rope.dimension_count_swa dims with rope.freq_base_swa, global
// ones with each pair's angle divided by rope_freqs), unscaled scores, a
// layer from KVFrom on reading the keys and values of layer KVFrom-1 if
// global, KVFrom-2 if windowed; attn_output normalised and added; the
// feed-forward (GeGLU at the layer's width, or with experts
// gemma4Experts) normalised and added; the
// per-layer input's term (inp_gate, GELU, times the layer's per-layer
// input, proj, post_norm) added; the sum times layer_output_scale; the
// output norm at the end.
func (r *refDecoder) gemma4Hidden(tokens []int32) [][]float64 {
	c, pt := r.c, r.gemma4
	E, n, A, NL, H := c.Embd, len(tokens), c.PerLayerEmbd, c.Layers, c.Heads
	eps := float64(c.RMSEps)
	add := func(a, b []float64) {
		for i := range a {
			a[i] += b[i]
		}
	}
	emb := r.tensor("token_embd.weight")
	factors := r.tensor("rope_freqs.weight")
	// The RoPE bases and rotated dims from the file itself, not the
	// Config, so that a misread key shows.
	key := func(k string) float64 {
		if v, ok := r.f.Float("gemma4." + k); ok {
			return v
		}
		v, ok := r.f.Uint("gemma4." + k)
		if !ok {
			r.t.Fatalf("gemma4.%s missing", k)
		}
		return float64(v)
	}
	baseFull, baseSWA := key("rope.freq_base"), key("rope.freq_base_swa")
	dimsFull, dimsSWA := int(key("rope.dimension_count")), int(key("rope.dimension_count_swa"))
	x := make([][]float64, n)
	pin := make([][]float64, n)
	for t, tok := range tokens {
		x[t] = make([]float64, E)
		for i := range E {
			x[t][i] = emb[int(tok)*E+i] * float64(c.EmbedScale)
		}
		if A == 0 {
			continue
		}
		ple, pnorm := r.tensor("per_layer_token_embd.weight"), r.tensor("per_layer_proj_norm.weight")
		proj := linear(r.tensor("per_layer_model_proj.weight"), nil, x[t])
		pin[t] = make([]float64, NL*A)
		for l := range NL {
			for i := range A {
				proj[l*A+i] /= math.Sqrt(float64(E))
			}
			pn := rmsNorm64(proj[l*A:(l+1)*A], pnorm, eps)
			for i := range A {
				pin[t][l*A+i] = (ple[int(tok)*NL*A+l*A+i]*math.Sqrt(float64(A)) + pn[i]) / math.Sqrt(2)
			}
		}
	}
	rope := func(v []float64, heads, d, dims, pos int, base float64, f []float64) {
		for h := range heads {
			hv := v[h*d : (h+1)*d]
			for i := range dims / 2 {
				th := float64(pos) * math.Pow(base, -2*float64(i)/float64(dims))
				if f != nil {
					th /= f[i]
				}
				a, b := hv[i], hv[i+dims/2]
				hv[i], hv[i+dims/2] = a*math.Cos(th)-b*math.Sin(th), a*math.Sin(th)+b*math.Cos(th)
			}
		}
	}
	ks, vs := make([][][]float64, NL), make([][][]float64, NL)
	for il := range NL {
		p := func(s string) []float64 { return r.tensor(fmt.Sprintf("blk.%d.%s", il, s)) }
		has := func(s string) bool { _, ok := r.f.Tensor(fmt.Sprintf("blk.%d.%s", il, s)); return ok }
		d, hkv := c.LayerHeadDim(il), c.LayerHeadsKV(il)
		windowed := c.WindowedLayer(il)
		base, dims, f := baseFull, dimsFull, factors
		if windowed {
			base, dims, f = baseSWA, dimsSWA, nil
			if pt.SwaBase {
				base = baseFull
			}
		}
		if pt.NoFactors {
			f = nil
		}
		scale := 1.0
		if pt.SqrtScale {
			scale = 1 / math.Sqrt(float64(d))
		}
		own, src := refKVSource(c, il)
		if own {
			ks[il], vs[il] = make([][]float64, n), make([][]float64, n)
		}
		ones := make([]float64, d)
		for i := range ones {
			ones[i] = 1
		}
		qs := make([][]float64, n)
		for t := range n {
			xn := rmsNorm64(x[t], p("attn_norm.weight"), eps)
			qs[t] = linear(p("attn_q.weight"), nil, xn)
			headNorm64(qs[t], p("attn_q_norm.weight"), d, eps)
			rope(qs[t], H, d, dims, t, base, f)
			r.r16All(qs[t])
			if !own {
				continue
			}
			k := linear(p("attn_k.weight"), nil, xn)
			var v []float64
			if has("attn_v.weight") {
				v = linear(p("attn_v.weight"), nil, xn)
			} else {
				v = slices.Clone(k)
			}
			headNorm64(k, p("attn_k_norm.weight"), d, eps)
			rope(k, hkv, d, dims, t, base, f)
			if pt.VAfterK && !has("attn_v.weight") {
				v = slices.Clone(k)
			}
			headNorm64(v, ones, d, eps)
			r.r16All(k, v)
			ks[il][t], vs[il][t] = k, v
		}
		for t := range n {
			att := r.attendWindow(qs[t], ks[src], vs[src], t, il, H, d, H/hkv, scale)
			add(x[t], rmsNorm64(linear(p("attn_output.weight"), nil, att), p("post_attention_norm.weight"), eps))
			var ff []float64
			if has("ffn_gate_inp.weight") {
				ff = r.gemma4Experts(p, x[t], eps)
			} else {
				y := rmsNorm64(x[t], p("ffn_norm.weight"), eps)
				ff = r.ffn(linear(p("ffn_gate.weight"), nil, y), linear(p("ffn_up.weight"), nil, y), p("ffn_down.weight"), nil)
			}
			add(x[t], rmsNorm64(ff, p("post_ffw_norm.weight"), eps))
			if A > 0 && !pt.NoPerLayer {
				g := linear(p("inp_gate.weight"), nil, x[t])
				for i := range g {
					g[i] = r.gelu(g[i]) * pin[t][il*A+i]
				}
				add(x[t], rmsNorm64(linear(p("proj.weight"), nil, g), p("post_norm.weight"), eps))
			}
			if has("layer_output_scale.weight") && !pt.NoOutScale {
				s := p("layer_output_scale.weight")[0]
				for i := range x[t] {
					x[t][i] *= s
				}
			}
		}
	}
	h := make([][]float64, n)
	for t := range n {
		h[t] = rmsNorm64(x[t], r.tensor("output_norm.weight"), eps)
	}
	return h
}

// Gemma 4 against the reference written from llama.cpp's gemma4 graph
// (F32 weights): the prompt in one pass, in chunks of 4 and 3, and token
// by token, within 1e-3 (5.4e-4 measured) — longer than the window of 4,
// through windowed layers of heads of 32 and global ones of 64 with one
// KV head and no attn_v, and the two layers that read the caches of
// layers 1 and 2. Each step Gemma 4 adds moves the reference by more than
// 0.1 (1.1 to 7.1 measured): rope_freqs' factors, the unscaled scores,
// the keys as values before their norm, the layer output scale, the
// per-layer input, the windowed layers' own RoPE base.
func TestGemma4MatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyGemma4())
	if m.HeadDimSWA != 32 || m.HeadDimFull != 64 || m.HeadDimK != 64 || m.HeadsKV != 2 || m.KVFrom != 3 || m.KVLayers() != 3 ||
		m.KVSource(3) != 1 || m.KVSource(4) != 2 || !slices.Equal(m.LayerKVHeads, []int{2, 2, 1, 2, 1}) || m.KQScale != 1 ||
		m.Blocks[2].Wv != nil || m.Blocks[0].Wv == nil || m.Blocks[4].Gate.Rows != 256 || m.Blocks[0].Gate.Rows != 128 {
		t.Fatalf("config: head sizes %d/%d (cache %d), KV heads %d %v, KV from %d (%d layers), scale %g",
			m.HeadDimSWA, m.HeadDimFull, m.HeadDimK, m.HeadsKV, m.LayerKVHeads, m.KVFrom, m.KVLayers(), m.KQScale)
	}
	ref, want := refInChunks(t, m, pool, f, data, 1e-3)
	o := StateOptions{Batch: 8, Cache: kv.F16, Cells: 64}
	st := mustState(t, m, pool, o)
	// Each cache layer holds its own heads, unpadded: layers 0 and 1
	// windowed, two KV heads of 32; layer 2 global, one of 64. F16 keys
	// and values of 64 cells, a windowed layer's ring 4 + 8 − 1 (window and
	// batch).
	kc := st.Cache().Config()
	geo := []kv.Geometry{{KVHeads: 2, HeadDimK: 32, HeadDimV: 32}, {KVHeads: 2, HeadDimK: 32, HeadDimV: 32}, {KVHeads: 1, HeadDimK: 64, HeadDimV: 64}}
	if kc.Layers != 3 || !slices.Equal(kc.Geometry, geo) || !slices.Equal(kc.Windows, []int{4, 4, 0}) {
		t.Errorf("KV cache of %d layers, geometries %v, windows %v", kc.Layers, kc.Geometry, kc.Windows)
	}
	if got, want := st.Cache().Bytes(), int64(2*(2*11*2*32)+64*2*64)*2; got != want {
		t.Errorf("KV cache of %d bytes, want %d (each layer at its own heads)", got, want)
	}
	mustMoveEach(t, ref, want, 0.1, func(p gemma4Perturb) refDecoder { return refDecoder{gemma4: p} })
}

// A context shift re-rotates Gemma 4's cached keys with their layer's
// RoPE, at the layer's own head size: a global layer (rope_freqs'
// factors, 64 dims) and a windowed one (32), each a one-layer model,
// shifted, continue as a fresh
// state fed the kept tokens does, within 5e-3 (9e-4 and 1.5e-3
// measured; rotating the global layer's keys as the windowed layer's
// moves them by 0.38, the windowed layer's as the global one's by 3.3).
func TestGemma4ShiftMatchesFresh(t *testing.T) {
	for _, swa := range []bool{false, true} {
		spec := testutil.TinyGemma4()
		spec.Layers, spec.SWALayers, spec.SharedKV, spec.PerLayerEmbd, spec.SlidingWindow = 1, []bool{swa}, 0, 0, 32
		pool, m, _, _ := loadF32(t, spec)
		toks := prompt(21)
		const keep, drop = 3, 10
		o := StateOptions{Batch: 32, Cache: kv.F16, Cells: 64}
		shifted, fresh := mustState(t, m, pool, o), mustState(t, m, pool, o)
		got, want := make([]float32, m.Vocab), make([]float32, m.Vocab)
		for i, tk := range toks[:20] {
			if err := shifted.Forward([]int32{tk}, i, got); err != nil {
				t.Fatal(err)
			}
		}
		if err := shifted.Shift(keep, drop); err != nil {
			t.Fatal(err)
		}
		if err := shifted.Forward(toks[20:], 20-drop, got); err != nil {
			t.Fatal(err)
		}
		kept := slices.Concat(toks[:keep], toks[keep+drop:])
		for i, tk := range kept {
			if err := fresh.Forward([]int32{tk}, i, want); err != nil {
				t.Fatal(err)
			}
		}
		worst := maxDiff(got, want)
		if worst > 5e-3 {
			t.Errorf("windowed %v: the shifted state's logits differ from a fresh one's by up to %g", swa, worst)
		}
		t.Logf("windowed %v: worst difference %.3g", swa, worst)
	}
}

// mustState is m.NewState(o) on pool, failing t on an error.
func mustState(t *testing.T, m *Model, pool *ops.Pool, o StateOptions) *State {
	t.Helper()
	st, err := m.NewState(ops.NewExec(pool), o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
