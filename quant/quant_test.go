package quant

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// sameFloat reports whether got equals want, treating all NaNs as equal.
func sameFloat(got float32, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(float64(got))
	}
	return float64(got) == want
}

func TestDequantizeMatchesReference(t *testing.T) {
	kinds := []blockKind{kindRandom, kindZero, kindMaxCodes, kindMinCodes, kindNegScale, kindMixed}
	for _, typ := range supportedTypes {
		for _, kind := range kinds {
			for _, nb := range []int{1, 3, 64} {
				t.Run(fmt.Sprintf("%v/kind%d/%dblocks", typ, kind, nb), func(t *testing.T) {
					r := newRand(uint64(typ)<<32 | uint64(kind)<<16 | uint64(nb))
					n := nb * typ.BlockElems()
					src := randBlocks(typ, nb, r, kind)
					dst := make([]float32, n)
					if err := Dequantize(typ, dst, src); err != nil {
						t.Fatal(err)
					}
					for i := range dst {
						want, mag := refElem(typ, src, i)
						// Formats that are one product are exact in
						// float32; the others (a scaled quant minus a
						// scaled min) round each step.
						tol := 0x1p-22 * mag
						if diff := math.Abs(float64(dst[i]) - want); !(diff <= tol) && !sameFloat(dst[i], want) {
							t.Fatalf("element %d: got %g, want %g (tolerance %g)", i, dst[i], want, tol)
						}
					}
				})
			}
		}
	}
}

// Single-product formats must dequantize to exactly the float32 rounding of
// the true value.
func TestDequantizeExact(t *testing.T) {
	for _, typ := range []Type{F32, F16, BF16, Q4_0, Q5_0, Q8_0, Q8_1, Q8_K} {
		r := newRand(uint64(typ))
		src := randBlocks(typ, 64, r, kindMixed)
		dst := make([]float32, 64*typ.BlockElems())
		if err := Dequantize(typ, dst, src); err != nil {
			t.Fatal(err)
		}
		for i := range dst {
			want, _ := refElem(typ, src, i)
			if !sameFloat(dst[i], float64(float32(want))) {
				t.Fatalf("%v element %d: got %g, want %g", typ, i, dst[i], float32(want))
			}
		}
	}
}

// An infinite fp16 scale must give infinities (or NaN where it meets a zero
// quant), not finite garbage, in Dequantize and in the dot kernels.
func TestInfiniteScale(t *testing.T) {
	for _, typ := range []Type{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, IQ4_NL, IQ4_XS, IQ3_S,
		IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M, TQ1_0, TQ2_0} {
		r := newRand(uint64(typ) + 1000)
		w := randBlocks(typ, 2, r, kindRandom)
		off := 0
		switch typ {
		case Q6_K:
			off = 208
		case Q2_K:
			off = 80
		case Q3_K:
			off = 108
		case TQ1_0, TQ2_0:
			off = typ.BlockBytes() - 2
		}
		w[off], w[off+1] = 0x00, 0x7c // +Inf in the first block
		if typ == IQ1_M {
			// d (0x7c00) is the top nibbles of the scale words 48..55.
			w[0], w[1] = byte(r.Uint32()), byte(r.Uint32())
			for i, nib := range []byte{0, 0, 0xc, 0x7} {
				w[49+2*i] = w[49+2*i]&0x0f | nib<<4
			}
		}
		n := 2 * typ.BlockElems()
		dst := make([]float32, n)
		if err := Dequantize(typ, dst, w); err != nil {
			t.Fatal(err)
		}
		for i := range dst {
			want, mag := refElem(typ, w, i)
			if diff := math.Abs(float64(dst[i]) - want); !(diff <= 0x1p-22*mag) && !sameFloat(dst[i], want) {
				t.Fatalf("%v element %d: got %g, want %g", typ, i, dst[i], want)
			}
		}
		x := randBlocks(typ.VecDotType(), 2, r, kindMaxCodes)
		for _, k := range Kernels(typ) {
			if got := k.Dot(n, w, x); !math.IsInf(float64(got), 0) && !math.IsNaN(float64(got)) {
				t.Errorf("%v/%s: dot with an infinite scale = %g, want Inf or NaN", typ, k.Name, got)
			}
		}
	}
}

