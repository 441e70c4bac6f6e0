package model

import (
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// nano9BPattern is Nemotron Nano 2 9B's hybrid_override_pattern: 27
// Mamba-2 layers (M), 25 feed-forwards (-), 4 attention layers (*).
const nano9BPattern = "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-"

// nemotronHMeta is NVIDIA-Nemotron-Nano-9B-v2's header as llama.cpp's
// converter writes it: width 4480, 56 layers of nano9BPattern, 40 query
// heads of 128 and 8 KV heads, feed-forwards of 15680; Mamba-2 layers of
// 128 heads of 80 (inner size 10240, not 2 × 4480), 8 groups, state 128,
// kernel 4.
func nemotronHMeta(edit func(m map[string]any)) map[string]any {
	m := nemotronHeader("nemotron_h", nano9BPattern, 4480, 40, 8, 15680)
	ssmMeta(m, "nemotron_h.", 4, 10240, 128, 128, 8)
	edit(m)
	return m
}

// nemotronHeader is a nemotron_h (or nemotron_h_moe) header of width
// embd whose layers are pattern's (M Mamba-2, - or E a feed-forward of
// ffn, * attention of heads query heads of 128 and kv KV heads), RMS
// epsilon 1e-5, without the ssm sizes.
func nemotronHeader(arch, pattern string, embd, heads, kv, ffn int) map[string]any {
	a := arch + "."
	m := base(arch)
	for _, k := range []string{"attn_logit_softcapping", "final_logit_softcapping", "attention.sliding_window"} {
		delete(m, a+k)
	}
	kvs, ffns := testutil.NemotronHLayers(pattern, kv, ffn)
	m[a+"embedding_length"] = uint32(embd)
	m[a+"block_count"] = uint32(len(pattern))
	m[a+"attention.head_count"] = uint32(heads)
	m[a+"attention.head_count_kv"] = kvs
	m[a+"feed_forward_length"] = ffns
	m[a+"attention.key_length"] = uint32(128)
	m[a+"attention.value_length"] = uint32(128)
	m[a+"attention.layer_norm_rms_epsilon"] = float32(1e-5)
	return m
}

// A nemotron_h header: the per-layer arrays tell the three kinds of layer
// apart as llama.cpp does (head_count_kv and feed_forward_length both 0: a
// Mamba-2 layer; feed_forward_length above 0: a feed-forward alone; else
// attention), the KV cache holds the attention layers alone, the
// recurrent state the Mamba-2 layers, nothing is rotated; each key it can
// get wrong is refused, naming it.
func TestConfigNemotronH(t *testing.T) {
	c := mustConfig(t, nemotronHMeta(func(map[string]any) {}))
	var mamba, ffn, attn []int
	for il := range c.Layers {
		switch {
		case c.ConvLayer(il):
			mamba = append(mamba, il)
		case c.FFNLayer(il):
			ffn = append(ffn, il)
			if c.layerFFN(il) != 15680 {
				t.Errorf("layer %d: width %d", il, c.layerFFN(il))
			}
		default:
			attn = append(attn, il)
			if c.RopeLayer(il) {
				t.Errorf("attention layer %d rotates", il)
			}
		}
	}
	if len(mamba) != 27 || len(ffn) != 25 || !slices.Equal(attn, []int{14, 21, 30, 39}) || !c.SingleOp || !c.ReLU2 ||
		c.KVLayers() != 4 || c.KVLayer(30) != 2 || c.modelLayer(3) != 39 || c.recurrentIndex(54) != 26 || c.HeadsKV != 8 ||
		c.FFN != 15680 || c.HeadDimK != 128 || c.KQScale != invSqrt(128) || c.SSMInner != 10240 || c.ssmInProj() != 22656 || c.ssmConvWidth() != 12288 {
		t.Fatalf("config: Mamba-2 %v, feed-forward %v, attention %v, %+v", mamba, ffn, attn, c)
	}
	// 27 layers of 3 positions of 12288 conv inputs and 128×80×128 of
	// scan state: 146 MB, so the two checkpoints its budget allows.
	if got, want := ConvStateFloats(&c), 27*(3*12288+10240*128); got != want || Checkpoints(&c) != 2 {
		t.Errorf("state of %d floats (want %d), %d checkpoints", got, want, Checkpoints(&c))
	}
	set := func(k string, v any) func(m map[string]any) {
		return func(m map[string]any) { m["nemotron_h."+k] = v }
	}
	del := func(k string) func(m map[string]any) { return func(m map[string]any) { delete(m, "nemotron_h."+k) } }
	layers := func(v ...int32) []int32 { return append(v, make([]int32, len(nano9BPattern)-len(v))...) }
	refuseHeaders(t, []headerCase{
		{"one width", set("feed_forward_length", uint32(15680)), ErrBadModel, "feed_forward_length is"},
		{"negative width", set("feed_forward_length", layers(0, -1, 15680)), ErrBadModel, "feed_forward_length[1]"},
		{"too few widths", set("feed_forward_length", []int32{0, 15680}), ErrBadModel, "feed_forward_length"},
		{"one KV count", set("attention.head_count_kv", uint32(8)), ErrBadModel, "head_count_kv"},
		{"no attention", set("attention.head_count_kv", layers()), ErrBadModel, "no layer attends"},
		{"attention only on feed-forwards", set("attention.head_count_kv", layers(0, 8)), ErrBadModel, "no attention layer"},
		{"KV counts differ", set("attention.head_count_kv", layers(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 4)), ErrUnsupportedArch, "differs"},
		{"query heads differ", set("attention.head_count", layers(40, 40)), ErrBadModel, "attention.head_count differs"},
		{"no RMS epsilon", del("attention.layer_norm_rms_epsilon"), ErrBadModel, "layer_norm_rms_epsilon missing"},
		{"no inner size", del("ssm.inner_size"), ErrBadModel, "ssm.inner_size missing"},
		{"heads not dividing the inner size", set("ssm.time_step_rank", uint32(100)), ErrBadModel, "ssm.time_step_rank = 100"},
		{"groups not dividing the heads", set("ssm.group_count", uint32(3)), ErrBadModel, "ssm.group_count = 3"},
		{"conv kernel 1", set("ssm.conv_kernel", uint32(1)), ErrBadModel, "ssm.conv_kernel = 1"},
		{"no state size", del("ssm.state_size"), ErrBadModel, "ssm.state_size missing"},
		{"experts", set("expert_count", uint32(8)), ErrUnsupportedArch, "expert_count"},
	}, nemotronHMeta)
}

// nano30BPattern is Nemotron 3 Nano 30B-A3B's hybrid_override_pattern:
// 23 Mamba-2 layers, 23 of experts (E), 6 attention layers.
const nano30BPattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"

// A nemotron_h_moe header as the converter writes Nemotron 3 Nano
// 30B-A3B's (width 2688; 32 query heads of 128, 2 KV heads; Mamba-2 64
// heads of 64 in 8 groups, state 128; 128 experts of 1856, 6 a token, a
// shared expert of 3712, weights renormalised and scaled by 2.5): its
// expert layers are its feed-forward layers, sigmoid-routed with the
// selection bias.
func TestConfigNemotronHMoE(t *testing.T) {
	meta := func(edit func(m map[string]any)) map[string]any {
		const a = "nemotron_h_moe."
		m := nemotronHeader("nemotron_h_moe", nano30BPattern, 2688, 32, 2, 1856)
		ssmMeta(m, a, 4, 4096, 128, 64, 8)
		m[a+"expert_count"] = uint32(128)
		m[a+"expert_used_count"] = uint32(6)
		m[a+"expert_feed_forward_length"] = uint32(1856)
		m[a+"expert_shared_feed_forward_length"] = uint32(3712)
		m[a+"expert_shared_count"] = uint32(1)
		m[a+"expert_weights_norm"] = true
		m[a+"expert_weights_scale"] = float32(2.5)
		edit(m)
		return m
	}
	c := mustConfig(t, meta(func(map[string]any) {}))
	if c.expertLayers() != 23 || !c.ExpertLayer(1) || c.ExpertLayer(0) || c.ExpertLayer(5) || c.KVLayers() != 6 || c.convCount() != 23 ||
		c.ExpertGating != GatingSigmoid || !c.ExpertSelBias || !c.ExpertNorm || c.ExpertScale != 2.5 || c.ExpertFFN != 1856 || c.SharedFFN != 3712 ||
		c.SSMInner != 4096 || !c.ReLU2 || c.expertMats() != 2 {
		t.Fatalf("config %+v", c)
	}
	set := func(k string, v any) func(m map[string]any) {
		return func(m map[string]any) { m["nemotron_h_moe."+k] = v }
	}
	del := func(k string) func(m map[string]any) {
		return func(m map[string]any) { delete(m, "nemotron_h_moe."+k) }
	}
	refuseHeaders(t, []headerCase{
		{"no expert width", del("expert_feed_forward_length"), ErrBadModel, "expert_feed_forward_length missing"},
		{"no shared width", del("expert_shared_feed_forward_length"), ErrBadModel, "expert_shared_feed_forward_length missing"},
		{"no experts used", del("expert_used_count"), ErrBadModel, "expert_used_count missing"},
		{"norm a number", set("expert_weights_norm", uint32(1)), ErrBadModel, "expert_weights_norm"},
		{"latent experts", set("moe_latent_size", uint32(1024)), ErrUnsupportedArch, "moe_latent_size"},
	}, meta)
}
