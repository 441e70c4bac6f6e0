package kv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/internal/softmax"
	"github.com/lowmem/llm/quant"
)

// Every variant of every kernel family in the registry (kern) against its
// pure-Go twin, the first variant of the family; with -tags purego or on a
// CPU without the architecture's levels the families hold the twins only,
// and LLM_CPU caps which variants are listed. Float32 sums may be added in
// another order (and products fused), so dot products are compared within
// a bound relative to Σ|k·q|, and everything else within a few ulps;
// kernels that promise the same bits as another (the xN kernels against
// their level's single-head ones, the value kernels of all levels) are
// compared bit for bit.

// rowLevel is one level's multi-row kernels, which take rows of a multiple
// of mult elements.
type rowLevel struct {
	name        string
	mult        int
	scoresF16   scoresF16Func
	scoresI8    scoresI8Func
	valuesF16   valuesF16Func
	valuesI8    valuesI8Func
	scoresF16xN scoresF16xNFunc
	scoresI8xN  scoresI8xNFunc
	valuesF16xN valuesF16xNFunc
	valuesI8xN  valuesI8xNFunc
}

// rowLevels lists the levels of the multi-row families past the pure-Go
// one. The families list the same levels in the same order.
func rowLevels(t *testing.T) []rowLevel {
	var ls []rowLevel
	for i := 1; i < len(kern.scoresF16.all); i++ {
		v := kern.scoresF16.all[i]
		l := rowLevel{name: v.name, mult: v.mult, scoresF16: v.f,
			scoresI8: kern.scoresI8.all[i].f, valuesF16: kern.valuesF16.all[i].f, valuesI8: kern.valuesI8.all[i].f,
			scoresF16xN: kern.scoresF16xN.all[i].f, scoresI8xN: kern.scoresI8xN.all[i].f,
			valuesF16xN: kern.valuesF16xN.all[i].f, valuesI8xN: kern.valuesI8xN.all[i].f}
		for _, n := range []string{kern.scoresI8.all[i].name, kern.valuesF16.all[i].name, kern.valuesI8.all[i].name,
			kern.scoresF16xN.all[i].name, kern.scoresI8xN.all[i].name, kern.valuesF16xN.all[i].name, kern.valuesI8xN.all[i].name} {
			if n != v.name {
				t.Fatalf("the multi-row families disagree on level %d: %s and %s", i, v.name, n)
			}
		}
		ls = append(ls, l)
	}
	return ls
}

func TestKernelVariants(t *testing.T) {
	t.Logf("levels in use: %v", variantNames())
	t.Run("dot", testVariantsDot)
	t.Run("axpy", testVariantsAxpy)
	t.Run("extremes", testVariantsExtremes)
	t.Run("rows", testVariantsRows)
	t.Run("valuesAgree", testVariantsValuesAgree)
	t.Run("softmax", testVariantsSoftmax)
	t.Run("exp", testVariantsExp)
	t.Run("int4", testVariantsInt4)
}

// variantNames lists each family's variants, for the log.
func variantNames() map[string][]string {
	names := func(n int, f func(i int) string) []string {
		var s []string
		for i := range n {
			s = append(s, f(i))
		}
		return s
	}
	k := kern
	return map[string][]string{
		"dotF16":     names(len(k.dotF16.all), func(i int) string { return k.dotF16.all[i].name }),
		"axpy2I8":    names(len(k.axpy2I8.all), func(i int) string { return k.axpy2I8.all[i].name }),
		"scoresF16":  names(len(k.scoresF16.all), func(i int) string { return k.scoresF16.all[i].name }),
		"softmax":    names(len(k.softmax.all), func(i int) string { return k.softmax.all[i].name }),
		"scoresQ4":   names(len(k.scoresQ4.all), func(i int) string { return k.scoresQ4.all[i].name }),
		"valuesQ4xN": names(len(k.valuesQ4xN.all), func(i int) string { return k.valuesQ4xN.all[i].name }),
	}
}

// f16Row returns n random F16 values starting off elements into a fresh
// slice, so that starts are not 32-byte aligned.
func f16Row(r *rand.Rand, n, off int) []uint16 {
	b := make([]uint16, n+off)
	for i := range b {
		b[i] = quant.FP32ToFP16(float32(r.NormFloat64()))
	}
	return b[off:]
}

func i8Row(r *rand.Rand, n, off int) []int8 {
	b := make([]int8, n+off)
	for i := range b {
		b[i] = int8(r.IntN(256) - 128)
	}
	return b[off:]
}

