package model

import (
	"math"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// mamba1Perturb lists perturbations of a Mamba-1 layer's steps, which no
// Config field names, each named by its tag (mustMoveEach).
type mamba1Perturb struct {
	NoD      bool `perturb:"no D"`        // no D skip
	NoGate   bool `perturb:"no gate"`     // no SiLU(z) gate
	RawDt    bool `perturb:"no softplus"` // the time step without softplus
	SwapBC   bool `perturb:"B and C"`     // B and C swapped
	NoNorms  bool `perturb:"no norms"`    // the norms of the rank, B and C left out
	OneDecay bool `perturb:"one decay"`   // every channel decaying by its first state element's A (Mamba-2's one decay a head)
	SwapXZ   bool `perturb:"z and x"`     // z and x taken the other way round from ssm_in
}

// asMamba1 is the refDecoder of Mamba-1 perturbations q.
func asMamba1(q mamba1Perturb) refDecoder { return refDecoder{mamba1P: q} }

// mamba1 is a Mamba-1 layer's output before ssm_out for every token of x
// (the residual stream from position 0), written from llama.cpp's
// build_mamba_layer and ggml's ssm_conv and ssm_scan in float64: ssm_in of
// the operator norm gives x then z; x goes through the causal convolution
// (positions before 0 zero) plus its bias, then SiLU; ssm_x of it gives
// the time step's rank, B and C, each RMS-normalised by its weight
// (jamba's ssm_dt_norm, ssm_b_norm, ssm_c_norm) or by none (Falcon-Mamba's
// dt_b_c_rms); ssm_dt and its bias widen the rank, softplus makes dt';
// each channel d's state element s decays by exp(dt'·A[d][s]) and takes
// B[s]·x·dt'; y is the state's sum against C plus D·x, times SiLU(z).
func (r *refDecoder) mamba1(p func(string) []float64, x [][]float64, eps float64) [][]float64 {
	c, q := r.c, r.mamba1P
	I, N, R, K := c.SSMInner, c.SSMState, c.SSMDtRank, c.SSMConv
	silu := func(v float64) float64 { return v / (1 + math.Exp(-v)) }
	norm := func(v []float64, name string) []float64 {
		if q.NoNorms || !c.SSMDtBCNorm {
			return v
		}
		w := p(name)
		if w == nil {
			w = make([]float64, len(v))
			for i := range w {
				w[i] = 1
			}
		}
		return rmsNorm64(v, w, eps)
	}
	raw := make([][]float64, len(x))
	for t := range x {
		raw[t] = linear(p("ssm_in.weight"), nil, rmsNorm64(x[t], p("attn_norm.weight"), eps))
		if q.SwapXZ {
			raw[t] = append(raw[t][I:], raw[t][:I]...)
		}
	}
	w, b, A, D := p("ssm_conv1d.weight"), p("ssm_conv1d.bias"), p("ssm_a"), p("ssm_d")
	state := make([]float64, I*N)
	ys := make([][]float64, len(x))
	for t := range x {
		xs := make([]float64, I)
		for ch := range I {
			xs[ch] = silu(r.causalConv(w, K, ch, t, func(src int) float64 { return raw[src][ch] }) + b[ch])
		}
		dbc := linear(p("ssm_x.weight"), nil, xs)
		dt := linear(p("ssm_dt.weight"), p("ssm_dt.bias"), norm(dbc[:R], "ssm_dt_norm.weight"))
		B, C := norm(dbc[R:R+N], "ssm_b_norm.weight"), norm(dbc[R+N:], "ssm_c_norm.weight")
		if q.SwapBC {
			B, C = C, B
		}
		y := make([]float64, I)
		for d := range I {
			step := dt[d]
			if !q.RawDt {
				step = math.Log1p(math.Exp(step))
			}
			var sum float64
			for s := range N {
				a := A[d*N+s]
				if q.OneDecay {
					a = A[d*N]
				}
				st := &state[d*N+s]
				*st = *st*math.Exp(step*a) + B[s]*xs[d]*step
				sum += *st * C[s]
			}
			if !q.NoD {
				sum += xs[d] * D[d]
			}
			if !q.NoGate {
				sum *= silu(raw[t][I+d])
			}
			y[d] = sum
		}
		ys[t] = y
	}
	return ys
}

// Jamba (TinyJamba: Mamba-1 layers 0, 1 and 3, attention at 2, experts
// in 1 and 3) against the float64 reference written from llama.cpp's
// jamba graph and build_mamba_layer, in one pass, in chunks of 4 (the
// conv and scan state carried through chunk boundaries beside the KV
// cache) and token by token. Each perturbation of the Mamba-1 layer's
// steps, and rotating the attention (which jamba does not), moves the
// reference by more than 3 tolerances.
func TestJambaMatchesReference(t *testing.T) {
	const tol = 1e-3
	pool, m, f, data := loadF32(t, testutil.TinyJamba())
	if !m.Mamba1 || !m.ConvLayer(0) || !m.ConvLayer(1) || m.ConvLayer(2) || m.KVLayers() != 1 || m.KVLayer(2) != 0 || m.RopeLayer(2) ||
		!m.ExpertLayer(1) || !m.ExpertLayer(3) || m.ExpertLayer(0) || m.ExpertLayer(2) || m.SSMDtRank != 32 || m.Blocks[0].SSMBNorm == nil {
		t.Fatalf("config: %+v", m.Config)
	}
	toks := prompt(13)
	ref, want := checkedRefWithin(t, m, pool, f, data, toks, tol)
	mustMoveEach(t, ref, want, 3*tol, asMamba1)
	mustMove(t, "no conv state", ref(refDecoder{convNoState: true}), want, 3*tol)
	mustMoveAll(t, m, f, data, toks, want, 3*tol, "every layer rotated")
}

// Mamba-1 (TinyMamba: every block a Mamba-1 layer alone, Falcon-Mamba's
// weightless norms of the rank, B and C) against the float64 reference
// written from llama.cpp's mamba graph and build_mamba_layer, in one
// pass, in chunks of 4 and token by token; each perturbation of the
// layer's steps moves it by more than 3 tolerances. Without
// ssm.dt_b_c_rms (state-spaces/mamba) the norms are left out, as the
// reference without them.
func TestMambaMatchesReference(t *testing.T) {
	const tol = 1e-3
	for _, norms := range []bool{true, false} {
		spec := testutil.TinyMamba()
		spec.DtBCNorm = norms
		pool, m, f, data := loadF32(t, spec)
		if !m.Mamba1 || !m.SingleOp || m.SSMDtBCNorm != norms || m.KVLayers() != 0 || !m.ConvLayer(2) || m.RopeLayer(0) || m.Blocks[0].SSMBNorm != nil {
			t.Fatalf("config: %+v", m.Config)
		}
		toks := prompt(13)
		ref, want := checkedRefWithin(t, m, pool, f, data, toks, tol)
		var except []string
		if !norms {
			except = []string{"NoNorms"} // the reference has none to leave out
		}
		mustMoveEach(t, ref, want, 3*tol, asMamba1, except...)
		mustMove(t, "no conv state", ref(refDecoder{convNoState: true}), want, 3*tol)
	}
}
