package model

// maxLoopedLayers is llama.cpp's LLAMA_MAX_LAYERS: nanbeige's loader
// asserts that block_count × num_loops, the logical layers it gives each
// their own KV cells, stays within it.
const maxLoopedLayers = 512

// nanbeigeHparams: Nanbeige 4.x as llama.cpp's nanbeige graph runs it —
// llama's block (RMSNorms, NORM RoPE, Q, K and V fused or apart with
// optional biases, SwiGLU, rope_freqs optional; the output tied when the
// file has no output.weight) with the stack of blocks run num_loops times
// (default 1) on the same weights, each run's attention over cache cells
// of its own (Config.Loops: llama.cpp makes block_count × num_loops
// logical layers, each with its own KV cache layer). Between two runs the
// residual stream is replaced by output_norm of it unless
// skip_loop_final_norm (default false) says not to (Config.LoopNorm); the
// final norm after the last run is the usual one.
// attention.layer_norm_rms_epsilon is required, as llama.cpp requires it;
// num_loops 0, or block_count × num_loops above 512, aborts llama.cpp's
// loader and is refused here. llama.cpp asserts value heads as wide as
// key heads. attention.scale is not read (llama.cpp's loader does not).
func nanbeigeHparams(c *Config, m *meta) {
	m.sameHeadSizes(c)
	m.require(true, "attention.layer_norm_rms_epsilon")
	c.Loops = 1
	if m.has("num_loops") {
		c.Loops = m.num("num_loops", maxLoopedLayers, -1, false)
	}
	if m.err == nil && c.Layers*c.Loops > maxLoopedLayers {
		m.fail("%s = %d × %s = %d layers run, more than %d", m.key("block_count"), c.Layers, m.key("num_loops"), c.Loops, maxLoopedLayers)
	}
	c.LoopNorm = !m.flag("skip_loop_final_norm", false)
}
