package model

import (
	"fmt"
	"math"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// mamba2Perturb lists perturbations of a Mamba-2 layer's steps, which no
// Config field names, each named by its tag (mustMoveEach).
type mamba2Perturb struct {
	NoD      bool `perturb:"no D skip"`
	NoGate   bool `perturb:"no gate"`     // no SiLU(z) gate
	RawDt    bool `perturb:"no softplus"` // the time step without softplus
	SwapBC   bool `perturb:"B and C swapped"`
	OneGroup bool `perturb:"one norm group"` // the gated norm over all channels at once instead of per group
}

// asMamba2 is the refDecoder of Mamba-2 perturbations q.
func asMamba2(q mamba2Perturb) refDecoder { return refDecoder{ssm: q} }

// mamba2 is a granitehybrid Mamba-2 layer's output before ssm_out for
// every token of x (the residual stream from position 0), written from
// llama.cpp's build_mamba2_layer and ggml's ssm_conv and ssm_scan in
// float64: ssm_in of the operator norm gives z, x, B, C and dt; x, B and
// C go through the causal convolution (positions before 0 zero) plus its
// bias, then SiLU; per head h of group g, dt' = softplus(dt + dt_bias),
// the state decays by exp(dt'·A) and takes B·x·dt', y is the state's sum
// against C plus D·x; y·SiLU(z) is normalised per group with ssm_norm.
func (r *refDecoder) mamba2(p func(string) []float64, x [][]float64, eps float64) [][]float64 {
	c := r.c
	I, N, H, G, K := c.SSMInner, c.SSMState, c.SSMHeads, c.SSMGroups, c.SSMConv
	P, W := I/H, c.ssmConvWidth()
	in, w, b := p("ssm_in.weight"), p("ssm_conv1d.weight"), p("ssm_conv1d.bias")
	dtb, A, D, norm := p("ssm_dt.bias"), p("ssm_a"), p("ssm_d"), p("ssm_norm.weight")
	silu := func(v float64) float64 { return v / (1 + math.Exp(-v)) }
	raw := make([][]float64, len(x))
	for t := range x {
		raw[t] = linear(in, nil, rmsNorm64(x[t], p("attn_norm.weight"), eps))
	}
	state := make([]float64, H*P*N)
	ys := make([][]float64, len(x))
	for t := range x {
		xbc := make([]float64, W)
		for ch := range W {
			sum := r.causalConv(w, K, ch, t, func(src int) float64 { return raw[src][I+ch] })
			if b != nil {
				sum += b[ch]
			}
			xbc[ch] = silu(sum)
		}
		xs, B, C := xbc[:I], xbc[I:I+G*N], xbc[I+G*N:]
		if r.ssm.SwapBC {
			B, C = C, B
		}
		y := make([]float64, I)
		for h := range H {
			g := h / (H / G)
			dt := raw[t][2*I+2*G*N+h] + dtb[h]
			if !r.ssm.RawDt {
				dt = math.Log1p(math.Exp(dt))
			}
			dA := math.Exp(dt * A[h])
			for q := range P {
				xv := xs[h*P+q]
				var sum float64
				for n := range N {
					s := &state[(h*P+q)*N+n]
					*s = *s*dA + B[g*N+n]*xv*dt
					sum += *s * C[g*N+n]
				}
				if !r.ssm.NoD {
					sum += xv * D[h]
				}
				y[h*P+q] = sum
			}
		}
		if !r.ssm.NoGate {
			for i := range y {
				y[i] *= silu(raw[t][i])
			}
		}
		gs := I / G
		if r.ssm.OneGroup {
			G, gs = 1, I
		}
		for g := range G {
			if norm == nil {
				break // falcon-h1 without its gated norm
			}
			copy(y[g*gs:(g+1)*gs], rmsNorm64(y[g*gs:(g+1)*gs], norm[g*gs:(g+1)*gs], eps))
		}
		ys[t] = y
	}
	return ys
}

// graniteMoEShared is TinyGraniteMoE with GraniteMoeShared's shared expert
// of width 64, its router softer (gain 1) so that the renormalisation of
// the chosen weights still shows beside the shared expert.
func graniteMoEShared() testutil.ModelSpec {
	s := testutil.TinyGraniteMoE()
	s.SharedFFN, s.RouterGain = 64, 1
	return s
}

// Granite 4.0-H against the reference written from llama.cpp's
// granite-hybrid graph: the whole prompt in one pass, in chunks of 4 (the
// conv and scan state carried through chunk boundaries), and token by
// token, dense and with experts, within 1e-3. Dropping the D skip, the
// SiLU(z) gate, the softplus of the time step, the conv state, swapping
// B and C, or one norm group for all channels moves the reference by more
// than 1e-2, so the comparison sees each (TestDecoderMatchesReference
// checks the multipliers).
func TestGraniteHybridMatchesReference(t *testing.T) {
	for _, spec := range []testutil.ModelSpec{testutil.TinyGraniteHybrid(), testutil.TinyGraniteHybridMoE()} {
		pool, m, f, data := loadF32(t, spec)
		if !m.ConvLayer(0) || m.ConvLayer(2) || !m.mamba() || m.KVLayers() != 1 || m.RopeLayer(2) || !m.Tied {
			t.Fatalf("config: recurrent layers %v, inner %d, KV layers %d, tied %v", m.ConvLayers, m.SSMInner, m.KVLayers(), m.Tied)
		}
		toks := prompt(13)
		ref := perturbedRef(t, m, f, data, toks)
		want := ref(refDecoder{})
		checkBatches(t, m, pool, toks, want, fmt.Sprintf("%d experts, ", m.Experts))
		mustMoveEach(t, ref, want, 1e-2, asMamba2)
		mustMove(t, "no conv state", ref(refDecoder{convNoState: true}), want, 1e-2)
	}
}
