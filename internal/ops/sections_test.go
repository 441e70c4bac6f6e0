package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The section each pair takes, as ggml_mrope_cache_init assigns them:
// Qwen3-VL's interleaved [24, 20, 20, 0] over its 64 pairs cycles t, h, w
// up to sector 59 and leaves sectors 61 and 62 to the extra position
// (63 is temporal again: below 3·24); Qwen2-VL's contiguous [16, 24, 24,
// 0] has no extra pair; sections summing to less than the pairs repeat.
func TestRopeSections(t *testing.T) {
	imrope := func(i int) int {
		switch {
		case i == 61 || i == 62:
			return 3
		default:
			return i % 3
		}
	}
	for _, tc := range []struct {
		name string
		r    Rope
		n    int
		want func(i int) int
	}{
		{"qwen3vl", Rope{Sections: [4]int{24, 20, 20, 0}, Interleaved: true}, 64, imrope},
		{"qwen2vl", Rope{Sections: [4]int{16, 24, 24, 0}}, 64, func(i int) int {
			switch {
			case i < 16:
				return 0
			case i < 40:
				return 1
			}
			return 2
		}},
		{"contiguous with extra, repeated", Rope{Sections: [4]int{2, 1, 1, 1}}, 10, func(i int) int {
			return []int{0, 0, 1, 2, 3}[i%5]
		}},
		{"interleaved, uneven", Rope{Sections: [4]int{1, 3, 1, 0}, Interleaved: true}, 5, func(i int) int {
			return []int{0, 1, 2, 3, 1}[i] // 0 t; 1, 4 h; 2 w; 3 past 3·1 for t
		}},
	} {
		for i := range tc.n {
			if got, want := tc.r.section(i), tc.want(i); got != want {
				t.Errorf("%s: pair %d takes section %d, want %d", tc.name, i, got, want)
			}
		}
	}
}

// For a text token, multimodal RoPE is NEOX RoPE with the extra
// section's pairs left as they are: every other pair turns exactly as
// plain NEOX turns it at the token's position, and the heads' dimensions
// past Dim pass through.
func TestRopeSectionsTurnTextAsNeox(t *testing.T) {
	const headDim, heads, pos = 20, 2, 37
	sec := Rope{Dim: 16, Neox: true, Base: 100, Sections: [4]int{4, 2, 2, 0}, Interleaved: true}
	plain := sec
	plain.Sections = [4]int{}
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, heads*headDim)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	got, want := append([]float32(nil), x...), append([]float32(nil), x...)
	cs := make([]float32, 16)
	sec.Angles(pos, cs)
	sec.Apply(got, heads, headDim, cs)
	plain.Angles(pos, cs)
	plain.Apply(want, heads, headDim, cs)
	for h := range heads {
		for i := range headDim {
			j := h*headDim + i
			pair := i % 8
			if i < 16 && sec.section(pair) == 3 {
				if got[j] != x[j] {
					t.Errorf("head %d dim %d (pair %d, extra): %v, want it unturned %v", h, i, pair, got[j], x[j])
				}
				if math.Abs(float64(want[j]-x[j])) < 1e-3 {
					t.Errorf("head %d dim %d: plain NEOX barely turns it: the test sees nothing", h, i)
				}
				continue
			}
			if got[j] != want[j] {
				t.Errorf("head %d dim %d (pair %d): %v, want NEOX's %v", h, i, pair, got[j], want[j])
			}
		}
	}
}
