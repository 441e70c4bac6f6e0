package model

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
)

// gemma3nPerturb are the changes to Gemma 3n's graph that no Config field
// names, for the reference to show that the comparison sees each; each is
// named by its tag (mustMoveEach).
type gemma3nPerturb struct {
	NoCorrect  bool `perturb:"no AltUp correction"` // the streams keep their predictions
	NoLaurel   bool `perturb:"no LAuReL"`           // the block's attention output goes on without LAuReL's sum
	NoPerLayer bool `perturb:"no per-layer input"`  // no per-layer input added to the streams
}

// gemma3nHidden is every token's output of the final norm for Gemma 3n,
// written from llama.cpp's src/models/gemma3n-iswa.cpp in float64: the
// per-layer inputs (the token's per_layer_token_embd row scaled by
// sqrt(PerLayerEmbd), plus per_layer_model_proj of the scaled embedding
// scaled by 1/sqrt(Embd) and normalised per layer, the sum by 1/sqrt(2));
// AltUp's streams (stream 0 the embedding, the others its altup_proj
// images at its magnitude); in each layer the prediction of every stream
// (itself plus the mix of all streams by the coefficients
// altup_predict_coef makes of the router's tanh of the normalised active
// stream over Embd), the active prediction through the attention norm,
// LAuReL (laurel_r·laurel_l, normalised, plus its input), attention
// (per-head Q and K norms, V normalised per head without weight, NEOX
// RoPE with the windowed layers' base, unscaled scores; a layer from
// KVFrom on reading the keys and values of layer KVFrom-1 if global,
// KVFrom-2 if windowed), its output normalised plus the active
// prediction, that plus LAuReL over sqrt(2), the feed-forward (the gate
// cut at mean + SparseStd·std in the first SparseLayers layers, GeGLU),
// normalised and added; the correction (each prediction plus the
// innovation times 1 + the coefficient altup_correct_coef makes of the
// output's modalities); the corrected active stream times
// altup_correct_scale through inp_gate, GELU, times the layer's per-layer
// input, proj and post_norm, added to every stream but the first; at the
// end the extra streams through altup_unembd_proj at the active stream's
// magnitude, averaged with stream 0, and the output norm.
func (r *refDecoder) gemma3nHidden(tokens []int32) [][]float64 {
	c, pt := r.c, r.gemma3n
	E, n, hd, group, K, A, NL := c.Embd, len(tokens), c.HeadDimK, c.Heads/c.HeadsKV, c.AltUp, c.PerLayerEmbd, c.Layers
	eps := float64(c.RMSEps)
	act := c.AltUpActive
	scaled := func(v []float64, s float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = x * s
		}
		return out
	}
	add := func(a, b []float64) []float64 {
		out := make([]float64, len(a))
		for i := range a {
			out[i] = a[i] + b[i]
		}
		return out
	}
	norm2 := func(v []float64) float64 {
		var s float64
		for _, x := range v {
			s += x * x
		}
		return math.Sqrt(s)
	}
	emb, ple := r.tensor("token_embd.weight"), r.tensor("per_layer_token_embd.weight")
	mproj, pnorm := r.tensor("per_layer_model_proj.weight"), r.tensor("per_layer_proj_norm.weight")
	aproj, aun := r.tensor("altup_proj.weight"), r.tensor("altup_unembd_proj.weight")

	x0 := make([][]float64, n)
	pin := make([][]float64, n) // Layers×A per token
	st := make([][][]float64, K)
	for k := range st {
		st[k] = make([][]float64, n)
	}
	for t, tok := range tokens {
		x0[t] = scaled(emb[int(tok)*E:(int(tok)+1)*E], float64(c.EmbedScale))
		proj := scaled(linear(mproj, nil, x0[t]), 1/math.Sqrt(float64(E)))
		row := ple[int(tok)*NL*A : (int(tok)+1)*NL*A]
		pin[t] = make([]float64, NL*A)
		for l := range NL {
			pn := rmsNorm64(proj[l*A:(l+1)*A], pnorm, eps)
			for i := range A {
				pin[t][l*A+i] = (row[l*A+i]*math.Sqrt(float64(A)) + pn[i]) / math.Sqrt(2)
			}
		}
		st[0][t] = x0[t]
		for k := 1; k < K; k++ {
			v := linear(aproj[(k-1)*E*E:k*E*E], nil, x0[t])
			st[k][t] = scaled(v, norm2(x0[t])/norm2(v))
		}
	}
	ks, vs := make([][][]float64, NL), make([][][]float64, NL)
	for il := range NL {
		p := func(s string) []float64 { return r.tensor(fmt.Sprintf("blk.%d.%s", il, s)) }
		modal := func(x []float64) []float64 {
			m := linear(p("altup_router.weight"), nil, scaled(rmsNorm64(x, p("altup_router_norm.weight"), eps), 1/float64(E)))
			for i := range m {
				m[i] = math.Tanh(m[i])
			}
			return m
		}
		windowed := c.WindowedLayer(il)
		base := float64(c.RopeBase)
		if windowed {
			base = float64(c.RopeBaseSWA)
		}
		own, src := refKVSource(c, il)
		pred := make([][][]float64, K)
		for j := range pred {
			pred[j] = make([][]float64, n)
		}
		for t := range n {
			coef := linear(p("altup_predict_coef.weight"), nil, modal(st[act][t]))
			for j := range K {
				v := append([]float64(nil), st[j][t]...)
				for i := range E {
					for k := range K {
						v[i] += coef[j*K+k] * st[k][t][i]
					}
				}
				pred[j][t] = v
			}
		}
		xn, lo, qs := make([][]float64, n), make([][]float64, n), make([][]float64, n)
		if own {
			ks[il], vs[il] = make([][]float64, n), make([][]float64, n)
		}
		for t := range n {
			xn[t] = rmsNorm64(pred[act][t], p("attn_norm.weight"), eps)
			lo[t] = add(rmsNorm64(linear(p("laurel_r.weight"), nil, linear(p("laurel_l.weight"), nil, xn[t])), p("laurel_post_norm.weight"), eps), xn[t])
			qs[t] = linear(p("attn_q.weight"), nil, xn[t])
			headNorm64(qs[t], p("attn_q_norm.weight"), hd, eps)
			refRope(qs[t], c.Heads, hd, t, base, c, false)
			r.r16All(qs[t])
			if !own {
				continue
			}
			k, v := linear(p("attn_k.weight"), nil, xn[t]), linear(p("attn_v.weight"), nil, xn[t])
			headNorm64(k, p("attn_k_norm.weight"), hd, eps)
			if c.VNorm {
				ones := make([]float64, hd)
				for i := range ones {
					ones[i] = 1
				}
				headNorm64(v, ones, hd, eps)
			}
			refRope(k, c.HeadsKV, hd, t, base, c, false)
			r.r16All(k, v)
			ks[il][t], vs[il][t] = k, v
		}
		for t := range n {
			att := r.attendWindow(qs[t], ks[src], vs[src], t, il, c.Heads, hd, group, float64(c.KQScale))
			gated := add(rmsNorm64(linear(p("attn_output.weight"), nil, att), p("post_attention_norm.weight"), eps), pred[act][t])
			al := gated
			if !pt.NoLaurel {
				al = scaled(add(gated, lo[t]), 1/math.Sqrt(2))
			}
			y := rmsNorm64(al, p("ffn_norm.weight"), eps)
			gate := linear(p("ffn_gate.weight"), nil, y)
			if il < c.SparseLayers {
				sparsify64(gate, float64(c.SparseStd))
			}
			f := r.ffn(gate, linear(p("ffn_up.weight"), nil, y), p("ffn_down.weight"), nil)
			out := add(rmsNorm64(f, p("post_ffw_norm.weight"), eps), al)

			coef := linear(p("altup_correct_coef.weight"), nil, modal(out))
			for j := range K {
				st[j][t] = append([]float64(nil), pred[j][t]...)
				if pt.NoCorrect {
					continue
				}
				for i := range E {
					st[j][t][i] += (out[i] - pred[act][t][i]) * (coef[j] + 1)
				}
			}
			if pt.NoPerLayer {
				continue
			}
			first := make([]float64, E)
			for i, w := range p("altup_correct_scale.weight") {
				first[i] = st[act][t][i] * w
			}
			g := linear(p("inp_gate.weight"), nil, first)
			for i := range g {
				g[i] = r.gelu(g[i]) * pin[t][il*A+i]
			}
			pp := rmsNorm64(linear(p("proj.weight"), nil, g), p("post_norm.weight"), eps)
			for j := 1; j < K; j++ {
				st[j][t] = add(st[j][t], pp)
			}
		}
	}
	h := make([][]float64, n)
	for t := range n {
		h[t] = append([]float64(nil), st[0][t]...)
		for k := 1; k < K; k++ {
			u := linear(aun[(k-1)*E*E:k*E*E], nil, st[k][t])
			h[t] = add(h[t], scaled(u, norm2(st[act][t])/norm2(u)))
		}
		h[t] = rmsNorm64(scaled(h[t], 1/float64(K)), r.tensor("output_norm.weight"), eps)
	}
	return h
}

