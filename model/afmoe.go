package model

// afmoeHparams: Arcee's Trinity models (Nano, Mini, Large) as llama.cpp's
// afmoe graph runs them. Gemma's shape of block — embeddings times
// √embedding_length, RMS norms before and after attention and the
// feed-forward, per-head Q/K norms before NEOX RoPE — with the attention's
// output multiplied by the sigmoid of attn_gate's product with its input
// before attn_output (Arch.AttnOutGate); three layers of every four
// rotated, the fourth (layers 3, 7 …) global and unrotated, and with
// attention.sliding_window above 0 the rotated ones windowed (llama.cpp
// fixes the pattern at 4, reading no pattern key; 0 or absent: every
// layer global, still every fourth unrotated); leading_dense_block_count
// dense layers, then DeepSeek-V3-style experts: chosen by their sigmoid
// plus the selection bias exp_probs_b (required), weighted by the
// unbiased sigmoids, renormalised when expert_weights_norm says so and
// scaled by expert_weights_scale (0 or absent: not scaled), beside
// expert_shared_count shared experts run as one (0: none).
// attention.layer_norm_rms_epsilon, leading_dense_block_count,
// expert_feed_forward_length and expert_shared_count are required, as
// llama.cpp requires them; expert_gating_func is optional, 0 (none) or
// absent meaning sigmoid. The graph asserts one head size for keys and
// values.
func afmoeHparams(c *Config, m *meta) {
	m.sameHeadSizes(c)
	m.require(true, "attention.layer_norm_rms_epsilon")
	c.Window = m.count("attention.sliding_window", maxCount)
	c.FullEvery, c.NoRopeEvery = 4, 4
	m.routing(c, routingKeys{lead: true, gating: GatingSigmoid, noneIsDefault: true, noShared: true})
}

// gateOutput multiplies each of n tokens' attention output in att (oDim
// floats a token) by its gate, the g floats from off in the token's row of
// qkv (stride floats a row: qkvStride), each gate value taken through its
// sigmoid (afmoe) or softplus (laguna) and scaling oDim/g outputs in turn:
// one each (afmoe, Laguna-M.1), or a whole head (Laguna-XS.2's gate a
// head). The gate's floats are spent.
func gateOutput(att, qkv []float32, n, stride, off, oDim, g int, soft bool) {
	w := oDim / g
	for t := range n {
		o, gs := att[t*oDim:(t+1)*oDim], qkv[t*stride+off:t*stride+off+g]
		for h, v := range gs {
			if soft {
				v = softplus(v)
			} else {
				v = sigmoid(v)
			}
			seg := o[h*w : (h+1)*w]
			for i := range seg {
				seg[i] *= v
			}
		}
	}
}
