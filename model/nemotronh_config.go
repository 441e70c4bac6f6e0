package model

import (
	"fmt"
	"slices"

	"github.com/lowmem/llm/internal/ops"
)

// nemotronHHparams: NVIDIA's Nemotron-H (Nemotron-H-8B/4B, Nemotron Nano
// 2) as llama.cpp's nemotron_h graph runs it. Each block is one operator
// between attn_norm and the residual sum (Config.SingleOp), told apart
// by the per-layer arrays as llama.cpp tells them: head_count_kv and
// feed_forward_length both 0 make a Mamba-2 layer, feed_forward_length
// above 0 a feed-forward alone — down(ReLU(up·x)²), no gate (ReLU2) —
// and the rest attention, unrotated, scaled by 1/sqrt(head size).
// feed_forward_length must therefore be one value a layer, and some layer
// must attend; attention.head_count must be one value for every layer.
// The Mamba-2 sizes are mamba2Sizes' (any inner size: Nano 2's is 128
// heads of 80, not 2 × its width); attention.layer_norm_rms_epsilon is
// required, as llama.cpp requires it.
func nemotronHHparams(c *Config, m *meta) {
	c.SingleOp, c.ReLU2, c.NoRopeEvery = true, true, 1
	m.mamba2Sizes(c, false)
	m.require(true, "attention.layer_norm_rms_epsilon")
	if hs := m.layerInts("attention.head_count"); hs != nil && slices.Min(hs) != slices.Max(hs) {
		m.fail("%s differs between layers (%d and %d), want one count of query heads", m.key("attention.head_count"), slices.Min(hs), slices.Max(hs))
	}
	k := m.key("feed_forward_length")
	ffn := m.layerInts("feed_forward_length")
	if m.err != nil {
		return
	}
	if ffn == nil {
		raw, _ := m.f.Get(k)
		m.fail("%s is %s, want one width per layer (0 for a Mamba-2 or attention layer)", k, describe(raw))
		return
	}
	attends := false
	for il, f := range ffn {
		switch {
		case f < 0 || f > maxCount:
			m.fail("%s[%d] = %d out of range [0, %d]", k, il, f, maxCount)
			return
		case f > 0:
			c.ConvLayers[il] = false
		case !c.ConvLayers[il]:
			attends = true
		}
	}
	if !attends {
		m.fail("%s and %s leave no attention layer (head_count_kv above 0, feed_forward_length 0)", m.key("attention.head_count_kv"), k)
		return
	}
	c.LayerFFN = ffn
}

