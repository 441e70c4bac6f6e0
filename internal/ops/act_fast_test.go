package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// ulps is how many float32 steps apart got is from want (computed in
// float64), measured in units of want's float32 spacing.
func ulps(got float32, want float64) float64 {
	w := float32(want)
	step := math.Abs(float64(math.Nextafter32(w, float32(math.Inf(1))) - w))
	if step == 0 || math.IsInf(step, 0) {
		step = math.Abs(float64(w - math.Nextafter32(w, 0)))
	}
	return math.Abs(float64(got)-want) / step
}

// TestExpf sweeps every 97th float32 in [-87.3, 88] (and a dense patch
// around 0) against math.Exp: at most 2 ulp apart.
func TestExpf(t *testing.T) {
	worst, at := 0.0, float32(0)
	check := func(x float32) {
		if u := ulps(Expf(x), math.Exp(float64(x))); u > worst {
			worst, at = u, x
		}
	}
	for _, sign := range []float32{1, -1} {
		lim := float32(88)
		if sign < 0 {
			lim = 87.3
		}
		for b := uint32(0); ; b += 97 {
			x := math.Float32frombits(b)
			if x > lim {
				break
			}
			check(sign * x)
		}
	}
	for x := float32(-1); x <= 1; x += 1.0 / 4096 {
		check(x)
	}
	t.Logf("worst %.2f ulp at %v", worst, at)
	if worst > 2 {
		t.Errorf("Expf(%v) is %.2f ulp from math.Exp", at, worst)
	}
	// Saturation, and NaN passes through.
	for _, c := range []struct{ x, lo, hi float32 }{
		{-1000, 0, 1.3e-38}, {-88, 0, 1.3e-38}, {100, 1.6e38, 1.7e38}, {float32(math.Inf(1)), 1.6e38, 1.7e38}, {float32(math.Inf(-1)), 0, 1.3e-38},
	} {
		if y := Expf(c.x); !(y >= c.lo && y <= c.hi) {
			t.Errorf("Expf(%v) = %v, want in [%v, %v]", c.x, y, c.lo, c.hi)
		}
	}
	if y := Expf(float32(math.NaN())); !math.IsNaN(float64(y)) {
		t.Errorf("Expf(NaN) = %v", y)
	}
}

// TestSiLUMulFast compares it with SiLUMul (math.Exp): within 4 ulp of
// the exact product wherever SiLUMul is, and the same limits far out.
func TestSiLUMulFast(t *testing.T) {
	g, u := randomPair(5, 1<<16, 6, 1)
	g[0], g[1], g[2], g[3] = -200, 200, 0, -90
	g1 := append([]float32(nil), g...)
	g2 := append([]float32(nil), g...)
	SiLUMul(g1, u)
	SiLUMulFast(g2, u)
	checkULPs(t, "silu", g, u, g2, 4, func(g, u float64) float64 { return g / (1 + math.Exp(-g)) * u })
	// The loop's written-out exp is Expf.
	for i := range g {
		if want := g[i] / (1 + Expf(-g[i])) * u[i]; math.Float32bits(g2[i]) != math.Float32bits(want) {
			t.Fatalf("silu(%v)·%v = %v, with Expf %v", g[i], u[i], g2[i], want)
		}
	}
}

// SiLUFast is SiLUMulFast's activation without the product: within the
// same ulps of float64's silu, and bit for bit silu with Expf.
func TestSiLUFast(t *testing.T) {
	g, ones := randomPair(7, 1<<16, 6, 1)
	g[0], g[1], g[2], g[3] = -200, 200, 0, -90
	for i := range ones {
		ones[i] = 1
	}
	x := append([]float32(nil), g...)
	SiLUFast(x)
	checkULPs(t, "silu", g, ones, x, 4, func(g, _ float64) float64 { return g / (1 + math.Exp(-g)) })
	for i := range g {
		if want := g[i] / (1 + Expf(-g[i])); math.Float32bits(x[i]) != math.Float32bits(want) {
			t.Fatalf("silu(%v) = %v, with Expf %v", g[i], x[i], want)
		}
	}
}

