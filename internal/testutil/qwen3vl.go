package testutil

import "github.com/lowmem/llm/internal/gguf"

// The text models of Qwen's vision-language releases, as llama.cpp's
// converter writes their LLM files: the text architecture's layers under
// another name, with rope.dimension_sections (and Qwen3-VL's
// n_deepstack_layers). Their sections are chosen, as in the released
// files, so that the extra section holds pairs the text does not turn,
// and their RoPE base is small so that those pairs, the slowest, would
// turn by whole radians over a test's prompt.

// TinyQwen3VL is TinyQwen3 as a qwen3vl: heads of 32 (16 pairs) in
// interleaved sections [8, 4, 4, 0] — Qwen3-VL's [24, 20, 20, 0] in
// small: t, h, w cycle up to pair 11, pairs 13 and 14 take the extra
// position — RoPE base 20, and 1 DeepStack layer (below its 2 layers, as
// llama.cpp needs).
func TinyQwen3VL() ModelSpec {
	s := TinyQwen3()
	s.Arch, s.Seed, s.RopeBase = "qwen3vl", 47, 20
	s.RopeSections, s.Deepstack = []int32{8, 4, 4, 0}, 1
	return s
}

// TinyQwen3VLMoE is TinyQwen3MoE as a qwen3vlmoe: TinyQwen3VL's sections,
// base and DeepStack layer.
func TinyQwen3VLMoE() ModelSpec {
	s := TinyQwen3MoE()
	s.Arch, s.Seed, s.RopeBase = "qwen3vlmoe", 51, 20
	s.RopeSections, s.Deepstack = []int32{8, 4, 4, 0}, 1
	return s
}

// TinyQwen2VL is TinyQwen2 as a qwen2vl: heads of 16 (8 pairs) in
// contiguous sections [2, 3, 2, 1] (the extra section's pair 7 does not
// turn for text; Qwen2-VL's own [16, 24, 24, 0] has none), RoPE base 10.
func TinyQwen2VL() ModelSpec {
	s := TinyQwen2()
	s.Arch, s.Seed, s.RopeBase = "qwen2vl", 51, 10
	s.RopeSections = []int32{2, 3, 2, 1}
	return s
}

// AddVisionLanguageKV writes what a Qwen vision-language release's LLM
// file adds under arch's key prefix, as llama.cpp's converter writes it:
// rope.dimension_sections (mrope_section padded to four counts; nil
// writes none) and n_deepstack_layers (the vision tower's
// deepstack_visual_indexes counted; 0 writes none).
func AddVisionLanguageKV(g *gguf.Writer, arch string, sections []int32, deepstack int) {
	if sections != nil {
		g.AddKV(arch+".rope.dimension_sections", sections)
	}
	if deepstack > 0 {
		g.AddKV(arch+".n_deepstack_layers", uint32(deepstack))
	}
}