func TestDotMatchesReference(t *testing.T) {
	kinds := []blockKind{kindRandom, kindZero, kindMaxCodes, kindMinCodes, kindNegScale, kindMixed}
	for _, typ := range dotTypes {
		dot := opsOf(typ).dot
		vt := typ.VecDotType()
		for _, kind := range kinds {
			for _, nb := range []int{1, 3, 7, 64} {
				r := newRand(uint64(typ)<<32 | uint64(kind)<<16 | uint64(nb) | 1<<60)
				n := nb * typ.BlockElems()
				w := randBlocks(typ, nb, r, kind)
				x := randBlocks(vt, n/vt.BlockElems(), r, kindMixed)
				want, mag := refDot(typ, n, w, x)
				got := dot(n, w, x)
				if tol := dotTolerance(typ, n, mag); !(math.Abs(float64(got)-want) <= tol) {
					t.Errorf("%v kind %d, %d blocks: got %g, want %g (tolerance %g)", typ, kind, nb, got, want, tol)
				}
			}
		}
	}
}

// End to end as a model uses it: quantize the weights and the activations,
// dot them, and compare with the float64 dot of the dequantized rows.
func TestDotOfQuantizedRows(t *testing.T) {
	for _, typ := range dotTypes {
		vt := typ.VecDotType()
		for _, n := range []int{256, 4096} {
			r := newRand(uint64(typ)*7 + uint64(n))
			wf, xf := make([]float32, n), make([]float32, n)
			for i := range wf {
				wf[i] = float32(r.NormFloat64())
				xf[i] = float32(r.NormFloat64() * 3)
			}
			var w []byte
			if slices.Contains(decodeOnly, typ) {
				w = randBlocks(typ, n/QKK, r, kindRandom)
			} else {
				w = mustQuantize(t, typ, wf)
			}
			x := mustQuantize(t, vt, xf)
			wd, xd := mustDequantize(t, typ, w, n), mustDequantize(t, vt, x, n)
			var want, mag float64
			for i := range wd {
				want += float64(wd[i]) * float64(xd[i])
				_, wm := refElem(typ, w, i)
				mag += wm * math.Abs(float64(xd[i]))
			}
			var sErr float64
			if typ == Q4_1 || typ == Q5_1 {
				// The kernels take a block's Σx from the Q8_1 field
				// s = fp16(d·Σq), not from its quants: allow for that
				// rounding, 2^-11 relative.
				for b := 0; b < n/QK; b++ {
					m := float64(f16At(w[b*typ.BlockBytes()+2:]))
					s := float64(f16At(x[b*q8_1Bytes+2:]))
					sErr += math.Abs(m*s) * 0x1p-10
				}
			}
			for _, k := range Kernels(typ) {
				got := k.Dot(n, w, x)
				if tol := dotTolerance(typ, n, mag) + sErr; !(math.Abs(float64(got)-want) <= tol) {
					t.Errorf("%v/%s n=%d: got %g, want %g (tolerance %g)", typ, k.Name, n, got, want, tol)
				}
			}
		}
	}
}

