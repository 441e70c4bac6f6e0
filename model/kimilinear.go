package model

import (
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/ops"
)

// kimiLinearHparams: Kimi Linear (Kimi-Linear-48B-A3B) as llama.cpp's
// kimi-linear graph runs it. attention.head_count_kv holds a count a
// layer: 0 makes the layer Kimi Delta Attention (Config.KDA), 1 multi-head
// latent attention without RoPE. Required, as llama.cpp requires them:
// attention.layer_norm_rms_epsilon, key_length_mla, value_length_mla,
// kv_lora_rank, ssm.conv_kernel, kda.head_dim (the delta heads' size;
// there are attention.head_count of them), expert_feed_forward_length,
// expert_shared_count (that many shared experts of the experts' width run
// as one) and expert_gating_func; leading_dense_block_count (0) and
// expert_weights_scale (0: the weights unscaled, as llama.cpp's
// build_moe_ffn skips a scale of 0 or 1) are optional. llama.cpp always
// renormalises the chosen experts' weights (it never reads
// expert_weights_norm), and reads no expert groups. The latent attention is deepseek2's absorbed form, its queries
// and keys unrotated (the rope part stays as it is: NoRopeEvery 1),
// scaled by 1/sqrt(key_length_mla); value_length, which only the latent's
// cache would use and llama.cpp leaves at its default, is the latent's.
// The query's low-rank form (q_lora_rank above 0, attn_q_a) and the older
// attn_kv_b are refused: llama.cpp's kimi-linear graph multiplies by
// attn_q and attn_k_b/attn_v_b alone.
func kimiLinearHparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon", "attention.key_length_mla", "attention.value_length_mla",
		"attention.kv_lora_rank", "ssm.conv_kernel", "kda.head_dim", "expert_feed_forward_length", "expert_shared_count",
		"expert_gating_func")
	if m.err != nil {
		return
	}
	c.HeadDimV = m.num("attention.kv_lora_rank", maxHeadDim, -1, false)
	m.latentAttention(c)
	if m.err == nil && c.QLoraRank > 0 {
		m.err = fmt.Errorf("model: %s = %d: llama.cpp's kimi-linear graph projects the query by attn_q alone: %w", m.key("attention.q_lora_rank"), c.QLoraRank, ErrUnsupportedArch)
	}
	m.routing(c, routingKeys{})
	c.ExpertNorm = true
	c.ExpertGroups, c.ExpertGroupsUsed = 0, 0
	c.NoRopeEvery = 1
	c.KQScale = 1 / float32(math.Sqrt(float64(c.HeadDimKMLA)))
	c.DeltaNet, c.KDA = true, true
	c.SSMConv = m.num("ssm.conv_kernel", maxConvKernel, -1, false)
	c.SSMState = m.num("kda.head_dim", maxHeadDim, -1, false)
	if m.err == nil && c.SSMConv < 2 {
		m.fail("%s = %d, want at least 2", m.key("ssm.conv_kernel"), c.SSMConv)
	}
	if m.err == nil && int64(c.Heads)*int64(c.SSMState)*int64(c.SSMState) > maxSSMLayerFloats {
		m.fail("%s = %d heads of %s = %d is a state of more than %d floats a layer", m.key("attention.head_count"), c.Heads, m.key("kda.head_dim"), c.SSMState, maxSSMLayerFloats)
	}
	c.SSMHeads, c.SSMGroups, c.SSMInner = c.Heads, c.Heads, c.Heads*c.SSMState
}

