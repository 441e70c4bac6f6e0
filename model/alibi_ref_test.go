package model

import (
	"math"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// alibiPerturb names the reference's departures from ggml's ALiBi slopes
// in a causal decoder (bloom, mpt); each must move its logits.
type alibiPerturb struct {
	None      bool `perturb:"no ALiBi"`
	HeadCount bool `perturb:"slopes from the head count"`           // n the head count, not the largest power of 2 below it
	OneLadder bool `perturb:"m0's powers past the power of 2"`      // the heads past n on m0's ladder, not m1's odd powers
	MaxBias8  bool `perturb:"maximum bias 8, not the file's"`       // mpt: attention.max_alibi_bias ignored
	Rising    bool `perturb:"bias growing with the key's position"` // slope·(key − query) of the older keys' sign turned round
}

// alibiBias64 is head h's ALiBi bias of a key dist positions before the
// query, computed in float64 as ggml's soft_max takes the slopes from the
// maximum bias (bloom's fixed 8, llama.cpp's loader reading no key;
// mpt's attention.max_alibi_bias, absent or at or below 0 no bias): with n the
// largest power of 2 not above the head count, m0^(h+1), m0 =
// 2^(−max/n), for the first n heads and m1^(2(h−n)+1), m1 = 2^(−max/2n),
// for the rest, times llama.cpp's mask value −|query − key|. ok is false
// for a model without ALiBi.
func (r *refDecoder) alibiBias64(h, dist int) (bias float64, ok bool) {
	c, p := r.c, r.alibi
	if c.ALiBi == nil || p.None {
		return 0, false
	}
	maxBias := 8.0
	if c.Arch == "mpt" && !p.MaxBias8 {
		maxBias, _ = r.f.Float(c.Arch + ".attention.max_alibi_bias") // absent: 0
	}
	if maxBias <= 0 {
		return 0, true
	}
	n := 1 << int(math.Floor(math.Log2(float64(c.Heads))))
	if p.HeadCount {
		n = c.Heads
	}
	slope := math.Pow(2, -maxBias*float64(h+1)/float64(n))
	if h >= n && !p.OneLadder {
		slope = math.Pow(2, -maxBias/2*float64(2*(h-n)+1)/float64(n))
	}
	if p.Rising {
		return slope * float64(dist), true
	}
	return -slope * float64(dist), true
}

// bloom's and mpt's logits against the float64 reference of their graphs
// (gpt2's blocks, ALiBi in place of positions, bloom's embedding
// LayerNorm, mpt's optional biases and clamp) with non-power-of-2 head
// counts (6 and 10: the heads past 4 and 8 take m1's odd powers), in one pass and
// in chunks, the KV cache carrying each chunk's keys at their positions;
// every perturbation of the slopes, and every bias and norm left out,
// moves the reference past three times the tolerance. The tolerance is
// F16 steps: GELU's input and output and the attention weights go
// through F16 here as in ggml, and a float32 value landing on the other
// F16 step from the float64 one moves the logits from there on. Measured:
// bloom 4.8e-5 (seeds 131 and 141 tried before: 3.6e-3, 1.1e-3), mpt
// 2.1e-3 (seeds 141, 149, 151: 6.9e-3, 5.8e-3, 5.7e-3; with a feed-forward
// of 64, half TinyMPT's, 8.3e-5: GELU's steps), mpt/clamp 1.6e-3, refact
// 3.8e-4 (pure Go 9.9e-6, AVX2 9.3e-5), baichuan of 40 blocks 2.5e-3
// (pure Go 2.3e-3, AVX2 2.8e-3).
func TestALiBiDecodersMatchReference(t *testing.T) {
	pool := ops.NewPool(2)
	defer pool.Close()
	for _, tc := range []struct {
		spec    testutil.ModelSpec
		without []string
		except  []string
		also    []string
	}{
		{testutil.TinyBloom(), []string{"token_embd_norm.weight", "token_embd_norm.bias", "attn_qkv.bias", "attn_output.bias", "attn_norm.bias",
			"ffn_norm.bias", "ffn_up.bias", "ffn_down.bias", "output_norm.bias"}, []string{"MaxBias8"}, nil},
		{testutil.TinyMPT(), nil, []string{"MaxBias8"}, nil},
		{testutil.TinyMPTClamp(), []string{"attn_qkv.bias", "attn_output.bias", "attn_norm.bias", "ffn_norm.bias", "ffn_up.bias",
			"ffn_down.bias", "output_norm.bias"}, nil, []string{"no clamp"}},
		// refact: llama's blocks (RMSNorms, SwiGLU) with ALiBi of
		// maximum bias 8 on one KV head, 6 heads; baichuan of 40 blocks
		// (13B): llama's blocks with ALiBi of maximum bias 8, 4 heads, so
		// that no head is past the power of 2.
		{testutil.TinyRefact(), nil, []string{"MaxBias8"}, nil},
		{testutil.TinyBaichuan13B(), nil, []string{"MaxBias8", "HeadCount", "OneLadder"}, nil},
	} {
		spec := tc.spec
		spec.WeightType = quant.F32
		t.Run(spec.Variant(), func(t *testing.T) {
			m, f, data := loadSpec(t, spec)
			toks := prompt(13)
			const tol = 1e-2
			ref, want := checkedRefWithin(t, m, pool, f, data, toks, tol)
			mustMoveEach(t, ref, want, 3*tol, func(p alibiPerturb) refDecoder { return refDecoder{alibi: p} }, tc.except...)
			mustMoveAll(t, m, f, data, toks, want, 3*tol, append(tc.also, applicable(t, m.Config, "RMSNorm, not LayerNorm")...)...)
			for _, name := range tc.without {
				mustMove(t, "without "+name, ref(refDecoder{without: []string{name}}), want, 3*tol)
			}
		})
	}
}
