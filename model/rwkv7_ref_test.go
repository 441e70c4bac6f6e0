package model

import (
	"math"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// rwkv7Hidden is every token's hidden state after the final norm, written
// from llama.cpp's rwkv7 and arwkv7 graphs (build_rwkv7_time_mix) and
// ggml's rwkv_wkv7 in float64 on rwkvHidden's blocks.
func (r *refDecoder) rwkv7Hidden(tokens []int32) [][]float64 {
	c, q := r.c, r.rwkv
	E, N, n := c.Embd, c.WKVHead, len(tokens)
	vFirst := make([][]float64, n)
	return r.rwkvHidden(tokens, func(il int, p func(string) []float64, cur [][]float64, shifted shiftFunc) (ys, gs [][]float64) {
		ys, gs = make([][]float64, n), make([][]float64, n)
		lerp := p("time_mix_lerp_fused.weight")
		S := make([]float64, E*N)
		for t := range n {
			if q.NoState {
				clear(S)
			}
			mix := func(b int) []float64 { return shifted(cur, t, lerp[b*E:(b+1)*E]) }
			xr, xw, xk, xv, xa := mix(0), mix(1), mix(2), mix(3), mix(4)
			rr := linear(p("time_mix_receptance.weight"), nil, xr)
			hw := squash64(linear(p("time_mix_w1.weight"), nil, xw), q.SigmoidW)
			w := linear(p("time_mix_w2.weight"), p("time_mix_w0.weight"), hw)
			for i := range w {
				w[i] = math.Exp(-0.606531 * sig64(w[i]))
			}
			k := linear(p("time_mix_key.weight"), nil, xk)
			v := linear(p("time_mix_value.weight"), nil, xv)
			if il == 0 {
				vFirst[t] = v
			} else if !q.NoValueRes {
				mixv := linear(p("time_mix_v2.weight"), p("time_mix_v0.weight"), linear(p("time_mix_v1.weight"), nil, xv))
				for i := range v {
					v[i] += (vFirst[t][i] - v[i]) * sig64(mixv[i])
				}
			}
			g := make([]float64, E)
			if g1 := p("time_mix_g1.weight"); g1 != nil {
				g = linear(p("time_mix_g2.weight"), nil, squash64(linear(g1, nil, mix(5)), !q.TanhG))
			} else {
				for i := range g {
					g[i] = 1 // an ARWKV-7 block without the gate
				}
			}
			a := linear(p("time_mix_a2.weight"), p("time_mix_a0.weight"), linear(p("time_mix_a1.weight"), nil, xa))
			kkw, ka, rk := p("time_mix_k_k.weight"), p("time_mix_k_a.weight"), p("time_mix_r_k.weight")
			kk := make([]float64, E)
			for i := range a {
				a[i] = sig64(a[i])
				kk[i] = k[i] * kkw[i]
				k[i] += a[i]*k[i]*ka[i] - k[i]*ka[i]
			}
			y := make([]float64, E)
			for h := 0; h < E; h += N {
				var ss float64
				for j := h; j < h+N; j++ {
					ss += kk[j] * kk[j]
				}
				s := 1 / math.Max(math.Sqrt(ss), 1e-12)
				for j := h; j < h+N; j++ {
					kk[j] *= s
				}
				st := S[h*N : (h+1)*N]
				for i := range N {
					row := st[i*N : (i+1)*N]
					var sa float64
					for j := range N {
						sa += -kk[h+j] * row[j]
					}
					var out float64
					for j := range N {
						row[j] = row[j]*w[h+j] + v[h+i]*k[h+j] + sa*kk[h+j]*a[h+j]
						out += row[j] * rr[h+j]
					}
					y[h+i] = out
				}
			}
			r.rwkvGroupNorm(y, p)
			for h := 0; h < E && !q.NoBonus; h += N {
				var b float64
				for j := h; j < h+N; j++ {
					b += k[j] * rr[j] * rk[j]
				}
				for i := h; i < h+N; i++ {
					y[i] += v[i] * b
				}
			}
			ys[t], gs[t] = y, g
		}
		return ys, gs
	})
}

// RWKV-7 (TinyRWKV7: three layers, so that the first layer's value
// reaches two others) against the float64 reference
// (rwkvMatchesReference).
func TestRWKV7MatchesReference(t *testing.T) {
	rwkvMatchesReference(t, testutil.TinyRWKV7(), func(m *Model) bool {
		return m.RWKV7 && m.Blocks[1].TMV1 != nil && len(m.Blocks[0].TMLerp) == 6*m.Embd
	}, slices.Concat(rwkv6Only, qrwkv6Only, qwen2BodyOnly))
}

// ARWKV-7 (TinyARWKV7: gated, group-normed, six mixes; TinyARWKV7Plain:
// neither, five mixes) against the float64 reference
// (rwkvMatchesReference): RWKV-7's time mix in a Qwen2 body; the
// perturbations of what each does not run are passed over.
func TestARWKV7MatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  testutil.ModelSpec
		lerps int
		other []string
	}{
		{"gated", testutil.TinyARWKV7(), 6, nil},
		{"plain", testutil.TinyARWKV7Plain(), 5, []string{"NoGroupNorm", "TanhG"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gated := tc.lerps == 6
			rwkvMatchesReference(t, tc.spec, func(m *Model) bool {
				L := &m.Blocks[1]
				return m.RWKV7 && m.QRWKV && m.RMSEps == 1e-6 && len(L.TMLerp) == tc.lerps*m.Embd && (L.TMG1 != nil) == gated &&
					(L.TMLn != nil) == gated && L.Gate != nil && L.TMV1 != nil && m.OutNormB == nil
			}, slices.Concat(rwkv6Only, qrwkv6Only, rwkvOnly, tc.other))
		})
	}
}