func f32Row(r *rand.Rand, n, off int, sd float64) []float32 {
	b := make([]float32, n+off)
	for i := range b {
		b[i] = float32(r.NormFloat64() * sd)
	}
	return b[off:]
}

// closeF32 reports whether got is within ulps float32 ulps of want
// (relative), or both are NaN, or they are equal infinities.
func closeF32(got, want float32, ulps float64) bool {
	if got == want {
		return true
	}
	g, w := float64(got), float64(want)
	if math.IsNaN(g) || math.IsNaN(w) || math.IsInf(g, 0) || math.IsInf(w, 0) {
		return math.IsNaN(g) && math.IsNaN(w)
	}
	return math.Abs(g-w) <= ulps*0x1p-23*math.Max(math.Abs(w), 0x1p-126)
}

// dotBound is how far a float32 dot product of n terms may move with the
// order of its additions: a few roundings of the largest partial sums.
func dotBound(abs float64, n int) float64 { return 0x1p-22 * abs * float64(n+4) / 4 }

// closeDot compares dot products whose terms' magnitudes sum to abs: equal
// infinities or both NaN, or within dotBound.
func closeDot(got, want float32, abs float64, n int) bool {
	g, w := float64(got), float64(want)
	if math.IsNaN(g) || math.IsNaN(w) || math.IsInf(g, 0) || math.IsInf(w, 0) {
		return got == want || math.IsNaN(g) && math.IsNaN(w)
	}
	return math.Abs(g-w) <= dotBound(abs, n)
}

func testVariantsDot(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for n := 1; n <= 300; n++ {
		off := n % 4
		k16, k8 := f16Row(r, n, off), i8Row(r, n, off)
		q := f32Row(r, n, (n+1)%4, 1)
		var abs16, abs8 float64
		for i := range n {
			abs16 += math.Abs(float64(f16(k16[i]) * q[i]))
			abs8 += math.Abs(float64(k8[i]) * float64(q[i]))
		}
		for _, v := range kern.dotF16.all[1:] {
			got, want := v.f(k16, q), dotGeneric(k16, q)
			if math.Abs(float64(got-want)) > dotBound(abs16, n) {
				t.Errorf("n=%d: dotF16 %s = %v, Go %v", n, v.name, got, want)
			}
		}
		for _, v := range kern.dotI8.all[1:] {
			got, want := v.f(k8, q), dotGeneric(k8, q)
			if math.Abs(float64(got-want)) > dotBound(abs8, n) {
				t.Errorf("n=%d: dotI8 %s = %v, Go %v", n, v.name, got, want)
			}
		}
	}
}

func testVariantsAxpy(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for n := 1; n <= 300; n++ {
		off := n % 3
		v0, v1 := f16Row(r, n, off), f16Row(r, n, (off+1)%4)
		w0, w1 := i8Row(r, n, off), i8Row(r, n, (off+2)%4)
		dst := f32Row(r, n, (n+1)%4, 1)
		a0, a1 := float32(r.NormFloat64()), float32(r.NormFloat64())
		type kernel struct {
			name      string
			asm, gold func(d []float32)
		}
		var ks []kernel
		for _, v := range kern.axpyF16.all[1:] {
			ks = append(ks, kernel{"axpyF16/" + v.name, func(d []float32) { v.f(d, a0, v0) }, func(d []float32) { axpyGeneric(d, a0, v0) }})
		}
		for _, v := range kern.axpyI8.all[1:] {
			ks = append(ks, kernel{"axpyI8/" + v.name, func(d []float32) { v.f(d, a0, w0) }, func(d []float32) { axpyGeneric(d, a0, w0) }})
		}
		for _, v := range kern.axpy2F16.all[1:] {
			ks = append(ks, kernel{"axpy2F16/" + v.name, func(d []float32) { v.f(d, a0, a1, v0, v1) }, func(d []float32) { axpy2Generic(d, a0, a1, v0, v1) }})
		}
		for _, v := range kern.axpy2I8.all[1:] {
			ks = append(ks, kernel{"axpy2I8/" + v.name, func(d []float32) { v.f(d, a0, a1, w0, w1) }, func(d []float32) { axpy2Generic(d, a0, a1, w0, w1) }})
		}
		for _, k := range ks {
			got, want := append([]float32(nil), dst...), append([]float32(nil), dst...)
			k.asm(got)
			k.gold(want)
			for i := range n {
				// A fused product and a separate one differ by one rounding
				// of the product, which may dwarf a cancelled sum; bound by
				// the terms' size.
				scale := math.Abs(float64(dst[i])) + 130*(math.Abs(float64(a0))+math.Abs(float64(a1)))
				if math.Abs(float64(got[i]-want[i])) > 0x1p-22*scale {
					t.Fatalf("n=%d: %s[%d] = %v, Go %v", n, k.name, i, got[i], want[i])
				}
			}
		}
	}
}

