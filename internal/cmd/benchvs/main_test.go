package main

import (
	"math"
	"testing"
)

// TestPair: the rounds' ratios and who led, from the figures of series
// 3 on 2026-11-28 (TinyLlama Q4_K_M tg128, where the ratio of the two
// medians was 0.95× while ours led six of seven rounds), and the edge
// cases of missing or unequal runs.
func TestPair(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ours, llama []float64
		want        paired
	}{
		{"bimodal", []float64{51.16, 49.56, 66.67, 69.83, 68.54, 50.29, 49.03},
			[]float64{48.09, 48.39, 55.10, 54.98, 55.11, 47.78, 53.77}, paired{51.16 / 48.09, 6, 7}},
		{"even rounds", []float64{2, 3}, []float64{1, 1}, paired{2.5, 2, 2}},
		{"llama.cpp has fewer runs", []float64{2, 2, 2}, []float64{4}, paired{0.5, 0, 1}},
		{"a zero run is left out", []float64{0, 3}, []float64{1, 2}, paired{1.5, 1, 1}},
		{"none", nil, []float64{1}, paired{}},
	} {
		got := pair(tc.ours, tc.llama)
		if math.Abs(got.Ratio-tc.want.Ratio) > 1e-12 || got.Led != tc.want.Led || got.Rounds != tc.want.Rounds {
			t.Errorf("%s: pair = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
