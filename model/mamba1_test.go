package model

import "testing"

// Falcon-Mamba-7B's metadata as llama.cpp's converter writes it (64
// layers of 4096, inner 8192, state 16, kernel 4, time step rank 256,
// ssm.dt_b_c_rms; attention.head_count and feed_forward_length 0): every
// layer a Mamba-1 layer alone, no KV layer but the cache's placeholder,
// and a recurrent state of (d_conv-1)·d_inner + d_inner·d_state floats a
// layer, which the memory plan counts.
func TestConfigMamba(t *testing.T) {
	fm := mixersAloneHeader("mamba", 64, 4096, map[string]any{
		"ssm.dt_b_c_rms":  true,
		"ssm.conv_kernel": uint32(4), "ssm.inner_size": uint32(8192), "ssm.state_size": uint32(16), "ssm.time_step_rank": uint32(256),
	})
	c := mustConfig(t, fm(nil))
	if !c.Mamba1 || !c.SSMDtBCNorm || c.SSMInner != 8192 || c.SSMState != 16 || c.SSMDtRank != 256 || c.SSMConv != 4 {
		t.Errorf("config %+v", c)
	}
	checkMixersAlone(t, &c, 3*8192+8192*16)
	checkRequired(t, fm, "mamba", "ssm.state_size", "ssm.time_step_rank", "attention.layer_norm_rms_epsilon")
	checkKeyErrors(t, fm, []keyCase{
		{"inner size not twice the width", "mamba.ssm.inner_size", uint32(4096), ErrBadModel},
		{"kernel of 1", "mamba.ssm.conv_kernel", uint32(1), ErrBadModel},
		{"dt_b_c_rms not a bool", "mamba.ssm.dt_b_c_rms", uint32(1), ErrBadModel},
	})
}

// Jamba-v0.1's and Jamba 1.5 Mini's metadata as llama.cpp's converter
// writes it (32 layers of 4096, attention at 4, 12, 20 and 28 — offset 4,
// period 8 — 32 heads on 8 KV heads, Mamba-1 inner 8192, state 16, kernel
// 4, rank 256; 16 experts, 2 a token, on the blocks with a router):
// attention unrotated, its own KV layers, and a recurrent state of
// (d_conv-1)·d_inner + d_inner·d_state floats for each of the 28 Mamba
// layers.
func TestConfigJamba(t *testing.T) {
	kvs := make([]int32, 32)
	for _, il := range []int{4, 12, 20, 28} {
		kvs[il] = 8
	}
	jm := headerOf("jamba", map[string]any{
		"block_count": uint32(32), "embedding_length": uint32(4096), "feed_forward_length": uint32(14336),
		"attention.head_count": uint32(32), "attention.head_count_kv": kvs, "context_length": uint32(262144),
		"attention.layer_norm_rms_epsilon": float32(1e-6), "expert_count": uint32(16), "expert_used_count": uint32(2),
		"ssm.conv_kernel": uint32(4), "ssm.inner_size": uint32(8192), "ssm.state_size": uint32(16), "ssm.time_step_rank": uint32(256),
	})
	c := mustConfig(t, jm(nil))
	if !c.Mamba1 || c.SingleOp || !c.SSMDtBCNorm || c.KVLayers() != 4 || c.KVLayer(12) != 1 || c.ConvLayer(4) || !c.ConvLayer(5) ||
		c.recurrentIndex(5) != 4 || c.RopeLayer(4) || c.Experts != 16 || c.ExpertsUsed != 2 || c.ExpertFFN != 14336 || c.ExpertNorm {
		t.Errorf("config %+v", c)
	}
	if got, want := ConvStateFloats(&c), 28*(3*8192+8192*16); got != want {
		t.Errorf("state of %d floats, want %d", got, want)
	}
	checkRequired(t, jm, "jamba", "ssm.state_size", "expert_used_count")
	checkKeyErrors(t, jm, []keyCase{
		{"one head_count_kv for every layer", "jamba.attention.head_count_kv", uint32(8), ErrBadModel},
		{"no attention layer", "jamba.attention.head_count_kv", make([]int32, 32), ErrBadModel},
		{"more experts used than there are", "jamba.expert_used_count", uint32(17), ErrBadModel},
	})
}
