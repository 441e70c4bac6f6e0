package ssm

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// DeltaHead and DeltaHeadDiag against the delta rule in float64 — decay
// (one number, or one a key element), then the update by β·(v - S·k)
// along k, then the output S·q scaled — from a state read in place and
// from another slot, which the kernel must leave untouched. 21 × 130
// takes two passes of deltaRows rows, a row's tail past ScanHead's lanes.
func TestDeltaHeadMatchesRule(t *testing.T) {
	for _, tc := range []struct{ kn, vn int }{{16, 16}, {8, 5}, {1, 1}, {21, 130}} {
		for _, diag := range []bool{false, true} {
			for _, inPlace := range []bool{true, false} {
				checkDeltaHead(t, tc.kn, tc.vn, diag, inPlace)
			}
		}
	}
}

// deltaVals is n values of sin(seed·(i+1)).
func deltaVals(n int, seed float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.Sin(seed * float64(i+1)))
	}
	return v
}

// checkDeltaHead runs one case of TestDeltaHeadMatchesRule: kn key and
// vn value elements, the decay 0.8 (DeltaHead) or one a key element in
// [0.2, 1], the first 1 (DeltaHeadDiag), the state in place or not.
func checkDeltaHead(t *testing.T, kn, vn int, diag, inPlace bool) {
	t.Helper()
	name := fmt.Sprintf("%d×%d diag %v in place %v", kn, vn, diag, inPlace)
	q, k, v := deltaVals(kn, 0.3), deltaVals(kn, 0.7), deltaVals(vn, 1.1)
	in := deltaVals(kn*vn, 0.13)
	saved := slices.Clone(in)
	s := in
	if !inPlace {
		s = make([]float32, len(in))
	}
	y := make([]float32, vn)
	const beta, scale = 0.6, 0.25
	decay := make([]float64, kn)
	for i := range decay {
		decay[i] = 0.8
	}
	if diag {
		g := deltaVals(kn, 0.9)
		for i := range g {
			g[i] = 0.6 + 0.4*g[i]
		}
		g[0] = 1
		for i := range decay {
			decay[i] = float64(g[i])
		}
		DeltaHeadDiag(s, in, q, k, v, y, g, beta, scale)
	} else {
		DeltaHead(s, in, q, k, v, y, 0.8, beta, scale)
	}
	for j := range vn {
		row := make([]float64, kn)
		var sk float64
		for i := range row {
			row[i] = float64(saved[j*kn+i]) * decay[i]
			sk += row[i] * float64(k[i])
		}
		d := (float64(v[j]) - sk) * beta
		var o float64
		for i := range row {
			row[i] += float64(k[i]) * d
			o += row[i] * float64(q[i])
			if math.Abs(float64(s[j*kn+i])-row[i]) > 1e-5 {
				t.Fatalf("%s: state[%d][%d] = %v, want %v", name, j, i, s[j*kn+i], row[i])
			}
		}
		if math.Abs(float64(y[j])-o*scale) > 1e-5 {
			t.Fatalf("%s: y[%d] = %v, want %v", name, j, y[j], o*scale)
		}
	}
	if !inPlace && !slices.Equal(in, saved) {
		t.Fatalf("%s: the state read out of place was written", name)
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