// refKVSource is whether layer il keeps its own keys and values, and
// the layer whose it attends over, as llama.cpp's layer_reuse_cb places
// them: from KVFrom on, layer KVFrom-1 for a global layer and KVFrom-2
// for a windowed one.
func refKVSource(c *Config, il int) (own bool, src int) {
	switch {
	case c.KVFrom == 0 || il < c.KVFrom:
		return true, il
	case c.WindowedLayer(il):
		return false, c.KVFrom - 2
	}
	return false, c.KVFrom - 1
}

// r16All rounds every element of each of vs as an F16 cache holds it.
func (r *refDecoder) r16All(vs ...[]float64) {
	for _, v := range vs {
		for i := range v {
			v[i] = r.r16(v[i])
		}
	}
}

// attendWindow is token t's attention in layer il, heads query heads of
// d floats in q over the keys and values of positions t-Window+1 … t in a
// windowed layer (from 0 in a global one), group query heads a KV head,
// scores scaled by scale.
func (r *refDecoder) attendWindow(q []float64, ks, vs [][]float64, t, il, heads, d, group int, scale float64) []float64 {
	lo := 0
	if r.c.WindowedLayer(il) {
		lo = max(0, t-r.c.Window+1)
	}
	att := make([]float64, heads*d)
	for h := range heads {
		attendHead64(att[h*d:(h+1)*d], q[h*d:(h+1)*d], ks[lo:t+1], vs[lo:t+1], h/group*d, scale, nil, r.r16)
	}
	return att
}

