package model

import (
	"fmt"
	"math"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
)

// rwkvPerturb lists perturbations of the RWKV architectures' steps,
// which no Config field names, each named by its tag (mustMoveEach);
// each architecture's test passes over those of the others'.
type rwkvPerturb struct {
	NoValueRes  bool `perturb:"no value residual"` // RWKV-7: the value's mix with the first layer's left out
	NoGroupNorm bool `perturb:"no group norm"`
	NoShift     bool `perturb:"no token shift"` // each token mixed with itself
	SigmoidW    bool `perturb:"decay sigmoid"`  // the decay's pair through a sigmoid instead of tanh
	TanhG       bool `perturb:"gate tanh"`      // RWKV-7: the gate's pair through tanh instead of a sigmoid
	NoSquare    bool `perturb:"no ReLU²"`       // the channel mix's ReLU not squared
	NoBonus     bool `perturb:"no r·k bonus"`   // RWKV-7's r_k, RWKV-6's time_mix_first
	NoEmbedNorm bool `perturb:"no embedding norm"`
	NoState     bool `perturb:"no wkv state"`            // every pass starting from the empty state
	NoDataShift bool `perturb:"no data-dependent mix"`   // RWKV-6: the mixes by their lerps alone
	SigmoidGate bool `perturb:"gate sigmoid"`            // RWKV-6: the gate σ(g), not SiLU(g)
	NoCMGate    bool `perturb:"no channel receptance"`   // RWKV-6: the channel mix's value ungated
	KUndecayed  bool `perturb:"k not times 1-w"`         // QRWKV: the key as projected
	KVModulo    bool `perturb:"kv heads modulo"`         // QRWKV: head h reads kv head h mod head_count_kv
	NoBiases    bool `perturb:"no r/k/v biases"`         // QRWKV6
	LayerNormed bool `perturb:"LayerNorms for RMSNorms"` // QRWKV's Qwen2 body
	NoSiLU      bool `perturb:"SwiGLU's gate as it is"`  // QRWKV's Qwen2 body: up·gate, not up·SiLU(gate)
}

// rwkv7Only, rwkv6Only, qrwkv6Only and qwen2BodyOnly name the
// perturbations the other architectures' tests pass over; rwkvOnly
// those of the RWKV body (LayerNorms, the channel mix) a QRWKV model's
// does.
var (
	rwkv7Only     = []string{"NoValueRes", "TanhG"}
	rwkv6Only     = []string{"NoDataShift", "SigmoidGate", "NoCMGate"}
	qrwkv6Only    = []string{"KUndecayed", "KVModulo", "NoBiases"}
	qwen2BodyOnly = []string{"LayerNormed", "NoSiLU"}
	rwkvOnly      = []string{"NoEmbedNorm", "NoSquare"}
)

