package model

// This file is GLM-4.5's (glm4moe) and Ling 2.0's (bailingmoe2)
// configuration, as llama.cpp's loaders read them. Both are
// DeepSeek-V3-style mixtures of experts on ordinary attention: NEOX RoPE
// over rope.dimension_count of each head (half, in the released files),
// leading dense layers, sigmoid routing chosen with a selection bias,
// weighted by the unbiased sigmoids renormalised and scaled, shared
// experts beside the routed ones, and nextn_predict_layers NextN blocks
// after the main stack that no pass runs (Config.NextN, Arch.NextN).

// routingKeys says which of DeepSeek V3's routing keys an architecture's
// loader requires: leading_dense_block_count (lead),
// expert_weights_scale (scale), and expert_gating_func unless gating
// gives its default; sharedWidth is one shared expert's width (0: the
// experts').
type routingKeys struct {
	lead, scale bool
	gating      Gating
	sharedWidth int
	// noneIsDefault: expert_gating_func 0 (llama.cpp's NONE) means gating,
	// as afmoe's loader takes it, rather than an unknown function;
	// noShared: expert_shared_count may be 0, no shared expert (afmoe);
	// ownShared: the architecture's hook reads the shared experts
	// (laguna).
	noneIsDefault, noShared, ownShared bool
}

// routing reads DeepSeek V3's routing as deepseek2, glm4moe and
// bailingmoe2 share it: the experts' counts and width, the leading dense
// layers, expert_shared_count shared experts run as one, the chosen
// weights' renormalisation and scale, the gating function and the
// expert groups.
func (m *meta) routing(c *Config, r routingKeys) {
	m.experts(c, false)
	m.denseLead(c, r.lead)
	if r.sharedWidth == 0 {
		r.sharedWidth = c.ExpertFFN
	}
	if !r.ownShared {
		m.sharedExperts(c, r.sharedWidth, r.noShared)
	}
	m.expertWeights(c, r.scale)
	c.ExpertGating = r.gating
	if v, ok := m.f.Uint(m.key("expert_gating_func")); r.gating == 0 || m.has("expert_gating_func") && !(r.noneIsDefault && ok && v == 0) {
		m.gating(c)
	}
	m.expertGroups(c)
}

// nextNTensors are a NextN block's own tensors that llama.cpp requires
// (glm4moe, bailingmoe2): the projection of the embedding and the hidden
// state joined, and their two norms. Its embed_tokens, shared_head_head
// and shared_head_norm are optional there, and so not listed.
var nextNTensors = []string{"nextn.eh_proj.weight", "nextn.enorm.weight", "nextn.hnorm.weight"}

// glm4moeHparams: GLM-4.5, GLM-4.5-Air, GLM-4.6 and GLM-4.7 as llama.cpp's
// glm4moe graph runs them. Required, as llama.cpp requires them:
// expert_feed_forward_length, expert_count, expert_used_count,
// expert_shared_count (the shared experts run as one of their summed
// width) and expert_weights_scale; optional: leading_dense_block_count
// (0), expert_weights_norm (false), expert_gating_func (sigmoid) and the
// expert groups. One head size serves keys and values (the graph asserts
// it); rope.dimension_sections turning on multimodal RoPE (GLM-4.5V) is
// refused as glm4's is.
func glm4moeHparams(c *Config, m *meta) {
	m.sameHeadSizes(c)
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.noMultimodalRope("glm4moe", "GLM-4.5V")
	m.routing(c, routingKeys{scale: true, gating: GatingSigmoid})
	m.nextN(c)
}

// bailingmoe2Hparams: Ling and Ring 2.0 (mini, flash) as llama.cpp's
// bailingmoe2 graph runs them: one fused attn_qkv whose query is as wide
// as the embedding (the graph's views assume it), per-head Q/K norms;
// leading_dense_block_count, expert_feed_forward_length,
// expert_shared_feed_forward_length, expert_shared_count,
// expert_weights_scale and expert_gating_func all required, as llama.cpp
// requires them; the shared experts expert_shared_count of
// expert_shared_feed_forward_length (or, when that is 0, of the experts'
// width) run as one; the expert groups (Ling's 8, the best 4 a token)
// limit the choice.
func bailingmoe2Hparams(c *Config, m *meta) {
	switch {
	case m.err != nil:
	case c.Heads*c.HeadDimK != c.Embd:
		m.fail("%s = %d × %s = %d is not %s = %d, as bailingmoe2's fused attn_qkv requires",
			m.key("attention.head_count"), c.Heads, m.key("attention.key_length"), c.HeadDimK, m.key("embedding_length"), c.Embd)
	case c.HeadDimV != c.HeadDimK:
		m.fail("%s = %d differs from %s = %d", m.key("attention.value_length"), c.HeadDimV, m.key("attention.key_length"), c.HeadDimK)
	}
	m.require(true, "attention.layer_norm_rms_epsilon")
	m.require(true, "expert_shared_feed_forward_length")
	width := m.count("expert_shared_feed_forward_length", maxCount)
	m.routing(c, routingKeys{lead: true, scale: true, sharedWidth: width})
	m.nextN(c)
}
