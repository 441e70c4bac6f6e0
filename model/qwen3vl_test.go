package model

import "testing"

// The sections as llama.cpp's loader reads rope.dimension_sections: four
// int32 or uint32 counts as they are, one int32 standing for all four;
// qwen3vl and qwen3vlmoe interleaved, qwen2vl contiguous; NEOX pairs and
// 1/√head for all three (heads of 64 here: 32 pairs).
func TestConfigQwenVL(t *testing.T) {
	for _, tc := range []struct {
		arch     string
		sections any
		want     [4]int
	}{
		{"qwen3vl", []int32{12, 10, 10, 0}, [4]int{12, 10, 10, 0}},
		{"qwen3vl", []uint32{8, 4, 4, 0}, [4]int{8, 4, 4, 0}},
		{"qwen3vl", int32(5), [4]int{5, 5, 5, 5}},
		{"qwen3vlmoe", []int32{12, 10, 10, 0}, [4]int{12, 10, 10, 0}},
		{"qwen2vl", []int32{8, 12, 12, 0}, [4]int{8, 12, 12, 0}},
	} {
		m := base(tc.arch)
		m[tc.arch+".rope.dimension_sections"] = tc.sections
		if tc.arch == "qwen3vlmoe" {
			m["qwen3vlmoe.expert_count"], m["qwen3vlmoe.expert_used_count"] = uint32(8), uint32(2)
		}
		c := mustConfig(t, m)
		if c.RopeSections != tc.want || c.RopeInterleaved != (tc.arch != "qwen2vl") || !c.RopeNeox || c.RopeDim != 64 || c.KQScale != 0.125 {
			t.Errorf("%s %v: sections %v, interleaved %v, NEOX %v, rope %d, kq scale %v", tc.arch, tc.sections, c.RopeSections, c.RopeInterleaved, c.RopeNeox, c.RopeDim, c.KQScale)
		}
		if tc.arch == "qwen3vlmoe" && (c.Experts != 8 || c.ExpertFFN != 384 || !c.ExpertNorm) {
			t.Errorf("qwen3vlmoe experts %d of %d, renormalised %v", c.Experts, c.ExpertFFN, c.ExpertNorm)
		}
	}
}
