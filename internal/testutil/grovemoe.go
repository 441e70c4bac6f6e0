package testutil

import (
	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// Grove is a grovemoe's adjugate experts: one of width FFN for each group
// of PerGroup consecutive experts, their sum scaled by Scale
// (expert_chunk_feed_forward_length, experts_per_group and
// expert_group_scale).
type Grove struct {
	FFN, PerGroup int
	Scale         float32
}

// AddKV writes the keys of arch (grovemoe) llama.cpp's grovemoe loader
// reads for them.
func (gr *Grove) AddKV(g *gguf.Writer, arch string) {
	a := arch + "."
	g.AddKV(a+"expert_chunk_feed_forward_length", uint32(gr.FFN))
	g.AddKV(a+"experts_per_group", uint32(gr.PerGroup))
	g.AddKV(a+"expert_group_scale", gr.Scale)
}

// tensors are block p's ffn_{gate,up,down}_chexps, of type w, for a model
// e wide with x experts.
func (gr *Grove) tensors(p string, w quant.Type, e, x int64, proj func(int64) dist) []tensorSpec {
	f, n := int64(gr.FFN), x/int64(gr.PerGroup)
	return []tensorSpec{
		{p + "ffn_gate_chexps.weight", w, []int64{e, f, n}, proj(e)},
		{p + "ffn_up_chexps.weight", w, []int64{e, f, n}, proj(e)},
		{p + "ffn_down_chexps.weight", w, []int64{f, e, n}, proj(f)}}
}

// TinyGroveMoE is a 4-layer grovemoe as GroveMoE's files are made:
// qwen3moe's block (per-head Q/K norms before NEOX RoPE; 8 experts of
// width 32, 2 a token, softmax-routed and renormalised) with 4 adjugate
// experts of width 32, one for each pair of experts, their sum scaled by
// 0.5 (GroveMoE's 0.05 would hide them from the tests) beside the
// routed experts'; an output matrix of its own; Q8_0 weights.
func TinyGroveMoE() ModelSpec {
	return tinyMoE(ModelSpec{
		Arch: "grovemoe", Seed: 72, Layers: 4, RopeBase: 1000000, RMSEps: 1e-6,
		Grove: &Grove{FFN: 32, PerGroup: 2, Scale: 0.5},
	})
}
