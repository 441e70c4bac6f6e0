package model

import "testing"

// Falcon-H1's metadata as llama.cpp's loader reads it: the header of the
// 1.5B (24 layers of 2048, 8 heads of 128 on 2 KV heads, a Mamba-2 mixer
// of 48 heads in 3072 channels, 1 group, state 256, kernel 4) makes every
// layer both attend (its own KV cache layer) and carry a Mamba-2 state;
// the ssm.* sizes are required and must agree.
func TestConfigFalconH1(t *testing.T) {
	fh := baseHeaderOf("falcon-h1", map[string]uint32{
		"block_count": 24, "embedding_length": 2048, "feed_forward_length": 4608,
		"attention.head_count": 8, "attention.head_count_kv": 2, "attention.key_length": 128, "attention.value_length": 128,
		"ssm.conv_kernel": 4, "ssm.inner_size": 3072, "ssm.state_size": 256, "ssm.time_step_rank": 48, "ssm.group_count": 1,
	}, "attn_logit_softcapping", "final_logit_softcapping", "attention.sliding_window")
	c := mustConfig(t, fh(nil))
	if !c.ParallelSSM || c.KVLayers() != 24 || c.KVLayer(23) != 23 || !c.ConvLayer(0) || !c.ConvLayer(23) || c.recurrentIndex(23) != 23 ||
		c.SSMInner != 3072 || c.SSMHeads != 48 || c.SSMGroups != 1 || c.SSMState != 256 || c.SSMConv != 4 || !c.RopeNeox || !c.RopeLayer(5) {
		t.Errorf("config %+v", c)
	}
	checkRequired(t, fh, "falcon-h1", "ssm.state_size", "ssm.inner_size")
	checkKeyErrors(t, fh, []keyCase{
		{"heads not dividing the channels", "falcon-h1.ssm.time_step_rank", uint32(45), ErrBadModel},
		{"groups not dividing the heads", "falcon-h1.ssm.group_count", uint32(5), ErrBadModel},
		{"kernel of 1", "falcon-h1.ssm.conv_kernel", uint32(1), ErrBadModel},
	})
}
