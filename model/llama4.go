package model

import "fmt"

// llama4Chunk is Llama 4's attention chunk and its temperature's floor
// divisor, which llama.cpp fixes at 8192 for the chunked graph whatever
// attention.sliding_window says.
const llama4Chunk = 8192

// llama4Hparams: Llama 4 (Scout 17B-16E, Maverick 17B-128E) as llama.cpp's
// llama4 graph runs it. Llama's block (RMS norms, SwiGLU, NORM RoPE with
// rope_freqs' factors) with three layers of four (the pattern
// attention.sliding_window_pattern, default 4) attending within chunks of
// 8192 positions and rotated, the fourth (layers 3, 7 …: llama.cpp's
// n_no_rope_layer_step, 4) global and unrotated, its queries scaled by the
// attention temperature log(⌊(pos+1)/8192⌋+1)·0.1 + 1; the rotated layers'
// Q and K RMS-normalised head by head without a weight after RoPE, unless
// the model has 128 experts (Maverick), as llama.cpp's use_kq_norm
// decides. The layers il with il+1 a multiple of interleave_moe_layer_step
// (required; 0: none) are experts — expert_count of them, chosen by their
// sigmoid, expert_used_count a token, each reading the token times its
// weight (weight_before_ffn) — beside a shared expert as wide as one
// (expert_feed_forward_length, required); the others a dense feed-forward
// of feed_forward_length. attention.layer_norm_rms_epsilon is required;
// rope.freq_base_swa (the chunked layers' base) optional, and so is each
// of attn_q/k/v.bias (Arch.OptionalQKVBias), as llama.cpp d32676d77 loads
// them.
//
// Refused: attention.sliding_window = 0, llama.cpp's unchunked graph,
// whose last layer, unrotated, takes a temperature of scale 0 that
// llama.cpp asserts against; more than one expert a token, which no Llama
// 4 has (this package weights the experts' inputs for one).
func llama4Hparams(c *Config, m *meta) {
	m.sameHeadSizes(c)
	m.require(true, "attention.layer_norm_rms_epsilon", "interleave_moe_layer_step")
	if m.err == nil && c.RopeDim != c.HeadDimK {
		m.fail("%s = %d differs from the head size %d", m.key("rope.dimension_count"), c.RopeDim, c.HeadDimK)
	}
	m.experts(c, false)
	step := m.count("interleave_moe_layer_step", maxCount)
	if m.has("attention.sliding_window") && m.count("attention.sliding_window", maxCount) == 0 && m.err == nil {
		m.err = fmt.Errorf("model: %s = 0 (llama4 without chunked attention) is not supported: llama.cpp asserts on its unrotated last layer: %w",
			m.key("attention.sliding_window"), ErrUnsupportedArch)
	}
	if m.err == nil && c.ExpertsUsed != 1 {
		m.err = fmt.Errorf("model: %s = %d: llama4's experts weighted before their feed-forward run here one a token: %w",
			m.key("expert_used_count"), c.ExpertsUsed, ErrUnsupportedArch)
	}
	if m.err != nil {
		return
	}
	c.Window, c.Chunked = llama4Chunk, true
	c.FullEvery, c.NoRopeEvery = 4, 4
	m.swaPattern(c)
	c.RopeBaseSWA = m.positive("rope.freq_base_swa", c.RopeBase)
	c.AttnTempScale, c.AttnTempOffset, c.AttnTempFloor, c.AttnTempNoPE = 0.1, 1, llama4Chunk, true
	c.QKUnitNorm = c.Experts != 128
	c.MoELayers = make([]bool, c.Layers)
	for il := range c.MoELayers {
		c.MoELayers[il] = step > 0 && (il+1)%step == 0
	}
	c.ExpertGating = GatingSigmoid
	c.ExpertInputWeighted = true
	c.SharedFFN = c.ExpertFFN
}
