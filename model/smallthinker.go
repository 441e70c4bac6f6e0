package model

// smallthinkerWindow is the sliding window llama.cpp gives smallthinker's
// windowed layers whatever attention.sliding_window says: its loader
// reads the key only to learn whether the model windows at all.
const smallthinkerWindow = 4096

// smallthinkerHparams: PowerInfer's SmallThinker (4B-A0.6B, 21B-A3B) as
// llama.cpp's smallthinker graph runs it. Every layer's feed-forward is
// expert_count experts of expert_feed_forward_length, expert_used_count a
// token, with no shared expert; the experts are ReGLU (ReLU of the gate
// times the up); the router reads the layer's input, before attention
// and its norm (the pre-attention router), its logits made probabilities
// by expert_gating_func (softmax or sigmoid as the converter writes it;
// required, since llama.cpp's graph aborts without one) and the chosen
// ones' weights renormalised to sum to 1. With attention.sliding_window
// above 0 (0, as absent, means none), layers 1–3 of every four attend through a window of 4096 and
// rotate, the first of each four attends to the whole context unrotated
// (NoPE); without it every layer is global and rotated. The graph
// asserts one head size for keys and values, and whole heads rotated.
func smallthinkerHparams(c *Config, m *meta) {
	m.wholeHeads(c)
	k := m.key("attention.sliding_window")
	raw, present := m.f.Get(k)
	w, ok := m.f.Uint(k)
	if present && !ok {
		m.fail("%s is %s, want a window size (0 for none)", k, describe(raw))
	}
	if w > 0 {
		c.Window = smallthinkerWindow
		c.SWALayers = make([]bool, c.Layers)
		for il := range c.SWALayers {
			c.SWALayers[il] = il%4 != 0
		}
		c.NoRopeEvery, c.NoRopeLead = 4, true
	}
	m.experts(c, false)
	m.gating(c)
	c.ExpertNorm, c.ReGLU, c.RouterPreAttn = true, true, true
}
