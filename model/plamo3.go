package model

import "fmt"

// plamo3Hparams: Preferred Networks' PLaMo 3 as llama.cpp's plamo3 graph
// runs it — gemma3's block (pre- and post-norms around attention and the
// feed-forward, per-head Q/K RMSNorms before NEOX RoPE) with SwiGLU
// over one ffn_up holding the gate rows then the up rows, Q, K and V in
// one attn_qkv, the output tied to the embedding when the file has no
// output.weight. The RMS epsilon is required, as llama.cpp requires it.
// With attention.sliding_window above 0, attention.sliding_window_pattern
// (default a period of 8, the last layer of each period global; or one
// flag a layer) says which layers are windowed, and some must be, as
// llama.cpp asserts; those rotate with rope.freq_base_swa (default
// rope.freq_base) and the model's linear factor. llama.cpp keeps YaRN on
// the windowed layers over their own base, which this package's second
// RoPE table does not do, so YaRN with a windowed base of its own is
// refused (ErrUnsupportedArch).
func plamo3Hparams(c *Config, m *meta) {
	m.require(true, "attention.layer_norm_rms_epsilon")
	c.Window = m.count("attention.sliding_window", maxCount)
	if m.err != nil || c.Window == 0 {
		return
	}
	c.FullEvery = 8
	m.swaPattern(c)
	m.windowsSome(c)
	c.RopeBaseSWA = m.positive("rope.freq_base_swa", c.RopeBase)
	if m.err == nil && c.YarnExt != 0 && c.RopeBaseSWA != c.RopeBase {
		m.err = fmt.Errorf("model: %s = %g with YaRN: plamo3's windowed layers would rotate with YaRN over their own base, which this package does not run: %w",
			m.key("rope.freq_base_swa"), c.RopeBaseSWA, ErrUnsupportedArch)
	}
}