// TestKernelsAgree runs every kernel for a type against the first (the pure
// Go one) on random blocks of several lengths at every alignment; kernels
// added later are covered automatically.
func TestKernelsAgree(t *testing.T) {
	for _, typ := range dotTypes {
		ks := Kernels(typ)
		if len(ks) == 0 || ks[0].Name != "generic" {
			t.Fatalf("%v: Kernels does not start with the generic kernel: %v", typ, ks)
		}
		vt := typ.VecDotType()
		lengths := []int{1, 3, 7, 64} // blocks
		if typ.BlockElems() == 1 {
			lengths = []int{1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 4096}
		}
		for _, k := range ks[1:] {
			if k.Type != typ {
				t.Errorf("%v/%s: kernel says it is for %v", typ, k.Name, k.Type)
			}
			for _, nb := range lengths {
				for off := 1; off <= 7; off++ {
					r := newRand(uint64(typ)<<40 | uint64(nb)<<8 | uint64(off))
					n := nb * typ.BlockElems()
					w := randBlocks(typ, nb, r, kindMixed)
					x := randBlocks(vt, n/vt.BlockElems(), r, kindMixed)
					_, mag := refDot(typ, n, w, x)
					want := ks[0].Dot(n, w, x)
					got := k.Dot(n, unaligned(w, off), unaligned(x, 8-off))
					if tol := 2 * dotTolerance(typ, n, mag); !(math.Abs(float64(got-want)) <= tol) {
						t.Errorf("%v/%s, %d blocks, offset %d: got %g, generic %g (tolerance %g)", typ, k.Name, nb, off, got, want, tol)
					}
				}
			}
		}
	}
}

func TestDotUnsupported(t *testing.T) {
	for _, typ := range []Type{Q8_1, Q8_K, I16, F64, I8, Type(99)} {
		if f, err := Dot(typ); err == nil || f != nil || !errors.Is(err, ErrUnsupportedType) {
			t.Errorf("Dot(%v) = %v, %v; want nil and ErrUnsupportedType", typ, f, err)
		}
		if ks := Kernels(typ); len(ks) != 0 {
			t.Errorf("Kernels(%v) = %v, want none", typ, ks)
		}
	}
	for _, typ := range dotTypes {
		if _, err := Dot(typ); err != nil {
			t.Errorf("Dot(%v): %v", typ, err)
		}
	}
}

func TestSizeErrors(t *testing.T) {
	tests := []struct {
		name        string
		t           Type
		elems, size int
		unsupported bool
	}{
		{"short", Q4_0, 64, 35, false},
		{"long", Q4_0, 64, 37, false},
		{"empty source", Q8_K, 256, 0, false},
		{"partial block", Q4_K, 100, 144, false},
		{"partial block 32", Q8_0, 33, 34, false},
		{"f16 odd bytes", F16, 4, 7, false},
		{"tq1_0 short", TQ1_0, 256, 53, false},
		{"tq2_0 long", TQ2_0, 256, 67, false},
		{"f64", F64, 4, 32, true},
		{"i16", I16, 4, 8, true},
		{"i8", I8, 4, 4, true},
		{"unknown", Type(99), 4, 4, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Dequantize(tc.t, make([]float32, tc.elems), make([]byte, tc.size))
			if err == nil {
				t.Errorf("Dequantize: no error")
			} else if errors.Is(err, ErrUnsupportedType) != tc.unsupported {
				t.Errorf("Dequantize: %v; ErrUnsupportedType = %v, want %v", err, !tc.unsupported, tc.unsupported)
			}
			err = QuantizeRow(tc.t, make([]byte, tc.size), make([]float32, tc.elems))
			if err == nil {
				t.Errorf("QuantizeRow: no error")
			} else if errors.Is(err, ErrUnsupportedType) != tc.unsupported {
				t.Errorf("QuantizeRow: %v; ErrUnsupportedType = %v, want %v", err, !tc.unsupported, tc.unsupported)
			}
		})
	}
	// Nil and empty rows are valid and do nothing.
	for _, typ := range supportedTypes {
		if err := Dequantize(typ, nil, nil); err != nil {
			t.Errorf("Dequantize(%v, nil, nil): %v", typ, err)
		}
		err := QuantizeRow(typ, nil, nil)
		if slices.Contains(decodeOnly, typ) {
			if !errors.Is(err, ErrUnsupportedType) {
				t.Errorf("QuantizeRow(%v, nil, nil) = %v, want ErrUnsupportedType (decoded, not encoded)", typ, err)
			}
		} else if err != nil {
			t.Errorf("QuantizeRow(%v, nil, nil): %v", typ, err)
		}
	}
}