// kdaTensors lists the tensors of a Kimi Delta Attention block as
// llama.cpp's kimi-linear loader takes them: the norm; attn_q, attn_k
// and attn_v (Embd → SSMInner each) and their kernels ssm_conv1d_q, _k
// and _v ([SSMConv, 1, SSMInner], read one after another into ConvW as
// the convolution's channels); the decay's low-rank pair ssm_f_a (Embd →
// SSMState) and ssm_f_b (→ SSMInner), its bias ssm_dt.bias (SSMInner)
// and ssm_a (-exp(A_log), one a head); ssm_beta (one a head); the output
// gate's pair ssm_g_a and ssm_g_b; ssm_norm (SSMState, shared by the
// heads) and attn_output (SSMInner → Embd); then the feed-forward's norm
// and the feed-forward.
func kdaTensors(a *Arch, c *Config, il int, has func(name string) bool) []blockTensor {
	e, I, N, H := c.Embd, c.SSMInner, c.SSMState, c.SSMHeads
	ts := []blockTensor{
		vecTensor("attn_norm.weight", e, func(L *Layer) *[]float32 { return &L.AttnNorm }),
		matTensor("attn_q.weight", e, I, func(L *Layer) **ops.Matrix { return &L.Wq }),
		matTensor("attn_k.weight", e, I, func(L *Layer) **ops.Matrix { return &L.Wk }),
		matTensor("attn_v.weight", e, I, func(L *Layer) **ops.Matrix { return &L.Wv }),
		{dims: []int{c.SSMConv, 1, I, 1, 3}, vec: func(L *Layer) *[]float32 { return &L.ConvW },
			parts: []string{"ssm_conv1d_q.weight", "ssm_conv1d_k.weight", "ssm_conv1d_v.weight"}},
		matTensor("ssm_f_a.weight", e, N, func(L *Layer) **ops.Matrix { return &L.KDAFA }),
		matTensor("ssm_f_b.weight", N, I, func(L *Layer) **ops.Matrix { return &L.KDAFB }),
		matTensor("ssm_beta.weight", e, H, func(L *Layer) **ops.Matrix { return &L.WBeta }),
		{name: "ssm_a", dims: []int{1, H, 1, 1}, vec: func(L *Layer) *[]float32 { return &L.SSMA }},
		vecTensor("ssm_dt.bias", I, func(L *Layer) *[]float32 { return &L.SSMDtB }),
		matTensor("ssm_g_a.weight", e, N, func(L *Layer) **ops.Matrix { return &L.KDAGA }),
		matTensor("ssm_g_b.weight", N, I, func(L *Layer) **ops.Matrix { return &L.KDAGB }),
		vecTensor("ssm_norm.weight", N, func(L *Layer) *[]float32 { return &L.SSMNorm }),
		matTensor("attn_output.weight", I, e, func(L *Layer) **ops.Matrix { return &L.ConvOut }),
		vecTensor("ffn_norm.weight", e, func(L *Layer) *[]float32 { return &L.FFNNorm }),
	}
	return append(ts, ffnTensors(a, c, il, has)...)
}

// kdaInputs computes a Kimi Delta Attention layer's input products of a
// into p.qkv's rows (deltaInProj floats: q, k, v, the output gate, β,
// then the decay's argument a key element), the low-rank pairs through
// p.gu (SSMState floats a token for each first product).
func (s *State) kdaInputs(L *Layer, a acts, p *pass, w int) error {
	c := &s.m.Config
	cw, I, N, n := c.ssmConvWidth(), c.SSMInner, c.SSMState, a.n
	ps := s.gp[:0]
	ps = append(ps, projection{w: L.Wq}, projection{w: L.Wk, off: I}, projection{w: L.Wv, off: 2 * I}, projection{w: L.WBeta, off: cw + I})
	err := s.mulShared(a, ps, p.qkv, w)
	s.gp = [maxShared]projection{}
	if err != nil {
		return err
	}
	for _, pair := range [2]struct {
		first, second *ops.Matrix
		off           int
	}{{L.KDAFA, L.KDAFB, cw + I + c.SSMHeads}, {L.KDAGA, L.KDAGB, cw}} {
		low := p.gu[:n*N]
		if err := s.mul(pair.first, a, low, N); err != nil {
			return err
		}
		if err := s.mul(pair.second, s.acts(low, N, n), p.qkv[pair.off:], w); err != nil {
			return err
		}
	}
	return nil
}

// kdaDecay turns head h's decay arguments g (SSMState floats, in place)
// into its decays exp(softplus(g + dt_bias)·a[h]).
func kdaDecay(g, dtB []float32, a float32) {
	for i := range g {
		g[i] = float32(math.Exp(float64(softplus(g[i]+dtB[i]) * a)))
	}
}

// kdaGate multiplies each normalised output y by the sigmoid of its gate.
func kdaGate(y, gate []float32) {
	for i := range y {
		y[i] *= sigmoid(gate[i])
	}
}
