package ssm

import (
	"math"
	"slices"
	"testing"
)

// DeltaHead against the delta rule in float64 — decay, then the update
// by β·(v - S·k) along k, then the output S·q scaled — from a state read
// in place and from another slot, which the kernel must leave untouched.
func TestDeltaHeadMatchesRule(t *testing.T) {
	val := func(n int, seed float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(math.Sin(seed * float64(i+1)))
		}
		return v
	}
	for _, tc := range []struct{ kn, vn int }{{16, 16}, {8, 5}, {1, 1}} {
		for _, inPlace := range []bool{true, false} {
			q, k, v := val(tc.kn, 0.3), val(tc.kn, 0.7), val(tc.vn, 1.1)
			in := val(tc.kn*tc.vn, 0.13)
			saved := slices.Clone(in)
			s := in
			if !inPlace {
				s = make([]float32, len(in))
			}
			y := make([]float32, tc.vn)
			const decay, beta, scale = 0.8, 0.6, 0.25
			DeltaHead(s, in, q, k, v, y, decay, beta, scale)
			for j := range tc.vn {
				row := make([]float64, tc.kn)
				var sk float64
				for i := range row {
					row[i] = float64(saved[j*tc.kn+i]) * decay
					sk += row[i] * float64(k[i])
				}
				d := (float64(v[j]) - sk) * beta
				var o float64
				for i := range row {
					row[i] += float64(k[i]) * d
					o += row[i] * float64(q[i])
					if math.Abs(float64(s[j*tc.kn+i])-row[i]) > 1e-5 {
						t.Fatalf("%v in place %v: state[%d][%d] = %v, want %v", tc, inPlace, j, i, s[j*tc.kn+i], row[i])
					}
				}
				if math.Abs(float64(y[j])-o*scale) > 1e-5 {
					t.Fatalf("%v in place %v: y[%d] = %v, want %v", tc, inPlace, j, y[j], o*scale)
				}
			}
			if !inPlace && !slices.Equal(in, saved) {
				t.Fatalf("%v: the state read out of place was written", tc)
			}
		}
	}
}

// BenchmarkDeltaHead advances a value head of Qwen 3.5's size (128 × 128)
// by a token, in place.
func BenchmarkDeltaHead(b *testing.B) {
	const n = 128
	s := make([]float32, n*n)
	q, k, v, y := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range q {
		q[i], k[i], v[i] = float32(i%7)/7, float32(i%5)/5, float32(i%3)/3
	}
	b.SetBytes(4 * n * n)
	for b.Loop() {
		DeltaHead(s, s, q, k, v, y, 0.9, 0.5, 0.088)
	}
}
