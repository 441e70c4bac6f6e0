package ssm

import (
	"math"
	"slices"
	"testing"
)

// SelectiveChannel against Mamba-1's recurrence in float64 — each state
// element decayed by its own exp(dt·A), then fed B·x·dt, the output its
// sum against C — from a state read in place and from another slot, which
// the kernel must leave untouched.
func TestSelectiveChannelMatchesRecurrence(t *testing.T) {
	val := func(n int, seed, off float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(math.Sin(seed*float64(i+1)) + off)
		}
		return v
	}
	for _, n := range []int{16, 5, 1} {
		for _, inPlace := range []bool{true, false} {
			A, B, C := val(n, 0.9, -1.5), val(n, 0.3, 0), val(n, 0.7, 0)
			in := val(n, 0.13, 0)
			saved := slices.Clone(in)
			s := in
			if !inPlace {
				s = make([]float32, n)
			}
			const x, dt = 0.8, 0.3
			y := SelectiveChannel(s, in, A, B, C, x, dt)
			var want float64
			for i := range n {
				v := float64(saved[i])*math.Exp(dt*float64(A[i])) + float64(B[i])*x*dt
				if math.Abs(float64(s[i])-v) > 1e-5 {
					t.Errorf("n %d, in place %v: state[%d] = %v, want %v", n, inPlace, i, s[i], v)
				}
				want += v * float64(C[i])
			}
			if math.Abs(float64(y)-want) > 1e-5 {
				t.Errorf("n %d, in place %v: y = %v, want %v", n, inPlace, y, want)
			}
			if !inPlace && !slices.Equal(in, saved) {
				t.Errorf("n %d: the source state changed", n)
			}
		}
	}
}
