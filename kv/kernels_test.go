package kv

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lowmem/llm/quant"
)

// The kernels against plain loops in float64, on lengths that exercise the
// unrolled body and the tail.
func TestKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 3, 4, 5, 8, 31, 64, 129} {
		q := randVec(r, n, 1)
		k16 := make([]uint16, n)
		k8 := make([]int8, n)
		for i := range n {
			k16[i] = quant.FP32ToFP16(float32(r.NormFloat64()))
			k8[i] = int8(r.IntN(255) - 127)
		}
		var want16, want8 float64
		for i := range n {
			want16 += float64(f16(k16[i])) * float64(q[i])
			want8 += float64(k8[i]) * float64(q[i])
		}
		tol := 1e-5 * float64(n+1)
		if got := dotF16F32(k16, q); math.Abs(float64(got)-want16) > tol {
			t.Errorf("n=%d: dotF16F32 = %v, want %v", n, got, want16)
		}
		if got := dotI8F32(k8, q); math.Abs(float64(got)-want8) > tol*127 {
			t.Errorf("n=%d: dotI8F32 = %v, want %v", n, got, want8)
		}
		// One rounding apart at most: a compiler may fuse multiply and add.
		near := func(got, want float32) bool {
			return math.Abs(float64(got-want)) <= 0x1p-22*(math.Abs(float64(want))+1)
		}
		const a0, a1 = 0.75, -1.5
		d16, d8 := append([]float32(nil), q...), append([]float32(nil), q...)
		axpyF16(d16, a0, k16)
		axpyI8(d8, a0, k8)
		e16, e8 := append([]float32(nil), q...), append([]float32(nil), q...)
		rev16, rev8 := slices.Clone(k16), slices.Clone(k8)
		slices.Reverse(rev16)
		slices.Reverse(rev8)
		axpy2F16(e16, a0, a1, k16, rev16)
		axpy2I8(e8, a0, a1, k8, rev8)
		for i := range n {
			x16, y16 := float64(f16(k16[i])), float64(f16(rev16[i]))
			x8, y8 := float64(k8[i]), float64(rev8[i])
			if w := float32(float64(q[i]) + a0*x16); !near(d16[i], w) {
				t.Errorf("n=%d: axpyF16[%d] = %v, want %v", n, i, d16[i], w)
			}
			if w := float32(float64(q[i]) + a0*x8); !near(d8[i], w) {
				t.Errorf("n=%d: axpyI8[%d] = %v, want %v", n, i, d8[i], w)
			}
			if w := float32(float64(q[i]) + a0*x16 + a1*y16); !near(e16[i], w) {
				t.Errorf("n=%d: axpy2F16[%d] = %v, want %v", n, i, e16[i], w)
			}
			if w := float32(float64(q[i]) + a0*x8 + a1*y8); !near(e8[i], w) {
				t.Errorf("n=%d: axpy2I8[%d] = %v, want %v", n, i, e8[i], w)
			}
		}
	}
}

var benchSink float32

func BenchmarkKernels(b *testing.B) {
	const rows, dim = 4096, 128
	r := rand.New(rand.NewPCG(1, 2))
	k16 := make([]uint16, rows*dim)
	k8 := make([]int8, rows*dim)
	for i := range k16 {
		k16[i] = quant.FP32ToFP16(float32(r.NormFloat64()))
		k8[i] = int8(r.IntN(255) - 127)
	}
	q := randVec(r, dim, 1)
	benchRowKernels(b, "F16", k16, q, dotF16F32, axpyF16, axpy2F16)
	benchRowKernels(b, "I8", k8, q, dotI8F32, axpyI8, axpy2I8)
}

// benchRowKernels times one element type's dot, axpy and axpy2 over the same
// rows, so the fp16 and int8 caches are measured alike.
func benchRowKernels[T uint16 | int8](b *testing.B, typ string, k []T, q []float32,
	dot func([]T, []float32) float32, axpy func([]float32, float32, []T),
	axpy2 func([]float32, float32, float32, []T, []T)) {
	dim := len(q)
	rows := len(k) / dim
	o := make([]float32, dim)
	row := func(i int) []T { return k[i*dim : (i+1)*dim] }
	perElem := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows*dim), "ns/elem")
	}
	b.Run("dot"+typ+"F32", func(b *testing.B) {
		for b.Loop() {
			var s float32
			for i := range rows {
				s += dot(row(i), q)
			}
			benchSink = s
		}
		perElem(b)
	})
	b.Run("axpy"+typ, func(b *testing.B) {
		for b.Loop() {
			for i := range rows {
				axpy(o, 0x1p-12, row(i))
			}
		}
		perElem(b)
	})
	b.Run("axpy2"+typ, func(b *testing.B) {
		for b.Loop() {
			for i := 0; i < rows; i += 2 {
				axpy2(o, 0x1p-12, 0x1p-13, row(i), row(i+1))
			}
		}
		perElem(b)
	})
}

func TestRoundHalfAway(t *testing.T) {
	for _, c := range []struct{ in, want float32 }{
		{0.5, 1}, {-0.5, -1}, {1.5, 2}, {2.5, 3}, {-2.5, -3},
		{0.49999997, 0}, {-0.49999997, 0}, {126.5, 127}, {0, 0},
	} {
		if got := roundHalfAway(c.in); got != c.want {
			t.Errorf("roundHalfAway(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