func sig64(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// squash64 is tanh of each of x in place, or the sigmoid with sigmoid.
func squash64(x []float64, sigmoid bool) []float64 {
	for i, v := range x {
		if sigmoid {
			x[i] = sig64(v)
		} else {
			x[i] = math.Tanh(v)
		}
	}
	return x
}

// A shiftFunc is row t of rows mixed toward row t-1 (zeros before the
// first) by lerp.
type shiftFunc func(rows [][]float64, t int, lerp []float64) []float64

// rwkvGroupNorm is the group norm of a token's heads' outputs in place:
// a LayerNorm over each head, eps 64e-5, with time_mix_ln's weight and
// bias; none in an ARWKV-7 block without them.
func (r *refDecoder) rwkvGroupNorm(y []float64, p func(string) []float64) {
	N := r.c.WKVHead
	w, b := p("time_mix_ln.weight"), p("time_mix_ln.bias")
	for h := 0; h < len(y) && !r.rwkv.NoGroupNorm && w != nil; h += N {
		copy(y[h:h+N], layerNorm64(y[h:h+N], w[h:h+N], b[h:h+N], 64e-5))
	}
}

// rwkvHidden is every token's hidden state after the final norm, written
// from llama.cpp's rwkv6 and rwkv7 graphs in float64: the embeddings'
// LayerNorm; per block timeMix's outputs y of the attn_norm rows and
// gates g (each token's), y·g through time_mix_output added, the channel mix's of the
// attn_norm_2 rows added (RWKV-6's gated by its receptance), the stream
// halved after every rescale_every_n_layers-th block; the final norm.
// A QRWKV model (rwkv6qwen2, arwkv7) has no embeddings' norm, RMSNorms
// without biases and Qwen2's SwiGLU feed-forward for the channel mix.
func (r *refDecoder) rwkvHidden(tokens []int32, timeMix func(il int, p func(string) []float64, cur [][]float64, shifted shiftFunc) (ys, gs [][]float64)) [][]float64 {
	c, q := r.c, r.rwkv
	E, n := c.Embd, len(tokens)
	eps := float64(c.NormEps)
	emb := r.tensor("token_embd.weight")
	x := make([][]float64, n)
	for t, tok := range tokens {
		x[t] = append([]float64(nil), emb[int(tok)*E:(int(tok)+1)*E]...)
		if !q.NoEmbedNorm && !c.QRWKV {
			x[t] = layerNorm64(x[t], r.tensor("token_embd_norm.weight"), r.tensor("token_embd_norm.bias"), eps)
		}
	}
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
	// norm is a LayerNorm with bias, or QRWKV's RMSNorm (bias nil).
	norm := func(x, w, b []float64) []float64 {
		switch {
		case c.QRWKV && q.LayerNormed:
			return layerNorm64(x, w, nil, float64(c.RMSEps))
		case c.QRWKV:
			return rmsNorm64(x, w, float64(c.RMSEps))
		}
		return layerNorm64(x, w, b, eps)
	}
	norms := func(w, b []float64) [][]float64 {
		out := make([][]float64, n)
		for t := range x {
			out[t] = norm(x[t], w, b)
		}
		return out
	}
	add := func(t int, o []float64) {
		for i := range o {
			x[t][i] += o[i]
		}
	}
	for il := range c.Layers {
		p := func(s string) []float64 { return r.tensor(fmt.Sprintf("blk.%d.%s", il, s)) }
		ys, gs := timeMix(il, p, norms(p("attn_norm.weight"), p("attn_norm.bias")), shifted)
		for t, y := range ys {
			for i := range y {
				y[i] *= gs[t][i]
			}
			add(t, linear(p("time_mix_output.weight"), nil, y))
		}
		if c.QRWKV {
			// Qwen2's SwiGLU feed-forward for the channel mix.
			for t, xn := range norms(p("ffn_norm.weight"), nil) {
				gate, up := linear(p("ffn_gate.weight"), nil, xn), linear(p("ffn_up.weight"), nil, xn)
				for i, g := range gate {
					if !q.NoSiLU {
						g *= sig64(g)
					}
					up[i] *= g
				}
				add(t, linear(p("ffn_down.weight"), nil, up))
			}
			continue
		}
		ffn := norms(p("attn_norm_2.weight"), p("attn_norm_2.bias"))
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
			if c.RWKV6 && !q.NoCMGate {
				rr := linear(p("channel_mix_receptance.weight"), nil, shifted(ffn, t, p("channel_mix_lerp_r.weight")))
				for i := range o {
					o[i] *= sig64(rr[i])
				}
			}
			add(t, o)
		}
		if c.RescaleEvery > 0 && (il+1)%c.RescaleEvery == 0 {
			for t := range x {
				for i := range x[t] {
					x[t][i] *= 0.5
				}
			}
		}
	}
	for t := range x {
		var b []float64
		if !c.QRWKV {
			b = r.tensor("output_norm.bias")
		}
		x[t] = norm(x[t], r.tensor("output_norm.weight"), b)
	}
	return x
}

// rwkvMatchesReference compares spec's model (three layers, F32) with
// the float64 reference written from llama.cpp's graph and ggml's wkv
// op, in one pass, in chunks of 4 (the shifted rows and the heads'
// states carried through chunk boundaries) and token by token, after
// ok has checked its Config; each perturbation of the steps but the
// other architecture's moves the reference by more than 3 tolerances.
// It returns what mustMoveAll takes.
func rwkvMatchesReference(t *testing.T, spec testutil.ModelSpec, ok func(m *Model) bool, other []string) (m *Model, f *gguf.File, data []byte, toks []int32, want [][]float64) {
	t.Helper()
	const tol = 1e-3
	pool, m, f, data := loadF32(t, spec)
	if !ok(m) || m.KVLayers() != 0 || !m.ConvLayer(2) || m.WKVHead != 32 || (m.OutNormB == nil || m.EmbedNormB == nil) != m.QRWKV {
		t.Fatalf("config: %+v", m.Config)
	}
	toks = prompt(13)
	ref, want := checkedRefWithin(t, m, pool, f, data, toks, tol)
	mustMoveEach(t, ref, want, 3*tol, func(q rwkvPerturb) refDecoder { return refDecoder{rwkv: q} }, other...)
	return m, f, data, toks, want
}
