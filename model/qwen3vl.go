package model

// This file is the text models of Qwen's vision-language releases as
// llama.cpp runs their LLM files (the vision tower is another file, the
// mmproj, which this package does not read): qwen2vl (Qwen2-VL and
// Qwen2.5-VL: qwen2's layers), qwen3vl (Qwen3-VL 2B to 32B: qwen3's) and
// qwen3vlmoe (Qwen3-VL-30B-A3B and 235B-A22B: qwen3moe's). What they add
// is multimodal RoPE: rope.dimension_sections splits each head's pairs
// among a token's temporal, height, width and extra positions (ops.Rope's
// Sections). llama.cpp gives a text token its position in the first
// three and 0 in the extra one, so a text rotates as NEOX RoPE does except
// for the pairs of the extra section, which do not turn: none in
// Qwen2-VL's contiguous [16, 24, 24, 0], pairs 61 and 62 of 64 in
// Qwen3-VL's interleaved [24, 20, 20, 0].
//
// Qwen3-VL's DeepStack (n_deepstack_layers) adds image features to the
// first layers' outputs; llama.cpp takes them from the input embedding's
// extra columns (its input is embedding_length × (1 + deepstack layers)
// wide for images), which a text token's embedding row does not have:
// llama.cpp's graph adds them only for embedding inputs, or (newer
// builds, d32676d77 among them) pads a token's row with zeros and adds
// those. Text gets nothing from it, and token_embd's rows are
// embedding_length wide as in qwen3, so the key is checked and otherwise
// unused.

// qwen2vlHparams: qwen2's layers (attn_q/k/v biases, which llama.cpp's
// loader takes as optional) with contiguous multimodal RoPE. llama.cpp
// sizes attn_q and attn_output by embedding_length, so the heads must
// fill it exactly.
func qwen2vlHparams(c *Config, m *meta) {
	if c.Heads*c.HeadDimK != c.Embd && m.err == nil {
		m.fail("%s = %d × %s = %d is not %s = %d, as qwen2vl's attn_q and attn_output require",
			m.key("attention.head_count"), c.Heads, m.key("attention.key_length"), c.HeadDimK, m.key("embedding_length"), c.Embd)
	}
	m.multimodalRope(c, false)
}

// qwen3vlHparams: qwen3's layers with interleaved multimodal RoPE (IMRoPE)
// and n_deepstack_layers, a count when present and below block_count:
// llama.cpp (d32676d77) adds the DeepStack features (zeros for text) to
// the outputs of the first n_deepstack_layers layers, and when the last
// layer is one of them, its rows already cut to the outputs, the graph
// asserts on a text.
func qwen3vlHparams(c *Config, m *meta) {
	m.multimodalRope(c, true)
	if n := m.count("n_deepstack_layers", maxCount); n >= c.Layers && m.err == nil {
		m.fail("%s = %d is not below %s = %d (llama.cpp's graph asserts on it)", m.key("n_deepstack_layers"), n, m.key("block_count"), c.Layers)
	}
}

// qwen3vlmoeHparams: qwen3moe's experts under qwen3vl's attention.
func qwen3vlmoeHparams(c *Config, m *meta) {
	qwen3moeHparams(c, m)
	qwen3vlHparams(c, m)
}

// multimodalRope reads rope.dimension_sections into c.RopeSections as
// llama.cpp's loader does (get_key_or_arr of 4: required; an array of
// exactly four 32-bit integers, or one int32 standing for all four) and
// refuses what ggml's rope asserts against: no pair in the temporal,
// height or width sections, or sections summing to more than the head's
// dimensions. Counts summing to fewer pairs than the head has are run as
// ggml runs them, the sections repeating. The graphs assert that keys and
// values share one head size, rotated whole.
func (m *meta) multimodalRope(c *Config, interleaved bool) {
	if m.err != nil {
		return
	}
	switch k := m.key; {
	case c.HeadDimV != c.HeadDimK:
		m.fail("%s = %d differs from %s = %d", k("attention.value_length"), c.HeadDimV, k("attention.key_length"), c.HeadDimK)
		return
	case c.RopeDim != c.HeadDimK:
		m.fail("%s = %d, want the head size %d (%s rotates whole heads)", k("rope.dimension_count"), c.RopeDim, c.HeadDimK, m.arch)
		return
	}
	k, raw, present := m.lookup("rope.dimension_sections")
	if !present {
		return
	}
	var xs []int32
	switch v := raw.(type) {
	case int32:
		xs = []int32{v, v, v, v}
	case []int32:
		xs = v
	case []uint32:
		for _, x := range v {
			xs = append(xs, int32(x)) // as llama.cpp copies them into ints
		}
	default:
		m.fail("%s is %s, want 4 counts (int32 or uint32) or one int32", k, describe(raw))
		return
	}
	if len(xs) != 4 {
		m.fail("%s has %d counts, want 4", k, len(xs))
		return
	}
	m.setSections(c, k, xs)
	c.RopeInterleaved = interleaved
}

// setSections stores the sections xs (at most four, key k) in
// c.RopeSections, refusing what ggml's multimodal RoPE asserts against:
// a negative count, all of them 0, no pair in the temporal, height or
// width section, or more pairs than the head's dimensions.
func (m *meta) setSections(c *Config, k string, xs []int32) {
	sum, ok := m.countSum(k, xs)
	if !ok {
		return
	}
	for i, x := range xs {
		c.RopeSections[i] = int(x)
	}
	switch s := c.RopeSections; {
	case sum == 0:
		m.fail("%s is all 0: no dimension rotates", k)
	case s[0] == 0 && s[1] == 0 && s[2] == 0:
		m.fail("%s = %v: no pair takes the temporal, height or width position", k, xs)
	case sum > int64(c.HeadDimK):
		m.fail("%s = %v sums to %d, more than the head size %d", k, xs, sum, c.HeadDimK)
	}
}
