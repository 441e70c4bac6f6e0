package model

import (
	"errors"
	"math"
	"testing"
)

// kimiLinearMeta is Kimi-Linear-48B-A3B's header as llama.cpp's converter
// writes it (head_count_kv 0 for the KDA layers, 1 for the seven that
// attend; key_length the latent cache's, no value_length), edited by edit.
func kimiLinearMeta(edit func(m map[string]any)) map[string]any {
	kv := make([]int32, 27)
	for _, il := range []int{3, 7, 11, 15, 19, 23, 26} {
		kv[il] = 1
	}
	return archMeta("kimi-linear", decoderKeys{
		Embd: 2304, Blocks: 27, FFN: 9216, Heads: 32, KeyLen: 576, Context: 1048576, RopeDim: 64, RMSEps: 1e-5,
		DenseLead: 1, Experts: 256, ExpertsUsed: 8, ExpertFFN: 1024, SharedCount: 1, ExpertScale: 2.446, Gating: 2,
	}.with(map[string]any{
		"attention.head_count_kv":    kv,
		"attention.kv_lora_rank":     uint32(512),
		"attention.key_length_mla":   uint32(192),
		"attention.value_length_mla": uint32(128),
		"ssm.conv_kernel":            uint32(4),
		"kda.head_dim":               uint32(128),
	}), edit)
}

// Kimi Linear's header gives llama.cpp's numbers: 20 KDA layers of 32
// heads of 128 (key heads as many as value heads), the latent cache's
// head sizes whatever value_length says, no layer rotated, the scale
// 1/√192, routing renormalised and scaled by 2.446 without the groups the
// file may state (llama.cpp reads none). Without
// leading_dense_block_count no layer is dense, without
// expert_weights_scale the weights go unscaled. Refused as llama.cpp
// refuses them: a missing kda.head_dim, ssm.conv_kernel or
// expert_gating_func, a head_count_kv of one count; refused where
// llama.cpp would run another model: a query rank (its graph reads attn_q
// alone).
func TestConfigKimiLinear(t *testing.T) {
	c := mustConfig(t, kimiLinearMeta(func(m map[string]any) {
		m["kimi-linear.expert_group_count"] = uint32(1)
		m["kimi-linear.expert_weights_norm"] = false
	}))
	if !c.KDA || !c.DeltaNet || c.DeltaBlocks || c.AttnGate || c.convCount() != 20 || c.KVLayers() != 7 ||
		c.SSMState != 128 || c.SSMHeads != 32 || c.SSMGroups != 32 || c.SSMInner != 4096 || c.SSMConv != 4 ||
		!c.mla() || c.HeadsKV != 1 || c.HeadDimK != 576 || c.HeadDimV != 512 || c.HeadDimKMLA != 192 || c.HeadDimVMLA != 128 ||
		c.QLoraRank != 0 || c.DenseLead != 1 || c.SharedFFN != 1024 || c.ExpertScale != 2.446 || !c.ExpertNorm ||
		c.ExpertGating != GatingSigmoid || c.ExpertGroups != 0 || c.RopeLayer(3) || c.deltaInProj() != 3*4096+2*4096+32 {
		t.Fatalf("config %+v", c)
	}
	if want := 1 / math.Sqrt(192); math.Abs(float64(c.KQScale)-want) > 1e-7 {
		t.Errorf("KQScale %v, want %v", c.KQScale, want)
	}
	if c := mustConfig(t, kimiLinearMeta(func(m map[string]any) { delete(m, "kimi-linear.leading_dense_block_count") })); c.DenseLead != 0 {
		t.Errorf("without leading_dense_block_count: %d dense layers, want 0", c.DenseLead)
	}
	if c := mustConfig(t, kimiLinearMeta(func(m map[string]any) { delete(m, "kimi-linear.expert_weights_scale") })); c.ExpertScale != 0 {
		t.Errorf("without expert_weights_scale: scale %v, want 0 (none)", c.ExpertScale)
	}
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want error
	}{
		{"no kda.head_dim", func(m map[string]any) { delete(m, "kimi-linear.kda.head_dim") }, ErrBadModel},
		{"no ssm.conv_kernel", func(m map[string]any) { delete(m, "kimi-linear.ssm.conv_kernel") }, ErrBadModel},
		{"no expert_gating_func", func(m map[string]any) { delete(m, "kimi-linear.expert_gating_func") }, ErrBadModel},
		{"one head_count_kv", func(m map[string]any) { m["kimi-linear.attention.head_count_kv"] = uint32(1) }, ErrBadModel},
		{"a query rank", func(m map[string]any) { m["kimi-linear.attention.q_lora_rank"] = uint32(1536) }, ErrUnsupportedArch},
	} {
		if _, err := ConfigFromGGUF(parse(t, kimiLinearMeta(tc.edit))); !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
}
