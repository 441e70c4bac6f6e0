package model

import "testing"

// Mamba-Codestral-7B's metadata as llama.cpp's converter writes it (64
// layers of 4096, inner 8192 in 128 heads of 64, 8 groups, state 128,
// kernel 4; attention.head_count and feed_forward_length 0, context
// 2^20): every layer a Mamba-2 layer alone, no KV layer but the cache's
// placeholder, and a recurrent state of llama.cpp's n_embd_r + n_embd_s
// floats a layer — (d_conv-1)·(d_inner + 2·groups·d_state) for the
// convolution, d_state·d_inner for the scan — which the memory plan
// counts (ConvStateFloats).
func TestConfigMamba2(t *testing.T) {
	cm := headerOf("mamba2", map[string]any{
		"block_count": uint32(64), "embedding_length": uint32(4096), "feed_forward_length": uint32(0),
		"attention.head_count": uint32(0), "context_length": uint32(1 << 20),
		"attention.layer_norm_rms_epsilon": float32(1e-5),
		"ssm.conv_kernel":                  uint32(4), "ssm.inner_size": uint32(8192), "ssm.state_size": uint32(128),
		"ssm.time_step_rank": uint32(128), "ssm.group_count": uint32(8),
	})
	c := mustConfig(t, cm(nil))
	if c.Mamba1 || !c.SingleOp || c.KVLayers() != 0 || !c.ConvLayer(63) || c.recurrentIndex(63) != 63 || c.RopeLayer(0) ||
		c.SSMInner != 8192 || c.SSMState != 128 || c.SSMHeads != 128 || c.SSMGroups != 8 || c.SSMConv != 4 || c.ssmInProj() != 2*8192+2*8*128+128 {
		t.Errorf("config %+v", c)
	}
	nEmbdR, nEmbdS := (4-1)*(8192+2*8*128), 128*8192
	if got, want := ConvStateFloats(&c), 64*(nEmbdR+nEmbdS); got != want {
		t.Errorf("state of %d floats, want %d", got, want)
	}
	if k := c.KVConfig(0, 16); k.Layers != 1 || k.KVHeads != 1 || k.HeadDimK != placeholderHeadDim {
		t.Errorf("KV config %+v, want one placeholder layer", k)
	}
	checkKeyErrors(t, cm, []keyCase{
		{"no group count", "mamba2.ssm.group_count", nil, ErrBadModel},
		{"no state size", "mamba2.ssm.state_size", nil, ErrBadModel},
		{"no heads", "mamba2.ssm.time_step_rank", nil, ErrBadModel},
		{"heads not dividing the inner size", "mamba2.ssm.time_step_rank", uint32(96), ErrBadModel},
		{"groups not dividing the heads", "mamba2.ssm.group_count", uint32(3), ErrBadModel},
		{"kernel of 1", "mamba2.ssm.conv_kernel", uint32(1), ErrBadModel},
		{"no norm epsilon", "mamba2.attention.layer_norm_rms_epsilon", nil, ErrBadModel},
	})
}
