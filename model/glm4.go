package model

import "fmt"

// glm4Hparams: GLM-4's dense models (GLM-4-9B-0414, GLM-Z1, GLM-4-32B) as
// llama.cpp's glm4 graph runs them. Its loader sizes attn_output, the
// query bias and a fused attn_qkv's views by embedding_length, so the
// query must be exactly as wide as the embedding, and one head size serves
// keys and values (the graph asserts it). rope.dimension_sections with
// its first two counts above 0 turns on llama.cpp's multimodal RoPE
// (GLM-4.1V's vision files), which this package does not run.
func glm4Hparams(c *Config, m *meta) {
	m.embdWideQuery(c, "glm4's fused projections require")
	m.noMultimodalRope("glm4", "GLM-4.1V")
}

// chatglmHparams: ChatGLM's loader sizes its projections as glm4's
// does (attn_output [Embd, Embd], the fused views by embedding_length);
// its graph runs no multimodal RoPE, so rope.dimension_sections is not
// read.
func chatglmHparams(c *Config, m *meta) {
	m.embdWideQuery(c, "chatglm's fused projections require")
}

// embdWideQuery fails unless the query is as wide as the embedding
// (heads × key_length = embedding_length), as why says llama.cpp
// requires, and the values' heads are as wide as the keys'.
func (m *meta) embdWideQuery(c *Config, why string) {
	switch {
	case c.Heads*c.HeadDimK != c.Embd:
		m.fail("%s = %d × %s = %d is not %s = %d, as %s",
			m.key("attention.head_count"), c.Heads, m.key("attention.key_length"), c.HeadDimK, m.key("embedding_length"), c.Embd, why)
	case c.HeadDimV != c.HeadDimK:
		m.fail("%s = %d differs from %s = %d", m.key("attention.value_length"), c.HeadDimV, m.key("attention.key_length"), c.HeadDimK)
	}
}

// noMultimodalRope refuses rope.dimension_sections with its first two
// counts above 0, which turns on llama.cpp's multimodal RoPE for glm4 and
// glm4moe (the vision models', which model names) and which this package
// does not run.
func (m *meta) noMultimodalRope(arch, model string) {
	if m.err != nil || !m.has("rope.dimension_sections") {
		return
	}
	k := m.key("rope.dimension_sections")
	xs, ok := m.f.Int32s(k)
	if !ok {
		raw, _ := m.f.Get(k)
		m.fail("%s is %s, want up to 4 counts", k, describe(raw))
		return
	}
	if len(xs) >= 2 && xs[0] > 0 && xs[1] > 0 {
		m.err = fmt.Errorf("model: %s = %v: %s's multimodal RoPE (%s) is not supported: %w", k, xs, arch, model, ErrUnsupportedArch)
	}
}
