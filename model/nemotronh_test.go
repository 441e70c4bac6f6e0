package model

import (
	"slices"
	"testing"
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
	const a = "nemotron_h."
	m := base("nemotron_h")
	for _, k := range []string{"attn_logit_softcapping", "final_logit_softcapping", "attention.sliding_window"} {
		delete(m, a+k)
	}
	kvs, ffn := make([]int32, len(nano9BPattern)), make([]int32, len(nano9BPattern))
	for il, k := range nano9BPattern {
		switch k {
		case '*':
			kvs[il] = 8
		case '-':
			ffn[il] = 15680
		}
	}
	m[a+"embedding_length"] = uint32(4480)
	m[a+"block_count"] = uint32(len(nano9BPattern))
	m[a+"attention.head_count"] = uint32(40)
	m[a+"attention.head_count_kv"] = kvs
	m[a+"feed_forward_length"] = ffn
	m[a+"attention.key_length"] = uint32(128)
	m[a+"attention.value_length"] = uint32(128)
	m[a+"attention.layer_norm_rms_epsilon"] = float32(1e-5)
	ssmMeta(m, a, 4, 10240, 128, 128, 8)
	edit(m)
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
