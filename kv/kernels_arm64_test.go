//go:build !purego

package kv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/internal/cpu"
	"github.com/lowmem/llm/internal/floatbits"
	"github.com/lowmem/llm/quant"
)

// The NEON kernels keep their Go twins' order of operations (fused
// multiply-adds included, as Go compiles the twins for arm64), so they
// must agree bit for bit.

// checkSame32 reports the first element of got whose bits are not want's.
func checkSame32(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if i := floatbits.FirstDiff(got, want); i >= 0 {
		t.Errorf("%s[%d] = %g, generic %g", what, i, got[i], want[i])
	}
}

// armRowsF16 returns n F16 values at an odd offset into a fresh slice,
// subnormals, infinities and zeros among them.
func armRowsF16(r *rand.Rand, n int) []uint16 {
	b := make([]uint16, n+1)
	for i := range b {
		switch r.IntN(16) {
		case 0:
			b[i] = uint16(r.IntN(0x400)) | uint16(r.IntN(2))<<15
		case 1:
			b[i] = 0x7c00
		default:
			b[i] = quant.FP32ToFP16(float32(r.NormFloat64()))
		}
	}
	return b[1:]
}

func armRowsI8(r *rand.Rand, n int) []int8 {
	b := make([]int8, n+3)
	for i := range b {
		b[i] = int8(r.IntN(256) - 128)
	}
	return b[3:]
}

func armF32(r *rand.Rand, n int) []float32 {
	b := make([]float32, n+1)
	for i := range b {
		b[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(20)-10)))
	}
	return b[1:]
}

var armLengths = []int{0, 1, 2, 3, 4, 5, 7, 8, 12, 15, 16, 17, 19, 31, 32, 33, 63, 64, 80, 100, 128, 129, 256}

func TestArmDotAxpyBitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range armLengths {
		for trial := 0; trial < 4; trial++ {
			q := armF32(r, n)
			k16, k8 := armRowsF16(r, n), armRowsI8(r, n)
			l16, l8 := armRowsF16(r, n), armRowsI8(r, n)
			if got, want := dotF16F32(k16, q), dotGeneric(k16, q); !floatbits.Same(got, want) {
				t.Errorf("n=%d: dotF16F32 %g, generic %g", n, got, want)
			}
			if got, want := dotI8F32(k8, q), dotGeneric(k8, q); !floatbits.Same(got, want) {
				t.Errorf("n=%d: dotI8F32 %g, generic %g", n, got, want)
			}
			a0, a1 := float32(r.NormFloat64()), float32(r.NormFloat64())
			check := func(name string, f, g func(dst []float32)) {
				got, want := append([]float32(nil), q...), append([]float32(nil), q...)
				got = append(got, 42)[:n] // a sentinel past the end
				f(got)
				g(want)
				checkSame32(t, fmt.Sprintf("n=%d: %s", n, name), got, want)
				if got[:n+1][n] != 42 {
					t.Errorf("n=%d: %s wrote past the end", n, name)
				}
			}
			check("axpyF16", func(d []float32) { axpyF16(d, a0, k16) }, func(d []float32) { axpyGeneric(d, a0, k16) })
			check("axpyI8", func(d []float32) { axpyI8(d, a0, k8) }, func(d []float32) { axpyGeneric(d, a0, k8) })
			check("axpy2F16", func(d []float32) { axpy2F16(d, a0, a1, k16, l16) }, func(d []float32) { axpy2Generic(d, a0, a1, k16, l16) })
			check("axpy2I8", func(d []float32) { axpy2I8(d, a0, a1, k8, l8) }, func(d []float32) { axpy2Generic(d, a0, a1, k8, l8) })
		}
	}
}

func TestArmScoresBitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, d := range []int{1, 4, 6, 8, 64, 80, 128} {
		for _, rows := range []int{1, 3, 4, 5, 8, 13} {
			q := armF32(r, d)
			k16, k8 := armRowsF16(r, rows*d), armRowsI8(r, rows*d)
			scales := armF32(r, rows)
			got16, got8 := make([]float32, rows+1), make([]float32, rows+1)
			got16[rows], got8[rows] = 42, 42
			scoresF16(got16[:rows], k16, q)
			scoresI8(got8[:rows], k8, scales, q)
			for i := 0; i < rows; i++ {
				if want := dotGeneric(k16[i*d:(i+1)*d], q); !floatbits.Same(got16[i], want) {
					t.Errorf("d=%d rows=%d: scoresF16[%d] = %g, generic %g", d, rows, i, got16[i], want)
				}
				if want := dotGeneric(k8[i*d:(i+1)*d], q) * scales[i]; !floatbits.Same(got8[i], want) {
					t.Errorf("d=%d rows=%d: scoresI8[%d] = %g, generic %g", d, rows, i, got8[i], want)
				}
			}
			if got16[rows] != 42 || got8[rows] != 42 {
				t.Errorf("d=%d rows=%d: scores wrote past the end", d, rows)
			}
		}
	}
}

