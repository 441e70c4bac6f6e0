package model

import (
	"fmt"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// nemotronHPerturb changes one Nemotron-H-specific step of the
// reference, so that the comparison can be seen to depend on it; each is
// named by its tag (mustMoveEach).
type nemotronHPerturb struct {
	Relu     bool `perturb:"ReLU not squared"`         // the feed-forward's ReLU not squared
	Gelu     bool `perturb:"GELU"`                     // GELU instead of ReLU²
	NoResAdd bool `perturb:"no feed-forward residual"` // a feed-forward layer's output replaces the stream instead of joining it
}

// nemotronHHidden is every token's output of the final norm for a
// nemotron_h model, written from llama.cpp's nemotron_h graph in float64:
// each layer normalises the stream by attn_norm and adds one operator's
// output to it — a Mamba-2 layer (refDecoder.mamba2) and ssm_out;
// down(ReLU(up·h + b_up)²) + b_down; or attention, unless a perturbed
// Config rotates it unrotated, over the heads' keys and values rounded to
// F16 as the cache holds them, scaled by KQScale, then attn_output.
func (r *refDecoder) nemotronHHidden(tokens []int32) [][]float64 {
	c := r.c
	n, hd, group := len(tokens), c.HeadDimK, c.Heads/c.HeadsKV
	x := r.embeddings(tokens)
	eps := float64(c.RMSEps)
	for il := range c.Layers {
		p := func(s string) []float64 { return r.tensor(fmt.Sprintf("blk.%d.%s", il, s)) }
		out := make([][]float64, n)
		switch {
		case c.ConvLayer(il):
			mixer := r.mamba2
			if c.Mamba1 {
				mixer = r.mamba1 // mamba
			}
			ys := mixer(p, x, eps)
			for t := range n {
				out[t] = linear(p("ssm_out.weight"), nil, ys[t])
			}
		case c.ExpertLayer(il):
			for t := range n {
				h := rmsNorm64(x[t], p("attn_norm.weight"), eps)
				out[t] = r.experts(p, h, h)
				if !r.noShared {
					sh := linear(p("ffn_down_shexp.weight"), nil, r.relu2(linear(p("ffn_up_shexp.weight"), nil, h)))
					for i := range sh {
						out[t][i] += sh[i]
					}
				}
			}
		case c.FFNLayer(il):
			for t := range n {
				u := linear(p("ffn_up.weight"), p("ffn_up.bias"), rmsNorm64(x[t], p("attn_norm.weight"), eps))
				out[t] = linear(p("ffn_down.weight"), p("ffn_down.bias"), r.relu2(u))
			}
		default:
			qs, ks, vs := make([][]float64, n), make([][]float64, n), make([][]float64, n)
			for t := range n {
				h := rmsNorm64(x[t], p("attn_norm.weight"), eps)
				qs[t], ks[t], vs[t] = linear(p("attn_q.weight"), p("attn_q.bias"), h), linear(p("attn_k.weight"), p("attn_k.bias"), h), linear(p("attn_v.weight"), p("attn_v.bias"), h)
				if c.RopeLayer(il) {
					refRope(qs[t], c.Heads, hd, t, float64(c.RopeBase), c, false)
					refRope(ks[t], c.HeadsKV, hd, t, float64(c.RopeBase), c, false)
				}
				r.held(qs[t], ks[t], vs[t])
			}
			for t := range n {
				att := make([]float64, c.Heads*hd)
				for h := range c.Heads {
					attendHead64(att[h*hd:(h+1)*hd], qs[t][h*hd:(h+1)*hd], ks[:t+1], vs[:t+1], h/group*hd, float64(c.KQScale), nil, r.r16)
				}
				out[t] = linear(p("attn_output.weight"), p("attn_output.bias"), att)
			}
		}
		for t := range n {
			if r.nemotronH.NoResAdd && c.FFNLayer(il) {
				x[t] = out[t]
				continue
			}
			for i := range out[t] {
				x[t][i] += out[t][i]
			}
		}
	}
	return r.outNorm(x)
}

// relu2 replaces each element of u by ReLU(u)², or as the perturbation
// says; it returns u.
func (r *refDecoder) relu2(u []float64) []float64 {
	for i, v := range u {
		switch {
		case r.nemotronH.Gelu:
			u[i] = r.gelu(v)
		case v <= 0:
			u[i] = 0
		case !r.nemotronH.Relu:
			u[i] = v * v
		}
	}
	return u
}

// embeddings is each token's row of token_embd, unscaled.
func (r *refDecoder) embeddings(tokens []int32) [][]float64 {
	E := r.c.Embd
	emb := r.tensor("token_embd.weight")
	x := make([][]float64, len(tokens))
	for t, tok := range tokens {
		x[t] = append([]float64(nil), emb[int(tok)*E:(int(tok)+1)*E]...)
	}
	return x
}

// outNorm normalises each row of x by output_norm, in place.
func (r *refDecoder) outNorm(x [][]float64) [][]float64 {
	for t := range x {
		x[t] = rmsNorm64(x[t], r.tensor("output_norm.weight"), float64(r.c.RMSEps))
	}
	return x
}

// Nemotron-H against the reference written from llama.cpp's nemotron_h
// graph: Mamba-2 layers of an inner size other than twice the width in
// two groups, ReLU² feed-forwards and unrotated attention layers, each
// alone in its block; the whole prompt in one pass, in chunks of 4 and
// token by token, within 1e-3. The layer kinds are told apart as
// llama.cpp tells them (the KV cache holds the two attention layers
// only). Squaring no ReLU, GELU for ReLU², a feed-forward without its
// residual sum, RoPE on the attention layers, the gated norm over all
// channels instead of per group, and granitehybrid's Mamba-2 steps (the D
// skip, the SiLU(z) gate, the softplus, B and C, the conv state) each move
// the reference by more than 1e-2, so the comparison sees each.
func TestNemotronHMatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyNemotronH())
	kinds := ""
	for il := range m.Layers {
		switch {
		case m.ConvLayer(il):
			kinds += "M"
		case m.FFNLayer(il):
			kinds += "-"
		default:
			kinds += "*"
		}
	}
	if kinds != "M-M*-M*" || m.KVLayers() != 2 || m.KVLayer(3) != 0 || m.KVLayer(6) != 1 || m.recurrentIndex(5) != 2 ||
		m.SSMInner == 2*m.Embd || m.RopeLayer(3) || m.Tied || m.HeadDimK != 24 {
		t.Fatalf("config: layers %q, KV layers %d, inner %d, tied %v, head %d", kinds, m.KVLayers(), m.SSMInner, m.Tied, m.HeadDimK)
	}
	toks := prompt(13)
	ref, want := checkedRef(t, m, pool, f, data, toks)
	mustMoveEach(t, ref, want, 1e-2, func(p nemotronHPerturb) refDecoder { return refDecoder{nemotronH: p} })
	mustMoveEach(t, ref, want, 1e-2, asMamba2)
	mustMove(t, "no conv state", ref(refDecoder{convNoState: true}), want, 1e-2)
	c := m.Config
	c.NoRopeEvery = 0
	rotated := (&refDecoder{refEncoder: refEncoder{t: t, f: f, data: data, c: &c, round16: true}}).logits(toks)
	mustMove(t, "rotated attention", rotated, want, 1e-2)
}

