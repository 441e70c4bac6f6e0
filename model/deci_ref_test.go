package model

import (
	"fmt"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// perLayerPerturb lists deci's and openelm's steps a Config field does
// not name, each of which the reference test must see.
type perLayerPerturb struct {
	KeepDropped    bool `perturb:"a layer without a feed-forward joins its attention to the stream"`
	SkipOutputOnly bool `perturb:"the attn_output-alone layer left out"`
	SkipFreeFFN    bool `perturb:"the attention-free layer's feed-forward left out"`
	Interleave     bool `perturb:"query head h reads KV head h mod the KV heads, not h over the group"`
	NoRopeFreqs    bool `perturb:"rope_freqs' factors left out"`
	NoQKNorm       bool `perturb:"the Q and K norms left out"`
	SwapKV         bool `perturb:"the fused attn_qkv's key and value rows swapped"`
}

// perLayerHidden is every token's output of the final norm as llama.cpp's
// deci and openelm graphs compute it, each layer of its own query heads,
// KV heads and feed-forward width: a deci layer of 0 query heads goes
// straight to its feed-forward, one of 0 KV heads adds attn_output of
// its normalised input, one of feed-forward width 0 is dropped (the
// graph's continue); openelm's fused attn_qkv (query, key, value rows)
// and per-head Q and K norms before RoPE.
func (r *refDecoder) perLayerHidden(tokens []int32) [][]float64 {
	c, P := r.c, r.perLayer
	E, n, hd, eps := c.Embd, len(tokens), c.HeadDimK, float64(c.RMSEps)
	emb := r.tensor("token_embd.weight")
	x := make([][]float64, n)
	for t, tok := range tokens {
		x[t] = slices.Clone(emb[int(tok)*E : (int(tok)+1)*E])
	}
	factors := r.global("rope_freqs.weight")
	if P.NoRopeFreqs {
		factors = nil
	}
	for il := range c.Layers {
		p := func(s string) []float64 { return r.tensor(fmt.Sprintf("blk.%d.%s", il, s)) }
		heads, hkv, ffw := c.LayerHeads(il), c.LayerHeadsKV(il), c.layerFFN(il)
		if c.DropFFNFree && ffw == 0 && !P.KeepDropped {
			continue
		}
		if heads > 0 {
			qs, ks, vs := make([][]float64, n), make([][]float64, n), make([][]float64, n)
			outs := make([][]float64, n)
			for t := range n {
				h := rmsNorm64(x[t], p("attn_norm.weight"), eps)
				if hkv == 0 {
					if !P.SkipOutputOnly {
						outs[t] = linear(p("attn_output.weight"), nil, h)
					}
					continue
				}
				q, kv := heads*hd, hkv*hd
				if w := p("attn_qkv.weight"); w != nil {
					all := linear(w, nil, h)
					qs[t], ks[t], vs[t] = all[:q], all[q:q+kv], all[q+kv:]
					if P.SwapKV {
						ks[t], vs[t] = vs[t], ks[t]
					}
				} else {
					qs[t], ks[t], vs[t] = linear(p("attn_q.weight"), p("attn_q.bias"), h),
						linear(p("attn_k.weight"), p("attn_k.bias"), h), linear(p("attn_v.weight"), p("attn_v.bias"), h)
				}
				if w := p("attn_q_norm.weight"); w != nil && !P.NoQKNorm {
					headNorm64(qs[t], w, hd, eps)
					headNorm64(ks[t], p("attn_k_norm.weight"), hd, eps)
				}
				refRopeHeads(qs[t], heads, hd, c.RopeDim, t, float64(c.RopeBase), c, false, factors)
				refRopeHeads(ks[t], hkv, hd, c.RopeDim, t, float64(c.RopeBase), c, false, factors)
				r.held(qs[t], ks[t], vs[t])
			}
			for t := range n {
				if hkv == 0 {
					continue
				}
				att := make([]float64, heads*hd)
				for h := range heads {
					g := h / (heads / hkv)
					if P.Interleave {
						g = h % hkv
					}
					attendBiased64(att[h*hd:(h+1)*hd], qs[t][h*hd:(h+1)*hd], ks[:t+1], vs[:t+1], g*hd, float64(c.KQScale), nil, nil, r.r16)
				}
				outs[t] = linear(p("attn_output.weight"), p("attn_output.bias"), att)
			}
			for t, o := range outs {
				for i := range o {
					x[t][i] += o[i]
				}
			}
		}
		if ffw == 0 || heads == 0 && P.SkipFreeFFN {
			continue
		}
		for t := range n {
			y := rmsNorm64(x[t], p("ffn_norm.weight"), eps)
			f := r.ffn(linear(p("ffn_gate.weight"), nil, y), linear(p("ffn_up.weight"), p("ffn_up.bias"), y), p("ffn_down.weight"), p("ffn_down.bias"))
			for i := range f {
				x[t][i] += f[i]
			}
		}
	}
	for t := range x {
		x[t] = rmsNorm64(x[t], r.tensor("output_norm.weight"), eps)
	}
	return x
}

// deci and openelm against the reference written from llama.cpp's deci
// and openelm graphs: F32 weights, the logits over a prompt in one pass,
// in chunks of 4 and token by token. deci's within 1e-3 (measured: 3.0e-4
// with the default kernels, 3.2e-4 pure Go, 3.1e-6 AVX2); openelm's
// within 5e-3: its logits reach 46 (the tied embedding's rows), and the
// default kernels measured 3.46e-3 (pure Go 5.9e-6, AVX2 5.4e-6), as on
// a uniform openelm of 6 heads on 1 KV head (1.1e-3): an attention
// weight landing on the next F16 value, amplified by the logits' size,
// not the per-layer sizes.
// Each perturbation of the steps only these layers take, and the other
// RoPE pairing, moves the reference by more than 1e-2, so the comparison
// sees it.
func TestPerLayerSizesMatchReference(t *testing.T) {
	for _, tc := range []struct {
		spec    testutil.ModelSpec
		tol     float64
		pairing string   // the other RoPE pairing's perturbation
		except  []string // perturbations the architecture has no step for
	}{
		{testutil.TinyDeci(), 1e-3, "NEOX pairs", []string{"NoQKNorm", "SwapKV"}},
		{testutil.TinyOpenELM(), 5e-3, "NORM pairs", []string{"KeepDropped", "SkipOutputOnly", "SkipFreeFFN", "NoRopeFreqs"}},
	} {
		t.Run(tc.spec.Arch, func(t *testing.T) {
			pool, m, f, data := loadF32(t, tc.spec)
			toks := prompt(11)
			ref, want := checkedRefWithin(t, m, pool, f, data, toks, tc.tol)
			mustMoveEach(t, ref, want, 1e-2, func(p perLayerPerturb) refDecoder { return refDecoder{perLayer: p} }, tc.except...)
			mustMoveAll(t, m, f, data, toks, want, 1e-2, tc.pairing)
		})
	}
}