// armQ4Rows returns rows q4_0 rows of d elements at an odd offset, from
// quantized random floats, some blocks with random codes and any finite,
// zero or subnormal scale.
func armQ4Rows(r *rand.Rand, rows, d int) []byte {
	rb := q4RowBytes(d)
	b := make([]byte, rows*rb+1)[1:]
	x := make([]float32, d)
	for i := 0; i < rows; i++ {
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		quantizeQ4(b[i*rb:(i+1)*rb], x)
		for blk := 0; blk < d/q4Block; blk++ {
			p := b[i*rb+blk*q4BlockBytes:]
			switch r.IntN(12) {
			case 0:
				for j := 2; j < q4BlockBytes; j++ {
					p[j] = byte(r.Uint32())
				}
				h := quant.FP32ToFP16(float32(r.NormFloat64() * 1000))
				p[0], p[1] = byte(h), byte(h>>8)
			case 1:
				p[0], p[1] = 0, 0
			case 2:
				p[0], p[1] = 1, 0x80
			}
		}
	}
	return b
}

// TestArmInt4BitExact holds the NEON Int4 kernels to their twins' bits,
// through the functions attention calls and every registered variant.
func TestArmInt4BitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, d := range []int{32, 64, 128, 160, 256} {
		for _, rows := range []int{1, 2, 3, 4, 5, 8, 13} {
			k := armQ4Rows(r, rows, d)
			q := armF32(r, d)
			want := make([]float32, rows)
			scoresQ4Rows(want, k, q)
			for _, v := range kern.scoresQ4.all {
				got := make([]float32, rows)
				v.f(got, k, q)
				checkSame32(t, fmt.Sprintf("d=%d rows=%d: scoresQ4 %s", d, rows, v.name), got, want)
			}
			w := armF32(r, rows)
			for i := range w {
				if i%4 == 2 {
					w[i] = 0
				}
			}
			o0 := armF32(r, d)
			wantV := append([]float32(nil), o0...)
			valuesQ4Rows(wantV, w, k)
			for _, v := range kern.valuesQ4.all {
				got := append([]float32(nil), o0...)
				v.f(got, w, k)
				checkSame32(t, fmt.Sprintf("d=%d rows=%d: valuesQ4 %s", d, rows, v.name), got, wantV)
			}
		}
	}
	// The four-heads kernels, against one head at a time through the
	// functions attention calls.
	for _, d := range []int{32, 128, 256} {
		for _, rows := range []int{1, 3, 4, 7} {
			k := armQ4Rows(r, rows, d)
			q := armF32(r, 4*d)
			st := rows + 2
			w := armF32(r, 4*st)
			for i := range w {
				if i%5 == 1 {
					w[i] = 0
				}
			}
			want := make([]float32, 4*st)
			for h := 0; h < 4; h++ {
				scoresQ4Rows(want[h*st:h*st+rows], k, q[h*d:(h+1)*d])
			}
			o0 := armF32(r, 4*d)
			wantV := append([]float32(nil), o0...)
			for h := 0; h < 4; h++ {
				valuesQ4Rows(wantV[h*d:(h+1)*d], w[h*st:h*st+rows], k)
			}
			for _, v := range kern.scoresQ4xN.all[1:] {
				got := make([]float32, 4*st)
				if n := v.f(got, st, rows, k, q, d); n != 4 {
					t.Fatalf("scoresQ4xN %s took %d heads", v.name, n)
				}
				checkSame32(t, fmt.Sprintf("d=%d rows=%d: scoresQ4xN %s", d, rows, v.name), got, want)
			}
			for _, v := range kern.valuesQ4xN.all[1:] {
				got := append([]float32(nil), o0...)
				if n := v.f(got, w, st, rows, k, d); n != 4 {
					t.Fatalf("valuesQ4xN %s took %d heads", v.name, n)
				}
				checkSame32(t, fmt.Sprintf("d=%d rows=%d: valuesQ4xN %s", d, rows, v.name), got, wantV)
			}
		}
	}
	if len(kern.scoresQ4.all) < 2 && cpu.Has(cpu.NEON) {
		t.Error("no NEON Int4 scores kernel registered")
	}
}