// refInChunks checks that m's logits for a prompt of 13 tokens, in one
// pass, in chunks of 4 and 3 and token by token, are within tol of the
// reference's (F16 rounding where m rounds), which it returns with
// perturbedRef's function giving the reference's logits perturbed.
func refInChunks(t *testing.T, m *Model, pool *ops.Pool, f *gguf.File, data []byte, tol float64) (ref func(r refDecoder) [][]float64, want [][]float64) {
	t.Helper()
	toks := prompt(13)
	ref = perturbedRef(t, m, f, data, toks)
	want = ref(refDecoder{})
	for _, batch := range []int{len(toks), 4, 3, 1} {
		got := forwardAll(t, m, pool, toks, batch, 32)
		worst := refDiff(got, want)
		if !(worst <= tol) {
			t.Errorf("batch %d: logits differ from the reference by up to %g", batch, worst)
		}
		t.Logf("batch %d: worst difference %.3g", batch, worst)
	}
	return ref, want
}

// sparsify64 is llama.cpp's gaussian_topk: g less its mean plus k
// standard deviations (the unbiased estimate), at least 0.
func sparsify64(g []float64, k float64) {
	mean, ss := meanDev64(g)
	cut := mean + k*math.Sqrt(ss/float64(len(g)-1))
	for i, v := range g {
		g[i] = max(v-cut, 0)
	}
}

// Gemma 3n against the reference written from llama.cpp's gemma3n-iswa
// graph (F32 weights): the prompt in one pass, in chunks of 4 and 3, and
// token by token, within 1e-3 — longer than the window of 4, and through
// the two layers that read the caches of layers 0 and 1. Dropping AltUp's
// correction, LAuReL or the per-layer input moves the reference by more
// than 1e-2 (the Config's own perturbations, sparsity, KV sharing and the
// V norm among them, are TestDecoderMatchesReference's).
func TestGemma3nMatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyGemma3n())
	if m.AltUp != 4 || m.KVFrom != 2 || m.KVLayers() != 2 || m.KVSource(3) != 1 || m.KVSource(2) != 0 || m.SparseLayers != 4 || m.LaurelRank != 32 || !m.Tied {
		t.Fatalf("config: altup %d, KV from %d (%d layers), sparse %d, rank %d, tied %v", m.AltUp, m.KVFrom, m.KVLayers(), m.SparseLayers, m.LaurelRank, m.Tied)
	}
	ref, want := refInChunks(t, m, pool, f, data, 1e-3)
	// The cache holds layers 0 and 1 only, the windowed one with room for
	// a pass beside its window (layer 2 reads it after the pass stored
	// it), and allocates what its configuration says.
	o := StateOptions{Batch: 8, Cache: kv.F16, Cells: 64}
	st := mustState(t, m, pool, o)
	kc := st.Cache().Config()
	if kc.Layers != 2 || !slices.Equal(kc.Windows, []int{4, 0}) || kc.Batch != 8 || st.Cache().Bytes() != kv.Bytes(m.StateKVConfig(o)) {
		t.Errorf("KV cache of %d layers, windows %v, batch %d, %d bytes (its config says %d)", kc.Layers, kc.Windows, kc.Batch, st.Cache().Bytes(), kv.Bytes(m.StateKVConfig(o)))
	}
	all := m.Config
	all.KVFrom = 0
	if own, every := kv.Bytes(m.StateKVConfig(o)), kv.Bytes(all.StateKVConfig(o)); !(own < every) {
		t.Errorf("the cache of the layers that own one (%d bytes) is not smaller than every layer's (%d)", own, every)
	}
	mustMoveEach(t, ref, want, 1e-2, func(p gemma3nPerturb) refDecoder { return refDecoder{gemma3n: p} })
}