func TestSiLUMulFastAllocatesNothing(t *testing.T) {
	g, u := make([]float32, 100), make([]float32, 100)
	if a := testing.AllocsPerRun(10, func() { SiLUMulFast(g, u) }); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

// BenchmarkSiLUMul runs on TinyLlama's FFN width. Each run starts from
// the same inputs: iterating silu in place would soon reach subnormal
// numbers, which are many times slower and measure nothing useful.
func BenchmarkSiLUMul(b *testing.B) {
	src, g, u := make([]float32, 5632), make([]float32, 5632), make([]float32, 5632)
	for i := range src {
		src[i], u[i] = float32(i%17)-8, 1
	}
	for _, f := range []struct {
		name string
		fn   func(g, u []float32)
	}{{"math.Exp", SiLUMul}, {"Expf", SiLUMulFast}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				copy(g, src)
				f.fn(g, u)
			}
		})
	}
}

// SwiGLUOAIMul against float64 of ggml's formula, clamps included: the
// gate is capped at 7 above only, the up input clamped on both sides.
// Within Expf's ulps once the float32 exponent is the same.
func TestSwiGLUOAIMul(t *testing.T) {
	g, u := randomPair(7, 1<<14, 6, 6)
	g[0], u[0] = 50, 50   // both clamped at 7: 7·σ(11.9)·8
	g[1], u[1] = -50, -50 // gate not clamped below; up at -7
	g[2], u[2] = 3, -1    // (y + 1) = 0
	got := append([]float32(nil), g...)
	SwiGLUOAIMul(got, u)
	checkULPs(t, "swiglu_oai", g, u, got, 4, func(g, u float64) float64 {
		x, y := math.Min(g, 7), math.Max(math.Min(u, 7), -7)
		// The exponent rounded to float32 first, as ggml computes it: a
		// large one amplifies that rounding in e^a.
		a := float64(float32(1.702) * float32(-x))
		return x / (1 + math.Exp(a)) * (y + 1)
	})
}

// randomPair is n gate and n up inputs of spreads gs and us, from seed.
func randomPair(seed uint64, n int, gs, us float64) (g, u []float32) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	g, u = make([]float32, n), make([]float32, n)
	for i := range g {
		g[i] = float32(r.NormFloat64() * gs)
		u[i] = float32(r.NormFloat64() * us)
	}
	return g, u
}

// checkULPs fails unless each got[i] is within limit ulps of exact(g[i],
// u[i]) computed in float64, or about 0 where that is.
func checkULPs(t *testing.T, name string, g, u, got []float32, limit float64, exact func(g, u float64) float64) {
	t.Helper()
	worst := 0.0
	for i := range g {
		want := exact(float64(g[i]), float64(u[i]))
		if math.Abs(want) < 1e-30 {
			if math.Abs(float64(got[i])) > 1e-30 {
				t.Errorf("%s(%v, %v) = %v, want 0", name, g[i], u[i], got[i])
			}
			continue
		}
		worst = max(worst, ulps(got[i], want))
	}
	t.Logf("worst %.2f ulp", worst)
	if worst > limit {
		t.Errorf("%s is %.2f ulp from exact", name, worst)
	}
}

// ReGLUMul is the up row where the gate is positive times the gate, and 0
// where it is not, even against an infinite up (ggml's reglu).
func TestReGLUMul(t *testing.T) {
	inf := float32(math.Inf(1))
	g := []float32{2, -1, 0, 0.5, -3}
	u := []float32{3, 5, inf, -4, inf}
	ReGLUMul(g, u)
	if want := []float32{6, 0, 0, -2, 0}; !slices.Equal(g, want) {
		t.Errorf("ReGLUMul = %v, want %v", g, want)
	}
}

// ReLU2Mul is the square of the positive gate times up, and 0·up (NaN
// against an infinite up) where the gate is not positive, as ggml's
// unfused relu, sqr and mul.
func TestReLU2Mul(t *testing.T) {
	inf := float32(math.Inf(1))
	g := []float32{2, -1, 0, 0.5, -3}
	u := []float32{3, 5, 7, -4, inf}
	ReLU2Mul(g, u)
	want := []float32{12, 0, 0, -1, float32(math.NaN())}
	if !slices.EqualFunc(g, want, func(a, b float32) bool { return a == b || a != a && b != b }) {
		t.Errorf("ReLU2Mul = %v, want %v", g, want)
	}
}
