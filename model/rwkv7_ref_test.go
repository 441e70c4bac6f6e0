package model

import (
	"fmt"
	"math"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// rwkv7Perturb lists perturbations of RWKV-7's steps, which no Config
// field names, each named by its tag (mustMoveEach).
type rwkv7Perturb struct {
	NoValueRes  bool `perturb:"no value residual"` // the value's mix with the first layer's left out
	NoGroupNorm bool `perturb:"no group norm"`
	NoShift     bool `perturb:"no token shift"` // each token mixed with itself
	SigmoidW    bool `perturb:"decay sigmoid"`  // the decay's pair through a sigmoid instead of tanh
	TanhG       bool `perturb:"gate tanh"`      // the gate's through tanh instead of a sigmoid
	NoSquare    bool `perturb:"no ReLU²"`       // the channel mix's ReLU not squared
	NoBonus     bool `perturb:"no r·k bonus"`
	NoEmbedNorm bool `perturb:"no embedding norm"`
	NoState     bool `perturb:"no wkv state"` // every pass starting from the empty state
}

// rwkv7Hidden is every token's hidden state after the final norm, written
// from llama.cpp's rwkv7 graph (build_rwkv7_time_mix,
// build_rwkv7_channel_mix) and ggml's rwkv_wkv7 in float64.
func (r *refDecoder) rwkv7Hidden(tokens []int32) [][]float64 {
	c, q := r.c, r.rwkv7
	E, N, n := c.Embd, c.WKVHead, len(tokens)
	eps := float64(c.NormEps)
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	emb := r.tensor("token_embd.weight")
	x := make([][]float64, n)
	for t, tok := range tokens {
		x[t] = append([]float64(nil), emb[int(tok)*E:(int(tok)+1)*E]...)
		if !q.NoEmbedNorm {
			x[t] = layerNorm64(x[t], r.tensor("token_embd_norm.weight"), r.tensor("token_embd_norm.bias"), eps)
		}
	}
	// shifted is row t mixed toward row t-1 (zeros before the first).
	shifted := func(rows [][]float64, t int, lerp []float64) []float64 {
		out := make([]float64, E)
		for i := range out {
			var prev float64
			switch {
			case q.NoShift:
				prev = rows[t][i]
			case t > 0:
				prev = rows[t-1][i]
			}
			out[i] = rows[t][i] + (prev-rows[t][i])*lerp[i]
		}
		return out
	}
	vFirst := make([][]float64, n)
	for il := range c.Layers {
		p := func(s string) []float64 { return r.tensor(fmt.Sprintf("blk.%d.%s", il, s)) }
		cur := make([][]float64, n)
		for t := range x {
			cur[t] = layerNorm64(x[t], p("attn_norm.weight"), p("attn_norm.bias"), eps)
		}
		lerp := p("time_mix_lerp_fused.weight")
		S := make([]float64, E*N)
		for t := range n {
			if q.NoState {
				clear(S)
			}
			mix := func(b int) []float64 { return shifted(cur, t, lerp[b*E:(b+1)*E]) }
			xr, xw, xk, xv, xa, xg := mix(0), mix(1), mix(2), mix(3), mix(4), mix(5)
			rr := linear(p("time_mix_receptance.weight"), nil, xr)
			hw := linear(p("time_mix_w1.weight"), nil, xw)
			for i := range hw {
				if q.SigmoidW {
					hw[i] = sig(hw[i])
				} else {
					hw[i] = math.Tanh(hw[i])
				}
			}
			w := linear(p("time_mix_w2.weight"), p("time_mix_w0.weight"), hw)
			for i := range w {
				w[i] = math.Exp(-0.606531 * sig(w[i]))
			}
			k := linear(p("time_mix_key.weight"), nil, xk)
			v := linear(p("time_mix_value.weight"), nil, xv)
			if il == 0 {
				vFirst[t] = v
			} else if !q.NoValueRes {
				mixv := linear(p("time_mix_v2.weight"), p("time_mix_v0.weight"), linear(p("time_mix_v1.weight"), nil, xv))
				for i := range v {
					v[i] += (vFirst[t][i] - v[i]) * sig(mixv[i])
				}
			}
			hg := linear(p("time_mix_g1.weight"), nil, xg)
			for i := range hg {
				if q.TanhG {
					hg[i] = math.Tanh(hg[i])
				} else {
					hg[i] = sig(hg[i])
				}
			}
			g := linear(p("time_mix_g2.weight"), nil, hg)
			a := linear(p("time_mix_a2.weight"), p("time_mix_a0.weight"), linear(p("time_mix_a1.weight"), nil, xa))
			kkw, ka, rk := p("time_mix_k_k.weight"), p("time_mix_k_a.weight"), p("time_mix_r_k.weight")
			kk := make([]float64, E)
			for i := range a {
				a[i] = sig(a[i])
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
				if !q.NoGroupNorm {
					copy(y[h:h+N], layerNorm64(y[h:h+N], p("time_mix_ln.weight")[h:h+N], p("time_mix_ln.bias")[h:h+N], 64e-5))
				}
				if !q.NoBonus {
					var b float64
					for j := h; j < h+N; j++ {
						b += k[j] * rr[j] * rk[j]
					}
					for i := h; i < h+N; i++ {
						y[i] += v[i] * b
					}
				}
			}
			for i := range y {
				y[i] *= g[i]
			}
			o := linear(p("time_mix_output.weight"), nil, y)
			for i := range o {
				x[t][i] += o[i]
			}
		}
		ffn := make([][]float64, n)
		for t := range x {
			ffn[t] = layerNorm64(x[t], p("attn_norm_2.weight"), p("attn_norm_2.bias"), eps)
		}
		for t := range n {
			kx := linear(p("channel_mix_key.weight"), nil, shifted(ffn, t, p("channel_mix_lerp_k.weight")))
			for i, e := range kx {
				e = math.Max(e, 0)
				if !q.NoSquare {
					e *= e
				}
				kx[i] = e
			}
			o := linear(p("channel_mix_value.weight"), nil, kx)
			for i := range o {
				x[t][i] += o[i]
			}
		}
	}
	for t := range x {
		x[t] = layerNorm64(x[t], r.tensor("output_norm.weight"), r.tensor("output_norm.bias"), eps)
	}
	return x
}

// RWKV-7 (TinyRWKV7: three layers, so that the first layer's value
// reaches two others) against the float64 reference written from
// llama.cpp's rwkv7 graph and ggml's rwkv_wkv7, in one pass, in chunks
// of 4 (the shifted rows and the heads' states carried through chunk
// boundaries) and token by token. Each perturbation of the steps moves
// the reference by more than 3 tolerances.
func TestRWKV7MatchesReference(t *testing.T) {
	const tol = 1e-3
	pool, m, f, data := loadF32(t, testutil.TinyRWKV7())
	if !m.RWKV7 || m.KVLayers() != 0 || !m.ConvLayer(2) || m.WKVHead != 32 || m.Blocks[1].TMV1 == nil || m.OutNormB == nil || m.EmbedNormB == nil ||
		len(m.Blocks[0].TMLerp) != 6*m.Embd {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(13)
	ref, want := checkedRefWithin(t, m, pool, f, data, toks, tol)
	mustMoveEach(t, ref, want, 3*tol, func(q rwkv7Perturb) refDecoder { return refDecoder{rwkv7: q} })
}
