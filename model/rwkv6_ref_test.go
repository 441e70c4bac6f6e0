package model

import (
	"math"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// rwkv6Hidden is every token's hidden state after the final norm, written
// from llama.cpp's rwkv6 graph (build_rwkv6_time_mix) and ggml's
// rwkv_wkv6 in float64 on rwkvHidden's blocks.
func (r *refDecoder) rwkv6Hidden(tokens []int32) [][]float64 {
	c, q := r.c, r.rwkv
	E, N, D, n := c.Embd, c.WKVHead, c.LoRAMix, len(tokens)
	return r.rwkvHidden(tokens, func(_ int, p func(string) []float64, cur [][]float64, shifted shiftFunc) (ys, gs [][]float64) {
		ys, gs = make([][]float64, n), make([][]float64, n)
		lx, lf, w2 := p("time_mix_lerp_x.weight"), p("time_mix_lerp_fused.weight"), p("time_mix_w2.weight")
		var u []float64
		if !c.QRWKV {
			u = p("time_mix_first.weight")
		}
		S := make([]float64, E*N)
		for t := range n {
			if q.NoState {
				clear(S)
			}
			hx := squash64(linear(p("time_mix_w1.weight"), nil, shifted(cur, t, lx)), false)
			// mix is the b-th mix (w, k, v, r, g): its lerp plus w2's b-th
			// matrix of the b-th fifth of hx.
			mix := func(b int) []float64 {
				lerp := append([]float64(nil), lf[b*E:(b+1)*E]...)
				if !q.NoDataShift {
					for i, m := range linear(w2[b*E*D:(b+1)*E*D], nil, hx[b*D:(b+1)*D]) {
						lerp[i] += m
					}
				}
				return shifted(cur, t, lerp)
			}
			xw, xk, xv, xr, xg := mix(0), mix(1), mix(2), mix(3), mix(4)
			rr := linear(p("time_mix_receptance.weight"), nil, xr)
			k := linear(p("time_mix_key.weight"), nil, xk)
			v := linear(p("time_mix_value.weight"), nil, xv)
			if c.QRWKV {
				rr, k, v = r.qrwkvInputs(p, rr, k, v)
			}
			g := linear(p("time_mix_gate.weight"), nil, xg)
			for i, e := range g {
				if q.SigmoidGate || c.QRWKV {
					g[i] = sig64(e)
				} else {
					g[i] = e * sig64(e)
				}
			}
			w := linear(p("time_mix_decay_w2.weight"), p("time_mix_decay.weight"),
				squash64(linear(p("time_mix_decay_w1.weight"), nil, xw), q.SigmoidW))
			for i := range w {
				w[i] = math.Exp(-math.Exp(w[i]))
				if c.QRWKV && !q.KUndecayed {
					k[i] *= 1 - w[i]
				}
			}
			y := make([]float64, E)
			for h := 0; h < E; h += N {
				st := S[h*N : (h+N)*N] // head h/N's state, rows by key
				for i := range N {
					for j := range N {
						kv := k[h+i] * v[h+j]
						if c.QRWKV {
							// ggml's gated_linear_attn: r/√N against the
							// state after the token.
							st[i*N+j] = st[i*N+j]*w[h+i] + kv
							y[h+j] += rr[h+i] / math.Sqrt(float64(N)) * st[i*N+j]
							continue
						}
						bonus := u[h+i] * kv
						if q.NoBonus {
							bonus = 0
						}
						y[h+j] += rr[h+i] * (bonus + st[i*N+j])
						st[i*N+j] = st[i*N+j]*w[h+i] + kv
					}
				}
			}
			if !c.QRWKV {
				r.rwkvGroupNorm(y, p)
			}
			ys[t], gs[t] = y, g
		}
		return ys, gs
	})
}

// qrwkvInputs is a QRWKV layer's receptance, key and value with their
// biases, the key's and value's heads repeated over the heads in blocks
// (head h reads head h/(heads/head_count_kv)).
func (r *refDecoder) qrwkvInputs(p func(string) []float64, rr, k, v []float64) ([]float64, []float64, []float64) {
	c := r.c
	E, N := c.Embd, c.WKVHead
	group := E / N / c.WKVHeadsKV
	plus := func(x, b []float64) []float64 {
		for i := range x {
			if !r.rwkv.NoBiases {
				x[i] += b[i]
			}
		}
		return x
	}
	repeat := func(x []float64) []float64 {
		out := make([]float64, E)
		for h := 0; h < E/N; h++ {
			kh := h / group
			if r.rwkv.KVModulo {
				kh = h % c.WKVHeadsKV
			}
			copy(out[h*N:(h+1)*N], x[kh*N:(kh+1)*N])
		}
		return out
	}
	return plus(rr, p("time_mix_receptance.bias")), repeat(plus(k, p("time_mix_key.bias"))), repeat(plus(v, p("time_mix_value.bias")))
}

// RWKV-6 (TinyRWKV6: the stream halved after the second of its three
// layers) against the float64 reference (rwkvMatchesReference);
// rescale_every_n_layers left out moves it too.
func TestRWKV6MatchesReference(t *testing.T) {
	m, f, data, toks, want := rwkvMatchesReference(t, testutil.TinyRWKV6(), func(m *Model) bool {
		L := &m.Blocks[0]
		return m.RWKV6 && m.LoRAMix == 32 && m.LoRADecay == 64 && m.RescaleEvery == 2 &&
			len(L.TMLerp) == 5*m.Embd && len(L.TMFirst) == m.Embd && L.CMR != nil && L.TMMix2.Rows == 5*m.Embd
	}, slices.Concat(rwkv7Only, qrwkv6Only, qwen2BodyOnly))
	mustMoveAll(t, m, f, data, toks, want, 3e-3, "no rescale")
}

// QRWKV6 (TinyRWKV6Qwen2: keys and values of 2 heads over 4, biases,
// RMSNorms, Qwen2's feed-forward) against the float64 reference
// (rwkvMatchesReference), its gated linear attention in place of wkv6;
// the perturbations of what it does not run are passed over.
func TestRWKV6Qwen2MatchesReference(t *testing.T) {
	rwkvMatchesReference(t, testutil.TinyRWKV6Qwen2(), func(m *Model) bool {
		L := &m.Blocks[0]
		return m.RWKV6 && m.QRWKV && m.WKVHeadsKV == 2 && m.Blocks[2].Wk.Rows == 64 && L.Bk != nil && L.Gate != nil && L.TMFirst == nil && m.EmbedNorm == nil
	}, slices.Concat(rwkv7Only, rwkvOnly, []string{"NoGroupNorm", "NoBonus", "SigmoidGate", "NoCMGate"}))
}
