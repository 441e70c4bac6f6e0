package ops

// Multimodal RoPE (ggml's GGML_ROPE_TYPE_MROPE and _IMROPE, which
// llama.cpp's qwen2vl, qwen3vl and qwen3vlmoe graphs rotate with) gives
// each pair of a head one of four positions: temporal, height, width or
// extra. Pair i keeps frequency index i whichever it takes; its section
// is found from sector = i mod (the sections' sum). A text token's
// positions are (p, p, p, 0): llama.cpp's graph input fills the first
// three with the token's position and the fourth with 0, so for text
// only the pairs of the extra section differ from plain NEOX RoPE — they
// are not turned at all.

// extraPair reports whether pair i of r takes the extra position.
func (r *Rope) extraPair(i int) bool { return r.section(i) == 3 }

// section is the position pair i takes under r's sections: 0 temporal,
// 1 height, 2 width, 3 extra. Contiguous sections (M-RoPE) lie one after
// the other; interleaved ones (IMRoPE) cycle t, h, w over the sectors,
// each axis while its sector is below three times its count, the
// sectors past those falling to the extra position, as upstream ggml's
// ggml_mrope_cache_init gives them (the copy Ollama v0.17.4 vendors gives
// them the temporal position, as Hugging Face's Qwen3-VL does). Sections
// must not be all 0.
func (r *Rope) section(i int) int {
	s := r.Sections
	sector := i % (s[0] + s[1] + s[2] + s[3])
	if r.Interleaved {
		switch {
		case sector%3 == 1 && sector < 3*s[1]:
			return 1
		case sector%3 == 2 && sector < 3*s[2]:
			return 2
		case sector%3 == 0 && sector < 3*s[0]:
			return 0
		}
		return 3
	}
	switch {
	case sector < s[0]:
		return 0
	case sector < s[0]+s[1]:
		return 1
	case sector < s[0]+s[1]+s[2]:
		return 2
	}
	return 3
}