// Nemotron 3 Nano's layout (nemotron_h_moe) against the same reference:
// its feed-forward layers gate-less experts, sigmoid-routed with a
// selection bias, renormalised and scaled, beside a gate-less shared
// expert; in one pass, chunks of 4 and token by token, within 1e-3.
// Leaving out the shared expert, the selection bias, the renormalisation
// or the scale, softmax routing, or ReLU not squared moves the reference
// by more than 1e-2.
func TestNemotronHMoEMatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyNemotronHMoE())
	if !m.ExpertLayer(1) || !m.ExpertLayer(4) || m.ExpertLayer(0) || m.ExpertLayer(3) || m.expertLayers() != 2 || m.KVLayers() != 2 ||
		m.ExpertGating != GatingSigmoid || !m.ExpertSelBias || !m.ExpertNorm || m.ExpertScale != 2.5 || m.SharedFFN != 96 || m.Blocks[1].Experts[0].Gate != nil {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(13)
	ref, want := checkedRef(t, m, pool, f, data, toks)
	mustMove(t, "no shared expert", ref(refDecoder{noShared: true}), want, 1e-2)
	mustMove(t, "ReLU not squared", ref(refDecoder{nemotronH: nemotronHPerturb{Relu: true}}), want, 1e-2)
	mustMoveAll(t, m, f, data, toks, want, 1e-2, "no selection bias", "no renormalisation", "no expert scale", "softmax gating")
}
