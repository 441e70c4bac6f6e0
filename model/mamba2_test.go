package model

import "testing"

// Mamba-Codestral-7B's metadata as llama.cpp's converter writes it (64
// layers of 4096, inner 8192 in 128 heads of 64, 8 groups, state 128,
// kernel 4): every layer a Mamba-2 layer alone, no KV layer but the
// cache's placeholder, and a recurrent state of llama.cpp's n_embd_r +
// n_embd_s floats a layer — (d_conv-1)·(d_inner + 2·groups·d_state) for
// the convolution, d_state·d_inner for the scan — which the memory plan
// counts.
func TestConfigMamba2(t *testing.T) {
	cm := mixersAloneHeader("mamba2", 64, 4096, map[string]any{
		"ssm.conv_kernel": uint32(4), "ssm.inner_size": uint32(8192), "ssm.state_size": uint32(128),
		"ssm.time_step_rank": uint32(128), "ssm.group_count": uint32(8),
	})
	c := mustConfig(t, cm(nil))
	if c.Mamba1 || c.SSMInner != 8192 || c.SSMState != 128 || c.SSMHeads != 128 || c.SSMGroups != 8 || c.SSMConv != 4 ||
		c.ssmInProj() != 2*8192+2*8*128+128 {
		t.Errorf("config %+v", c)
	}
	nEmbdR, nEmbdS := (4-1)*(8192+2*8*128), 128*8192
	checkMixersAlone(t, &c, nEmbdR+nEmbdS)
	// The group count and epsilon missing, heads not dividing the inner
	// size and a huge kernel are the hostile table's (TestHostileModels'
	// mamba2 family), through Load and Plan.
	checkKeyErrors(t, cm, []keyCase{
		{"no state size", "mamba2.ssm.state_size", nil, ErrBadModel},
		{"no heads", "mamba2.ssm.time_step_rank", nil, ErrBadModel},
		{"groups not dividing the heads", "mamba2.ssm.group_count", uint32(3), ErrBadModel},
		{"kernel of 1", "mamba2.ssm.conv_kernel", uint32(1), ErrBadModel},
	})
}

// mixersAloneHeader is a header builder for checkKeyErrors: a mamba or
// mamba2 file of layers blocks of width as llama.cpp's converter writes
// it (context 2^20, RMS epsilon 1e-5, attention.head_count and
// feed_forward_length 0) with its own keys ssm.
func mixersAloneHeader(arch string, layers, width int, ssm map[string]any) func(mut func(map[string]any)) map[string]any {
	keys := map[string]any{
		"block_count": uint32(layers), "embedding_length": uint32(width), "feed_forward_length": uint32(0),
		"attention.head_count": uint32(0), "context_length": uint32(1 << 20), "attention.layer_norm_rms_epsilon": float32(1e-5),
	}
	for k, v := range ssm {
		keys[k] = v
	}
	return headerOf(arch, keys)
}

// checkMixersAlone fails unless every block of c is its recurrent mixer
// alone (SingleOp, every layer recurrent and its own state, none
// rotated), the KV cache keeps its one placeholder layer, and the
// recurrent state is perLayer floats a layer.
func checkMixersAlone(t *testing.T, c *Config, perLayer int) {
	t.Helper()
	last := c.Layers - 1
	if !c.SingleOp || c.KVLayers() != 0 || !c.ConvLayer(last) || c.recurrentIndex(last) != last || c.RopeLayer(0) {
		t.Errorf("config %+v, want every block a mixer alone", c)
	}
	if got, want := ConvStateFloats(c), c.Layers*perLayer; got != want {
		t.Errorf("state of %d floats, want %d", got, want)
	}
	if k := c.KVConfig(0, 16); k.Layers != 1 || k.KVHeads != 1 || k.HeadDimK != placeholderHeadDim {
		t.Errorf("KV config %+v, want one placeholder layer", k)
	}
}