// TestQuantizeRoundTrip quantizes float data of several shapes and checks
// the dequantized error against what each format can represent.
func TestQuantizeRoundTrip(t *testing.T) {
	shapes := []struct {
		name string
		gen  func(r *rand.Rand, i int) float32
	}{
		{"normal", func(r *rand.Rand, i int) float32 { return float32(r.NormFloat64()) }},
		{"tiny", func(r *rand.Rand, i int) float32 { return float32(r.NormFloat64() * 1e-6) }},
		{"positive", func(r *rand.Rand, i int) float32 { return float32(r.Float64()*5 + 1) }},
		{"negative", func(r *rand.Rand, i int) float32 { return -float32(r.Float64()*5 + 1) }},
		{"zeros", func(r *rand.Rand, i int) float32 { return 0 }},
		{"constant", func(r *rand.Rand, i int) float32 { return 0.75 }},
		{"outlier", func(r *rand.Rand, i int) float32 {
			if i%97 == 5 {
				return 40
			}
			return float32(r.NormFloat64())
		}},
		{"sparse", func(r *rand.Rand, i int) float32 {
			if i%64 < 48 {
				return 0
			}
			return float32(r.NormFloat64())
		}},
	}
	// relRMS bounds the RMS error relative to the RMS of the block data for
	// the normal shape; perElem bounds each element's error in units of
	// the block's largest magnitude (0 = not checked per element).
	types := []struct {
		t       Type
		relRMS  float64
		perElem float64
	}{
		{F32, 0, 0},
		{F16, 0x1p-11, 0x1p-11},
		{BF16, 0x1p-8, 0x1p-8},
		{Q8_0, 0.007, 1.0/254 + 0x1p-11},
		{Q8_1, 0.007, 1.0/254 + 0x1p-11},
		{Q8_K, 0.009, 1.0 / 254 * (1 + 1e-6)},
		{Q4_0, 0.10, 1.0/8 + 8*0x1p-11},
		{Q5_0, 0.055, 1.0/16 + 16*0x1p-11},
		{Q4_1, 0.09, 0},
		{Q5_1, 0.045, 0},
		{Q4_K, 0.085, 0},
		{Q5_K, 0.045, 0},
		{Q6_K, 0.022, 0},
		{Q2_K, 0.36, 0},
		{Q3_K, 0.17, 0},
		{IQ4_NL, 0.09, 0},
		{IQ4_XS, 0.09, 0},
		{IQ3_S, 0.21, 0},
		// Levels 0 … 12 in units of d = 2^⌊log2 amax⌋/8: at worst amax just
		// below 16d clips to 12d.
		{MXFP4, 0.11, 0.25},
		// d = amax: every element within d/2 (plus d's fp16 rounding);
		// most of a normal block rounds to 0.
		{TQ1_0, 0.9, 0.5 + 0x1p-11},
		{TQ2_0, 0.9, 0.5 + 0x1p-11},
	}
	for _, tc := range types {
		for _, sh := range shapes {
			t.Run(tc.t.String()+"/"+sh.name, func(t *testing.T) {
				r := newRand(uint64(tc.t)*31 + uint64(len(sh.name)))
				n := 1024
				src := make([]float32, n)
				for i := range src {
					src[i] = sh.gen(r, i)
				}
				q := mustQuantize(t, tc.t, src)
				got := mustDequantize(t, tc.t, q, n)
				be := tc.t.BlockElems()
				if be == 1 {
					be = 32
				}
				var se, sx float64
				for b := 0; b < n; b += be {
					var amax, lo, hi float64
					lo, hi = math.Inf(1), math.Inf(-1)
					for _, v := range src[b : b+be] {
						amax = math.Max(amax, math.Abs(float64(v)))
						lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
					}
					for i := b; i < b+be; i++ {
						e := math.Abs(float64(got[i]) - float64(src[i]))
						se += e * e
						sx += float64(src[i]) * float64(src[i])
						var bound float64
						switch {
						case tc.t == F32:
							bound = 0
						case tc.t == F16 || tc.t == BF16:
							bound = tc.perElem*math.Abs(float64(src[i])) + 0x1p-24
						case tc.perElem > 0:
							bound = tc.perElem*amax + 127*0x1p-25
						case tc.t == Q4_1 || tc.t == Q5_1:
							// Half a step, plus the fp16 rounding of d (relative
							// 2^-11, or absolute 2^-25 when subnormal) times
							// the code, plus that of m.
							steps := 15.0
							if tc.t == Q5_1 {
								steps = 31
							}
							d := (hi - lo) / steps
							bound = d*0.5*(1+1e-3) + steps*(d*0x1p-11+0x1p-25) + math.Abs(lo)*0x1p-11 + 0x1p-25
						default:
							// K-quants: no simple per-element bound, but never
							// beyond the block's range.
							bound = 2*(hi-lo) + amax + 1e-30
						}
						if !(e <= bound) {
							t.Fatalf("element %d: %g became %g (error %g > %g)", i, src[i], got[i], e, bound)
						}
					}
				}
				if sh.name == "normal" && tc.relRMS > 0 {
					if rel := math.Sqrt(se / sx); rel > tc.relRMS {
						t.Errorf("relative RMS error %.4f > %.4f", rel, tc.relRMS)
					} else {
						t.Logf("relative RMS error %.5f", rel)
					}
				}
				if sh.name == "zeros" || tc.t == F32 || sh.name == "constant" && (tc.t == F16 || tc.t == BF16 || tc.t == Q4_1 || tc.t == Q5_1 || tc.t == Q8_K) {
					for i := range got {
						if got[i] != src[i] {
							t.Fatalf("element %d: %g became %g, want exact", i, src[i], got[i])
						}
					}
				}
			})
		}
	}
}

