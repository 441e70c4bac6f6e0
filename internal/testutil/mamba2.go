package testutil

import "fmt"

// TinyMamba2 is a 3-layer mamba2 as llama.cpp's converter writes
// state-spaces/mamba2-*: every block a Mamba-2 layer (inner size 128,
// twice the width, in 8 heads of 16; 2 groups, state 16, kernel 4);
// attention.head_count and feed_forward_length 0, no head_count_kv; Q8_0
// weights and no output.weight, so that token_embd is the output as
// llama.cpp loads such a file (the state-spaces checkpoints tie them).
func TinyMamba2() ModelSpec {
	return tiny(ModelSpec{
		Arch: "mamba2", Seed: 83, Layers: 3, RMSEps: 1e-5, TiedOutput: true,
		ConvLayers: []int{0, 1, 2}, SSMState: 16, SSMHeads: 8, SSMGroups: 2,
	})
}

// withMamba2Defaults fills a mamba2 spec's kernel (4) and checks its
// Mamba-2 sizes (the heads dividing the inner size, the groups the heads).
func (s ModelSpec) withMamba2Defaults() (ModelSpec, error) {
	if s.ConvKernel == 0 {
		s.ConvKernel = 4
	}
	if s.SSMState <= 0 || s.SSMHeads <= 0 || s.SSMGroups <= 0 || s.ssmInner()%s.SSMHeads != 0 || s.SSMHeads%s.SSMGroups != 0 {
		return s, fmt.Errorf("testutil: mamba2 needs SSMState, SSMHeads dividing the inner size %d and SSMGroups dividing SSMHeads (%d, %d, %d)",
			s.ssmInner(), s.SSMState, s.SSMHeads, s.SSMGroups)
	}
	return s, nil
}

// mixersOnly reports whether s is a model without attention whose blocks
// are a norm and a Mamba mixer alone (mamba, mamba2): its converter
// writes attention.head_count and feed_forward_length 0 and no RoPE.
func (s ModelSpec) mixersOnly() bool { return s.Arch == "mamba" || s.Arch == "mamba2" }

// mamba2SSM is a mamba2 spec's ssm.* sizes.
func (s ModelSpec) mamba2SSM() SSM {
	return SSM{Conv: s.ConvKernel, Inner: s.ssmInner(), State: s.SSMState, Heads: s.SSMHeads, Groups: s.SSMGroups}
}
