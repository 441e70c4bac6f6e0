package ssm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/internal/floatbits"
)

// softplusInputs are time steps as a model has them (around 0, a few
// units wide) and, with hostile, what the kernels must treat as the twin
// does: the threshold 20 and around it, Expf's floor and below, ±Inf,
// NaN, denormals.
func softplusInputs(r *rand.Rand, n int, hostile bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 4)
	}
	if hostile {
		odd := []float32{20, math.Nextafter32(20, 0), math.Nextafter32(20, 30), 19.9, 88, -87.4, -87.3, -200,
			0, float32(math.Copysign(0, -1)), math.Float32frombits(1), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
		for i := range x {
			if r.IntN(3) == 0 {
				x[i] = odd[r.IntN(len(odd))]
			}
		}
	}
	return x
}

// Every kernel this CPU runs gives softplusGo's bits, over lengths that
// are whole vectors, with a tail, and shorter than one.
func TestSoftplusMatchesTwin(t *testing.T) {
	ls := kernelLevels(t)
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{1, 3, 8, 9, 16, 63, 64, 200} {
		for _, hostile := range []bool{false, true} {
			x, bias := softplusInputs(r, n, hostile), softplusInputs(r, n, false)
			want := make([]float32, n)
			softplusGo(want, x, bias)
			for _, l := range ls {
				got := make([]float32, n)
				softplusAt(l, got, x, bias)
				if i := floatbits.FirstDiff(got, want); i >= 0 {
					t.Errorf("n %d, hostile %v: %v: softplus(%v + %v) = %v, twin %v", n, hostile, l, x[i], bias[i], got[i], want[i])
				}
			}
		}
	}
}

// The twin is softplus: within float32 rounding of log(1 + e^v) with 1 +
// e^v rounded to float32 (as model computed it with float64 functions),
// v itself above 20, and NaN for NaN.
func TestSoftplusGo(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, v := range append(softplusInputs(r, 20000, false), -100, -30, -1e-3, 0, 1e-3, 5, 19.99, 20, 20.01, 1e9, float32(math.Inf(1)), float32(math.Inf(-1))) {
		got := softplus(v)
		want := float64(v)
		if v <= 20 {
			want = math.Log(float64(1 + float32(math.Exp(float64(v)))))
		}
		if d := math.Abs(float64(got) - want); float64(got) != want && !(d <= 1.2e-7+3e-7*math.Abs(want)) {
			t.Errorf("softplus(%v) = %v, want %v", v, got, want)
		}
	}
	if got := softplus(float32(math.NaN())); got == got {
		t.Errorf("softplus(NaN) = %v", got)
	}
}

// A short argument panics in Go, and an empty one does nothing.
func TestSoftplusShortArguments(t *testing.T) {
	Softplus(nil, nil, nil)
	for i, name := range []string{"x", "bias"} {
		a := [][]float32{make([]float32, 9), make([]float32, 9)}
		a[i] = a[i][:8]
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("a short %s did not panic", name)
				}
			}()
			Softplus(make([]float32, 9), a[0], a[1])
		}()
	}
}

// BenchmarkSoftplus takes the time steps of 64 channels, with the twin
// and each kernel.
func BenchmarkSoftplus(b *testing.B) {
	r := rand.New(rand.NewPCG(25, 26))
	x, bias, dst := softplusInputs(r, 64, false), softplusInputs(r, 64, false), make([]float32, 64)
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			softplusGo(dst, x, bias)
		}
	})
	for _, l := range levels() {
		b.Run(fmt.Sprint(l), func(b *testing.B) {
			for b.Loop() {
				softplusAt(l, dst, x, bias)
			}
		})
	}
}