// Values on a format's grid must survive a round trip exactly; this pins
// the element order and bit layout of the weight quantizers.
func TestQuantizeExactGrid(t *testing.T) {
	const d = 0.125 // a power of two, so 1/d and every product are exact
	tests := []struct {
		t   Type
		val func(k int) float32 // element for code k
		lo  int                 // smallest code
		hi  int                 // largest code
	}{
		{Q4_0, func(k int) float32 { return d * float32(k-8) }, 0, 15},
		{Q5_0, func(k int) float32 { return d * float32(k-16) }, 0, 31},
		{Q4_1, func(k int) float32 { return d*float32(k) - 0.5 }, 0, 15},
		{Q5_1, func(k int) float32 { return d*float32(k) - 0.5 }, 0, 31},
		{Q8_0, func(k int) float32 { return d * float32(k) }, -127, 127},
		{Q8_1, func(k int) float32 { return d * float32(k) }, -127, 127},
		{Q8_K, func(k int) float32 { return d * float32(k) }, -127, 127},
	}
	for _, tc := range tests {
		r := newRand(uint64(tc.t))
		n := 4 * tc.t.BlockElems()
		src := make([]float32, n)
		for b := 0; b < n; b += tc.t.BlockElems() {
			for i := b; i < b+tc.t.BlockElems(); i++ {
				src[i] = tc.val(tc.lo + r.IntN(tc.hi-tc.lo+1))
			}
			// Both extremes in every block fix the scale. The symmetric
			// formats map the largest magnitude to their lowest code.
			src[b+r.IntN(tc.t.BlockElems())] = tc.val(tc.lo)
			if tc.t == Q4_1 || tc.t == Q5_1 || tc.t == Q8_0 || tc.t == Q8_1 || tc.t == Q8_K {
				src[b+r.IntN(tc.t.BlockElems()/2)*2+1] = tc.val(tc.hi)
			}
		}
		got := mustDequantize(t, tc.t, mustQuantize(t, tc.t, src), n)
		for i := range got {
			if got[i] != src[i] {
				t.Errorf("%v element %d: %g became %g", tc.t, i, src[i], got[i])
				break
			}
		}
	}
}