// The single-row kernels on the values F16 and int8 can hold at their
// limits: infinities, NaN, the largest finite and subnormal halves, -128.
func testVariantsExtremes(t *testing.T) {
	halves := []uint16{0x7c00, 0xfc00, 0x7e00, 0x7bff, 0xfbff, 0x0001, 0x8001, 0x03ff, 0x0400, 0, 0x8000}
	for n := 1; n <= 40; n++ {
		for _, h := range halves {
			k := make([]uint16, n)
			k8 := make([]int8, n)
			q := make([]float32, n)
			for i := range k {
				k[i] = quant.FP32ToFP16(float32(i%5) - 2)
				k8[i] = int8(127 - 85*(i%4))
				q[i] = float32(i%7) - 3
			}
			k[n-1], k8[n/2] = h, -128
			q[n/3] = 65504
			var abs16, abs8 float64
			for i := range n {
				abs16 += math.Abs(float64(f16(k[i]) * q[i]))
				abs8 += math.Abs(float64(k8[i]) * float64(q[i]))
			}
			for _, v := range kern.dotF16.all[1:] {
				if got, want := v.f(k, q), dotGeneric(k, q); !closeDot(got, want, abs16, n) {
					t.Errorf("n=%d half %#04x: dotF16 %s = %v, Go %v", n, h, v.name, got, want)
				}
			}
			for _, v := range kern.dotI8.all[1:] {
				if got, want := v.f(k8, q), dotGeneric(k8, q); !closeDot(got, want, abs8, n) {
					t.Errorf("n=%d: dotI8 %s = %v, Go %v", n, v.name, got, want)
				}
			}
			for _, v := range kern.axpyF16.all[1:] {
				got, want := make([]float32, n), make([]float32, n)
				v.f(got, 0.5, k)
				axpyGeneric(want, 0.5, k)
				for i := range n {
					if !closeF32(got[i], want[i], 0) {
						t.Errorf("n=%d half %#04x: axpyF16 %s [%d] = %v, Go %v", n, h, v.name, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// rowsCase is one multi-row kernel input: rows of d elements, four queries
// and four weight vectors (stride apart) with some zero weights.
type rowsCase struct {
	rows, d, stride int
	k16             []uint16
	k8              []int8
	scales          []float32
	q               []float32 // 4·d
	w               []float32 // 4·stride
}

func newRowsCase(r *rand.Rand, rows, d int) rowsCase {
	c := rowsCase{rows: rows, d: d, stride: rows + 3}
	c.k16 = f16Row(r, rows*d+1, 1)
	c.k8 = i8Row(r, rows*d+1, 3)
	c.scales = f32Row(r, rows+1, 1, 0.01)
	c.q = f32Row(r, 4*d, 2, 1)
	c.w = f32Row(r, 4*c.stride, 1, 0.1)
	for i := range rows {
		switch i % 7 {
		case 1: // zero for one head only
			c.w[2*c.stride+i] = 0
		case 3: // zero for every head
			for h := range 4 {
				c.w[h*c.stride+i] = 0
			}
		case 5: // negative zero for two
			c.w[i] = float32(math.Copysign(0, -1))
			c.w[3*c.stride+i] = 0
		}
	}
	if rows > 2 {
		c.scales[rows-1] = 0 // an all-zero int8 row
	}
	return c
}

// The multi-row kernels of each width against their Go twins, and the xN
// kernels bit for bit against one call per head.
func testVariantsRows(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, x := range rowLevels(t) {
		for _, d := range []int{x.mult, 2 * x.mult, 3 * x.mult, 80, 128, 144} {
			if d%x.mult != 0 {
				continue
			}
			for _, rows := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 70} {
				t.Run(fmt.Sprintf("%s/d%d/rows%d", x.name, d, rows), func(t *testing.T) {
					testAsmRows(t, x, newRowsCase(r, rows, d))
				})
			}
		}
	}
}

func testAsmRows(t *testing.T, x rowLevel, c rowsCase) {
	rows, d, st := c.rows, c.d, c.stride
	for _, typ := range []Type{F16, Int8} {
		// Scores, one query at a time, against the Go rows.
		one := make([]float32, 4*st)
		for h := range 4 {
			q := c.q[h*d : (h+1)*d]
			got, want := one[h*st:h*st+rows+1], make([]float32, rows)
			got[rows] = 42 // must stay: the kernel writes rows floats
			var abs []float64
			if typ == F16 {
				x.scoresF16(got[:rows], c.k16, q)
				scoresF16Rows(want, c.k16, q)
				for i := range rows {
					var a float64
					for j := range d {
						a += math.Abs(float64(f16(c.k16[i*d+j]) * q[j]))
					}
					abs = append(abs, a)
				}
			} else {
				x.scoresI8(got[:rows], c.k8, c.scales, q)
				scoresI8Rows(want, c.k8, c.scales, q)
				for i := range rows {
					var a float64
					for j := range d {
						a += math.Abs(float64(c.k8[i*d+j]) * float64(q[j]))
					}
					abs = append(abs, a*math.Abs(float64(c.scales[i])))
				}
			}
			for i := range rows {
				if math.Abs(float64(got[i]-want[i])) > dotBound(abs[i], d) {
					t.Fatalf("%v scores head %d row %d = %v, Go %v", typ, h, i, got[i], want[i])
				}
			}
			if got[rows] != 42 {
				t.Fatalf("%v scores wrote past %d rows", typ, rows)
			}
		}
		// The xN kernels, given two, three or four queries: the same
		// bits as one call per query for the heads they take.
		for heads := 2; heads <= 4 && rows > 0; heads++ {
			multi := make([]float32, 4*st)
			q := c.q[:heads*d]
			var n int
			if typ == F16 {
				n = x.scoresF16xN(multi, st, rows, c.k16, q, d)
			} else {
				n = x.scoresI8xN(multi, st, rows, c.k8, c.scales, q, d)
			}
			if want := xnHeads(x.name, heads); n != want {
				t.Fatalf("%v scores xN took %d heads of %d, want %d", typ, n, heads, want)
			}
			for h := range n {
				for i := range rows {
					if a, b := math.Float32bits(multi[h*st+i]), math.Float32bits(one[h*st+i]); a != b {
						t.Fatalf("%v scores xN of %d head %d row %d = %v, alone %v", typ, heads, h, i, multi[h*st+i], one[h*st+i])
					}
				}
			}
		}

		// Values: each width alone, and xN, against the Go rows; the
		// assembly ones bit for bit against each other (every element
		// sums its rows in order with one FMA each, whatever the width).
		init := f32Row(rand.New(rand.NewPCG(uint64(rows), uint64(d))), 4*d, 0, 1)
		want := append([]float32(nil), init...)
		alone := append([]float32(nil), init...)
		for h := range 4 {
			o, w := alone[h*d:(h+1)*d], c.w[h*st:h*st+rows]
			if typ == F16 {
				valuesF16Rows(want[h*d:(h+1)*d], w, c.k16[:rows*d])
				x.valuesF16(o, w, c.k16[:rows*d])
			} else {
				valuesI8Rows(want[h*d:(h+1)*d], w, c.k8[:rows*d], c.scales)
				x.valuesI8(o, w, c.k8[:rows*d], c.scales[:rows])
			}
		}
		for heads := 2; heads <= 4 && rows > 0; heads++ {
			multi := append([]float32(nil), init...)
			var n int
			if typ == F16 {
				n = x.valuesF16xN(multi[:heads*d], c.w, st, rows, c.k16, d)
			} else {
				n = x.valuesI8xN(multi[:heads*d], c.w, st, rows, c.k8, c.scales, d)
			}
			if want := xnHeads(x.name, heads); n != want {
				t.Fatalf("%v values xN took %d heads of %d, want %d", typ, n, heads, want)
			}
			for j := range 4 * d {
				// The heads it took as alone, the others untouched.
				w := alone[j]
				if j >= n*d {
					w = init[j]
				}
				if math.Float32bits(multi[j]) != math.Float32bits(w) {
					t.Fatalf("%v values xN of %d [%d] = %v, want %v", typ, heads, j, multi[j], w)
				}
			}
		}
		for j := range 4 * d {
			// Every term is at most 0.5·|v|·|w|, |v| < 5 (F16) or 128·scale.
			if math.Abs(float64(alone[j]-want[j])) > 0x1p-20*(math.Abs(float64(init[j]))+float64(rows)) {
				t.Fatalf("%v values [%d] = %v, Go %v", typ, j, alone[j], want[j])
			}
		}
	}
}

// xnHeads is how many of heads queries the xN kernels of the level named
// level take: whole fours, then with AVX-512 a last two.
func xnHeads(level string, heads int) int {
	n := heads / 4 * 4
	if level == "avx512" && heads-n >= 2 {
		n += 2
	}
	return n
}

// The value kernels of every level give the same bits, and so do the
// wrappers Attend calls, whichever kernels they pick.
func testVariantsValuesAgree(t *testing.T) {
	ls := rowLevels(t)
	if len(ls) < 2 {
		t.Skip("fewer than two levels of multi-row kernels")
	}
	r := rand.New(rand.NewPCG(17, 18))
	for _, d := range []int{16, 48, 80, 128, 256} {
		for _, rows := range []int{1, 2, 3, 64, 65, 130} {
			c := newRowsCase(r, rows, d)
			a, b := make([]float32, 4*d), make([]float32, 4*d)
			ls[0].valuesF16xN(a, c.w, c.stride, rows, c.k16, d)
			valuesF16xN(b, c.w, c.stride, rows, c.k16, d)
			for j := range a {
				if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
					t.Fatalf("d=%d rows=%d: [%d] %s %v, in use %v", d, rows, j, ls[0].name, a[j], b[j])
				}
			}
		}
	}
}

func testVariantsSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	ks := kern.softmax.all[1:]
	inputs := map[string]func(n int) []float32{
		"normal":  func(n int) []float32 { return f32Row(r, n, n%4, 10) },
		"wide":    func(n int) []float32 { return f32Row(r, n, n%4, 300) },
		"equal":   func(n int) []float32 { s := make([]float32, n); return s },
		"tiny":    func(n int) []float32 { return f32Row(r, n, 1, 1e-30) },
		"neginf":  func(n int) []float32 { s := f32Row(r, n, 0, 1); s[n/2] = float32(math.Inf(-1)); return s },
		"huge":    func(n int) []float32 { s := f32Row(r, n, 0, 1); s[n-1] = 3e38; return s },
		"nan":     func(n int) []float32 { s := f32Row(r, n, 0, 1); s[n/3] = float32(math.NaN()); return s },
		"posinf":  func(n int) []float32 { s := f32Row(r, n, 0, 1); s[0] = float32(math.Inf(1)); return s },
		"under16": func(n int) []float32 { s := f32Row(r, n, 0, 1); s[0] = 30; return s }, // weights below F16's range
	}
	for name, in := range inputs {
		for n := 1; n <= 300; n++ {
			x := in(n)
			for _, round16 := range []bool{false, true} {
				want := append([]float32(nil), x...)
				softmaxGeneric(want, 0.125, round16)
				for _, k := range ks {
					got := append([]float32(nil), x...)
					k.f(got, 0.125, round16)
					for i := range n {
						ok := closeF32(got[i], want[i], 3)
						if round16 {
							// One float32 ulp before rounding can cross an F16
							// rounding boundary.
							ok = got[i] == want[i] || math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i])) ||
								math.Abs(float64(got[i]-want[i])) <= ulp16(float64(want[i]))
							if roundFP16(got[i]) != got[i] && !math.IsNaN(float64(got[i])) {
								t.Fatalf("%s %s n=%d: weight %d = %v is not an F16 value", k.name, name, n, i, got[i])
							}
						}
						if !ok {
							t.Fatalf("%s %s n=%d round16=%v: s[%d] = %v, Go %v", k.name, name, n, round16, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestAsmExp checks the exponential itself, which the kernels compute
// lane by lane as softmax.Expf does, to the bit: with one score at 0 and
// the others below it, the sum is within 2⁻²⁶ of 1 (every other weight is
// below 2⁻³⁴), whose float32 reciprocal is exactly 1, so the others'
// weights are their exponentials — including those under Expf's floor,
// which are 0, and NaN. Lengths 1 to 70 take every loop of the kernels.
func testVariantsExp(t *testing.T) {
	kernels := map[string]func([]float32){}
	for _, v := range kern.softmax.all[1:] {
		kernels[v.name] = func(s []float32) { v.f(s, 1, false) }
	}
	r := rand.New(rand.NewPCG(21, 22))
	for name, f := range kernels {
		for n := 1; n <= 70; n++ {
			for range 40 {
				s := make([]float32, n)
				for i := 1; i < n; i++ {
					s[i] = float32(-25 - r.Float64()*75) // both sides of the floor, -87.3
				}
				x := append([]float32(nil), s...)
				f(s)
				if s[0] != 1 {
					t.Fatalf("%s n=%d: weight of the maximum = %v, want 1", name, n, s[0])
				}
				for i := 1; i < n; i++ {
					if want := softmax.Expf(x[i]); math.Float32bits(s[i]) != math.Float32bits(want) {
						t.Fatalf("%s n=%d: exp(%v) = %v, softmax.Expf %v", name, n, x[i], s[i], want)
					}
				}
			}
		}
	}
}
