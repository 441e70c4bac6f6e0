//go:build (amd64 || arm64) && !purego

package quant

import (
	"math"
	"math/rand/v2"
)

// The assembly encoders of the activation types (quantizeQ8_0,
// quantizeQ8_K) are checked byte for byte against the Go ones on the rows
// quantInputs makes, on amd64 (quantize_amd64_test.go) and arm64
// (asm_arm64_test.go) alike.

// quantInputs returns rows of n floats that exercise the encoders' edge
// cases: ties at the rounding points, zero, NaN and infinite elements,
// magnitudes that tie with opposite signs (either first), huge and tiny
// values.
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
	add(func(int) float32 { return float32(r.NormFloat64() * 1e-40) }) // subnormal
	add(func(int) float32 { return float32(r.NormFloat64() * 3e-6) })  // subnormal as a half
	add(func(int) float32 { return 0 })
	add(func(i int) float32 { return float32(i%7) - 3 })
	add(func(i int) float32 { return 3 - float32(i%7) })
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
	add(func(int) float32 { return float32(math.NaN()) })
	add(func(i int) float32 { return math.Float32frombits(0x7f800001 + uint32(i)) }) // signalling NaNs
	for _, first := range []float32{-4, 4} {
		add(func(i int) float32 {
			switch i % 64 {
			case 17:
				return first
			case 40:
				return -first
			case 41, 5:
				return 4
			}
			return float32(r.Float64())
		})
	}
	add(func(i int) float32 { return math.Float32frombits(1 + uint32(i%3)) }) // smallest subnormals
	for k := 0; k < 20; k++ {
		scale := math.Exp2(float64(r.IntN(60) - 30))
		add(func(int) float32 { return float32(r.NormFloat64() * scale) })
	}
	return rows
}
