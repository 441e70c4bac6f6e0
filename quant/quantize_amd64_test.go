//go:build amd64 && !purego

package quant

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/internal/cpu"
)

// quantInputs returns rows of n floats that exercise the encoders' edge
// cases: ties at the rounding points, zero, NaN and infinite elements,
// magnitudes that tie with opposite signs, and huge and tiny values.
func quantInputs(n int) [][]float32 {
	r := rand.New(rand.NewPCG(9, 10))
	var rows [][]float32
	add := func(f func(i int) float32) {
		row := make([]float32, n)
		for i := range row {
			row[i] = f(i)
		}
		rows = append(rows, row)
	}
	add(func(int) float32 { return float32(r.NormFloat64()) })
	add(func(int) float32 { return float32(r.NormFloat64() * 1e-30) })
	add(func(int) float32 { return float32(r.NormFloat64() * 1e30) })
	add(func(int) float32 { return 0 })
	add(func(i int) float32 { return float32(i%7) - 3 }) // ties with opposite signs
	add(func(i int) float32 { return float32(i%255-127) + 0.5 })
	add(func(i int) float32 {
		switch i % 37 {
		case 3:
			return float32(math.NaN())
		case 11:
			return float32(math.Inf(1 - 2*(i&1)))
		}
		return float32(r.NormFloat64())
	})
	add(func(i int) float32 {
		if i%5 == 0 {
			return float32(math.NaN())
		}
		return 0
	})
	add(func(i int) float32 { return float32(math.NaN()) })
	add(func(i int) float32 {
		if i%64 == 17 {
			return -4
		}
		if i%64 == 40 {
			return 4
		}
		return float32(r.Float64())
	})
	for k := 0; k < 20; k++ {
		scale := math.Exp2(float64(r.IntN(60) - 30))
		add(func(int) float32 { return float32(r.NormFloat64() * scale) })
	}
	return rows
}

// TestQuantizeAVX512MatchesGo checks the AVX-512 encoders of the activation
// types byte for byte against the Go ones.
func TestQuantizeAVX512MatchesGo(t *testing.T) {
	if !cpu.Has(cpu.AVX512) {
		t.Skip("no AVX-512 on this CPU")
	}
	for _, tc := range []struct {
		typ  Type
		fast func(dst []byte, src []float32)
		ref  func(dst []byte, src []float32)
	}{
		{Q8_0, quantizeQ8_0, quantQ8_0},
		{Q8_K, quantizeQ8_K, quantQ8_K},
	} {
		for _, n := range []int{256, 512, 4096} {
			for i, row := range quantInputs(n) {
				size, _ := tc.typ.RowBytes(int64(n))
				want := make([]byte, size)
				got := make([]byte, size)
				for j := range got {
					got[j] = 0xA5
				}
				tc.ref(want, row)
				tc.fast(got, row)
				if !bytes.Equal(got, want) {
					for j := range got {
						if got[j] != want[j] {
							t.Errorf("%v n=%d row %d: first difference at byte %d: got %#x, want %#x", tc.typ, n, i, j, got[j], want[j])
							break
						}
					}
				}
			}
		}
	}
}