// singleOpTensors lists the tensors of nemotron_h's block il, as
// llama.cpp's loader takes them: attn_norm, then a Mamba-2 layer's
// (ssmTensors), a feed-forward's ffn_up and ffn_down of the layer's
// width (nemotron_h_moe: the router, the selection bias, the gate-less
// experts' ffn_up_exps and ffn_down_exps and the shared expert's ffn_up_shexp
// and ffn_down_shexp), or attention's attn_q, attn_k, attn_v and
// attn_output; the biases llama.cpp takes as optional (on the conv kernel, the attention
// projections, ffn_up and ffn_down) when the block has them.
func singleOpTensors(c *Config, il int, has func(name string) bool) []blockTensor {
	if c.ConvLayer(il) && c.Mamba1 {
		return mamba1Tensors(nil, c, il, has) // mamba: the mixer alone
	}
	if c.ConvLayer(il) && c.KVLayers() == 0 {
		// mamba2: llama.cpp requires the kernel's bias.
		return ssmTensors(c, func(name string) bool { return name == "ssm_conv1d.bias" || has(name) })
	}
	if c.ConvLayer(il) {
		return ssmTensors(c, has) // attn_norm first
	}
	e := c.Embd
	ts := []blockTensor{vecTensor("attn_norm.weight", e, func(L *Layer) *[]float32 { return &L.AttnNorm })}
	optional := func(bs ...blockTensor) {
		for _, bt := range bs {
			if has(bt.name) {
				ts = append(ts, bt)
			}
		}
	}
	if c.ExpertLayer(il) {
		f, n, sf := c.ExpertFFN, c.Experts, c.SharedFFN
		return append(ts,
			matTensor("ffn_gate_inp.weight", e, n, func(L *Layer) **ops.Matrix { return &L.Router }),
			vecTensor("exp_probs_b.bias", n, func(L *Layer) *[]float32 { return &L.ExpProbsB }),
			blockTensor{name: "ffn_up_exps.weight", dims: []int{e, f, n}, exp: 2},
			blockTensor{name: "ffn_down_exps.weight", dims: []int{f, e, n}, exp: 3},
			matTensor("ffn_up_shexp.weight", e, sf, func(L *Layer) **ops.Matrix { return &L.ShUp }),
			matTensor("ffn_down_shexp.weight", sf, e, func(L *Layer) **ops.Matrix { return &L.ShDown }))
	}
	if c.FFNLayer(il) {
		f := c.layerFFN(il)
		ts = append(ts,
			matTensor("ffn_up.weight", e, f, func(L *Layer) **ops.Matrix { return &L.Up }),
			matTensor("ffn_down.weight", f, e, func(L *Layer) **ops.Matrix { return &L.Down }))
		optional(
			vecTensor("ffn_up.bias", f, func(L *Layer) *[]float32 { return &L.BUp }),
			vecTensor("ffn_down.bias", e, func(L *Layer) *[]float32 { return &L.BDown }))
		return ts
	}
	q, kv, vv := c.Heads*c.HeadDimK, c.HeadsKV*c.HeadDimK, c.HeadsKV*c.HeadDimV
	ts = append(ts, qkvTensors(LookupArch(c.Arch), c, il, has)...)
	ts = append(ts, matTensor("attn_output.weight", c.attnOutCols(il), e, func(L *Layer) **ops.Matrix { return &L.Wo }))
	optional(
		vecTensor("attn_q.bias", q, func(L *Layer) *[]float32 { return &L.Bq }),
		vecTensor("attn_k.bias", kv, func(L *Layer) *[]float32 { return &L.Bk }),
		vecTensor("attn_v.bias", vv, func(L *Layer) *[]float32 { return &L.Bv }),
		vecTensor("attn_output.bias", e, func(L *Layer) *[]float32 { return &L.Bo }))
	return ts
}

// nemotronHMoEHparams: Nemotron 3 Nano (30B-A3B) as llama.cpp's
// nemotron_h graph runs nemotron_h_moe: nemotron_h's layers, each
// feed-forward layer expert_count experts of expert_feed_forward_length
// (required), expert_used_count a token, chosen by their sigmoid plus the
// selection bias exp_probs_b and weighted by the sigmoid, renormalised
// when expert_weights_norm says so and scaled by expert_weights_scale
// (none when absent or 0, as llama.cpp skips a scale of 0), each expert
// gate-less, down(ReLU(up·x)²); beside them the shared expert of
// expert_shared_feed_forward_length (required), gate-less too. A file
// with a latent projection (moe_latent_size: Nemotron 3 Super) or NextN
// blocks is refused with ErrUnsupportedArch.
func nemotronHMoEHparams(c *Config, m *meta) {
	for _, k := range []string{"moe_latent_size", "nextn_predict_layers"} {
		if v, ok := m.f.Uint(m.key(k)); ok && v > 0 && m.err == nil {
			m.err = fmt.Errorf("model: %s = %d: Nemotron-H's latent experts and NextN blocks are not supported: %w", m.key(k), v, ErrUnsupportedArch)
		}
	}
	nemotronHHparams(c, m)
	m.experts(c, false)
	c.SharedFFN = m.num("expert_shared_feed_forward_length", maxCount, -1, false)
	c.ExpertGating = GatingSigmoid
	c.ExpertNorm = m.flag("expert_weights_norm", false)
	c.ExpertScale = m.finite("expert_weights_scale", 0)
}
