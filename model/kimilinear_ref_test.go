package model

import (
	"math"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// kdaPerturb drops or changes one step of a Kimi Delta Attention layer in
// the reference, so that the comparison can be seen to depend on it.
type kdaPerturb struct {
	NoDecay     bool `perturb:"no decay"`                    // the state never decays
	HeadDecay   bool `perturb:"one decay a head"`            // every key element decays as the head's first
	NoDtBias    bool `perturb:"no decay bias"`               // ssm_dt.bias left out
	NoBeta      bool `perturb:"no beta"`                     // β = 1
	NoConv      bool `perturb:"no conv"`                     // q, k and v skip their kernels (SiLU alone)
	NoL2        bool `perturb:"no L2 norms"`                 // q and k not L2-normalised
	NoScale     bool `perturb:"no output scale"`             // the output not scaled by 1/sqrt(head size)
	SiLUGate    bool `perturb:"SiLU gate"`                   // the output gate SiLU's, not sigmoid's
	NoGate      bool `perturb:"no output gate"`              // the normalised output not gated
	NormAfter   bool `perturb:"gate before the norm"`        // the output gated, then normalised
	SwapKQConvs bool `perturb:"q's and k's kernels swapped"` // ssm_conv1d_q convolving k and _k q
}

// kda is a Kimi Delta Attention layer's output (after attn_output) for
// every token of x from position 0, written from llama.cpp's kimi-linear
// graph and its delta net in float64: attn_q, attn_k and attn_v of the
// operator norm each through its causal kernel (ssm_conv1d_q, _k, _v; no
// bias, positions before 0 zero) and SiLU; q and k L2-normalised per head
// (eps the RMS norm's); each head h moves its state S (S[j][i], value j,
// key i) by S ← S∘exp(g_h) with the decay's argument per key element
// g = softplus(ssm_f_b·ssm_f_a·x + ssm_dt.bias)·ssm_a[h], then
// d = β·(v - S·k), S ← S + d·kᵀ, and outputs S·q/sqrt(N),
// β = sigmoid(ssm_beta·x); each head's output RMS-normalised by ssm_norm
// times sigmoid(ssm_g_b·ssm_g_a·x).
func (r *refDecoder) kda(p func(string) []float64, x [][]float64, eps float64) [][]float64 {
	c, pt := r.c, r.kdaP
	N, H, I, K := c.SSMState, c.SSMHeads, c.SSMInner, c.SSMConv
	silu := func(v float64) float64 { return v / (1 + math.Exp(-v)) }
	sigmoid := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	convs := [3][]float64{p("ssm_conv1d_q.weight"), p("ssm_conv1d_k.weight"), p("ssm_conv1d_v.weight")}
	if pt.SwapKQConvs {
		convs[0], convs[1] = convs[1], convs[0]
	}
	dtb, A, norm := p("ssm_dt.bias"), p("ssm_a"), p("ssm_norm.weight")
	n := len(x)
	raw, gs, gates, betas := make([][]float64, n), make([][]float64, n), make([][]float64, n), make([][]float64, n)
	for t := range x {
		h := rmsNorm64(x[t], p("attn_norm.weight"), eps)
		raw[t] = append(append(linear(p("attn_q.weight"), nil, h), linear(p("attn_k.weight"), nil, h)...), linear(p("attn_v.weight"), nil, h)...)
		gs[t] = linear(p("ssm_f_b.weight"), nil, linear(p("ssm_f_a.weight"), nil, h))
		gates[t] = linear(p("ssm_g_b.weight"), nil, linear(p("ssm_g_a.weight"), nil, h))
		betas[t] = linear(p("ssm_beta.weight"), nil, h)
	}
	state := make([]float64, H*N*N)
	out := make([][]float64, n)
	for t := range x {
		ch := make([]float64, 3*I)
		for i := range ch {
			v := raw[t][i]
			if !pt.NoConv {
				v = r.causalConv(convs[i/I], K, i%I, t, func(src int) float64 { return raw[src][i] })
			}
			ch[i] = silu(v)
		}
		for hh := range 2 * H {
			if !pt.NoL2 {
				l2Norm64(ch[hh*N:(hh+1)*N], eps)
			}
		}
		y := make([]float64, I)
		for h := range H {
			q, k, v := ch[h*N:(h+1)*N], ch[I+h*N:I+(h+1)*N], ch[2*I+h*N:2*I+(h+1)*N]
			beta, scale := sigmoid(betas[t][h]), 1/math.Sqrt(float64(N))
			if pt.NoBeta {
				beta = 1
			}
			if pt.NoScale {
				scale = 1
			}
			decay := func(i int) float64 {
				switch {
				case pt.NoDecay:
					return 1
				case pt.HeadDecay:
					i = 0
				}
				arg := gs[t][h*N+i]
				if !pt.NoDtBias {
					arg += dtb[h*N+i]
				}
				return math.Exp(math.Log1p(math.Exp(arg)) * A[h])
			}
			yh := y[h*N : (h+1)*N]
			deltaStep64(state[h*N*N:(h+1)*N*N], q, k, v, yh, decay, beta, scale)
			gate := func() {
				for j := range yh {
					switch {
					case pt.NoGate:
					case pt.SiLUGate:
						yh[j] *= silu(gates[t][h*N+j])
					default:
						yh[j] *= sigmoid(gates[t][h*N+j])
					}
				}
			}
			if pt.NormAfter {
				gate()
				copy(yh, rmsNorm64(yh, norm, eps))
				continue
			}
			copy(yh, rmsNorm64(yh, norm, eps))
			gate()
		}
		out[t] = linear(p("attn_output.weight"), nil, y)
	}
	return out
}

// l2Norm64 scales v to unit length as ggml's l2_norm: v / max(|v|, eps).
func l2Norm64(v []float64, eps float64) {
	var ss float64
	for _, e := range v {
		ss += e * e
	}
	s := 1 / math.Max(math.Sqrt(ss), eps)
	for i := range v {
		v[i] *= s
	}
}

// Kimi Linear against the reference written from llama.cpp's kimi-linear
// graph: Kimi Delta Attention layers (kda), deepseek2's latent attention
// (mla) left unrotated and DeepSeek V3's routing (experts) with one shared
// expert after a dense layer, a 13-token prompt in one pass, in chunks of
// 4 (the kernels' and the delta net's states carried through chunk
// boundaries) and token by token, within 1e-3. Every step of kdaPerturb,
// dropping the conv state or the shared expert, rotating the latent
// attention, and leaving out the selection bias, the renormalisation or
// the weights' scale moves the reference by more than 1e-2.
func TestKimiLinearMatchesReference(t *testing.T) {
	pool, m, f, data := loadF32(t, testutil.TinyKimiLinear())
	if !m.KDA || !m.DeltaNet || !m.mla() || m.SSMHeads != 4 || m.SSMGroups != 4 || m.SSMState != 32 || m.SSMInner != 128 ||
		m.HeadDimKMLA != 48 || m.HeadDimVMLA != 32 || m.KVLayers() != 1 || m.DenseLead != 1 || m.SharedFFN != 32 || !m.ExpertNorm {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(13)
	ref, want := checkedRef(t, m, pool, f, data, toks)
	mustMoveEach(t, ref, want, 1e-2, func(p kdaPerturb) refDecoder { return refDecoder{kdaP: p} })
	mustMove(t, "no conv state", ref(refDecoder{convNoState: true}), want, 1e-2)
	mustMove(t, "no shared experts", ref(refDecoder{noShared: true}), want, 1e-2)
	mustMoveAll(t, m, f, data, toks, want, 1e-2, "every layer rotated", "no selection bias", "no renormalisation", "no expert scale")
}