func TestNoAllocs(t *testing.T) {
	const n = 4096
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%17) - 8
	}
	out := make([]float32, n)
	for _, typ := range supportedTypes {
		buf := make([]byte, typ.BlockBytes()*n/typ.BlockElems())
		if slices.Contains(decodeOnly, typ) {
			buf = randBlocks(typ, n/QKK, newRand(uint64(typ)), kindRandom)
		} else if a := testing.AllocsPerRun(5, func() { _ = QuantizeRow(typ, buf, x) }); a != 0 {
			t.Errorf("QuantizeRow(%v) allocates %v times", typ, a)
		}
		if a := testing.AllocsPerRun(5, func() { _ = Dequantize(typ, out, buf) }); a != 0 {
			t.Errorf("Dequantize(%v) allocates %v times", typ, a)
		}
	}
	for _, typ := range dotTypes {
		r := newRand(uint64(typ))
		w := randBlocks(typ, n/typ.BlockElems(), r, kindRandom)
		xq := randBlocks(typ.VecDotType(), n/typ.VecDotType().BlockElems(), r, kindRandom)
		for _, k := range Kernels(typ) {
			if a := testing.AllocsPerRun(10, func() { _ = k.Dot(n, w, xq) }); a != 0 {
				t.Errorf("%v/%s allocates %v times", typ, k.Name, a)
			}
		}
	}
}

func mustQuantize(t testing.TB, typ Type, src []float32) []byte {
	t.Helper()
	size, err := typ.RowBytes(int64(len(src)))
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, size)
	if err := QuantizeRow(typ, dst, src); err != nil {
		t.Fatal(err)
	}
	return dst
}

// superGrid returns 8 super-blocks of values on a K-quant grid with
// signed 6-bit sub-block scale codes: sub-block g (group elements) of
// block b holds D_b·c·level(), D_b from blockScale, c a random code in
// [-32, 32) and -32 for g = b mod the sub-blocks per block, and one of its
// elements is D_b·c·extreme, the level at the end of the range.
func superGrid(r *rand.Rand, group int, blockScale, level func() float64, extreme float64) []float32 {
	const nb = 8
	x := make([]float32, nb*QKK)
	for b := 0; b < nb; b++ {
		D := blockScale()
		for g := 0; g < QKK/group; g++ {
			c := r.IntN(64) - 32
			if g == b%(QKK/group) {
				c = -32
			}
			xs := x[b*QKK+group*g : b*QKK+group*g+group]
			for i := range xs {
				xs[i] = float32(D * float64(c) * level())
			}
			xs[r.IntN(group)] = float32(D * float64(c) * extreme)
		}
	}
	return x
}

// checkExactRoundTrip checks that x, made of values typ represents
// exactly, comes back from quantizing and dequantizing bit for bit.
func checkExactRoundTrip(t *testing.T, typ Type, x []float32) {
	t.Helper()
	got := mustDequantize(t, typ, mustQuantize(t, typ, x), len(x))
	for i := range x {
		if got[i] != x[i] {
			t.Fatalf("element %d: %g became %g", i, x[i], got[i])
		}
	}
}

func mustDequantize(t testing.TB, typ Type, src []byte, n int) []float32 {
	t.Helper()
	dst := make([]float32, n)
	if err := Dequantize(typ, dst, src); err != nil {
		t.Fatal(err)
	}
	return dst
}

func BenchmarkDot(b *testing.B) {
	const n = 4096
	for _, typ := range dotTypes {
		r := newRand(uint64(typ))
		w := randBlocks(typ, n/typ.BlockElems(), r, kindRandom)
		x := randBlocks(typ.VecDotType(), n/typ.VecDotType().BlockElems(), r, kindRandom)
		for _, k := range Kernels(typ) {
			b.Run(typ.String()+"/"+k.Name, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				var sink float32
				for b.Loop() {
					sink += k.Dot(n, w, x)
				}
				_ = sink
			})
		}
	}
}

func BenchmarkQuantizeRow(b *testing.B) {
	const n = 4096
	x := make([]float32, n)
	r := newRand(1)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, typ := range []Type{Q8_0, Q8_1, Q8_K} {
		buf := make([]byte, typ.BlockBytes()*n/typ.BlockElems())
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(4 * n)
			for b.Loop() {
				_ = QuantizeRow(typ, buf, x)
			}
		})
	}
}
