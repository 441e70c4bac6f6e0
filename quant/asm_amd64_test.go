//go:build amd64 && !purego

package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/cpu"
)

// The assembly kernels are checked against asmRef, an exact (float64)
// evaluation of the block formats written independently of the Go kernels,
// so a mistake shared by a Go kernel and an assembly one still shows.

// asmTypes are the weight types that have assembly kernels.
var asmTypes = []Type{F32, F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, IQ4_NL, IQ4_XS, IQ3_S,
	IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M, MXFP4, TQ1_0, TQ2_0}

// asmSignTrick says whether the kernels of t take the sign of a weight to
// the activation (VPSIGNB, or a masked negation), which is exact for the
// activations ggml's and this package's quantizers produce, [-127, 127],
// but not for -128.
func asmSignTrick(t Type) bool {
	switch t {
	case Q8_0, IQ4_NL, IQ4_XS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M, MXFP4:
		return true
	}
	return false
}

// asmFill says how asmRow fills a row.
type asmFill int

const (
	fillRandom   asmFill = iota
	fillZero             // every byte 0
	fillOnes             // every byte 0xFF: the scales are NaN
	fillMaxScale         // random quants, every scale the largest fp16
	fillNegScale         // random quants, every scale negative
	fillExtreme          // quants at their extremes, scales positive
)

func (f asmFill) String() string {
	return [...]string{"random", "zero", "ones", "maxscale", "negscale", "extreme"}[f]
}

// asmHalf returns random fp16 bits of a normal number of magnitude 2^-6..2^4.
func asmHalf(r *rand.Rand, neg bool) uint16 {
	h := uint16(9+r.IntN(11))<<10 | uint16(r.IntN(1024))
	if neg || r.IntN(2) == 0 {
		h |= 0x8000
	}
	return h
}

// asmHalfToF64 decodes fp16 bits.
func asmHalfToF64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 31
	m := float64(h & 1023)
	switch e {
	case 0:
		return sign * m * math.Ldexp(1, -24)
	case 31:
		if m == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * (1 + m/1024) * math.Ldexp(1, e-15)
}

const asmMaxHalf = 0x7BFF // 65504

// asmRow returns nb blocks of type t (weights or activations) filled per f.
// Activation types hold int8 in [-127, 127] as ggml's quantizers produce, and
// Q8_K carries the block sums its consumers rely on.
func asmRow(r *rand.Rand, t Type, nb int, f asmFill) []byte {
	bs := t.BlockBytes()
	b := make([]byte, nb*bs)
	switch f {
	case fillZero:
		return b
	case fillOnes:
		for i := range b {
			b[i] = 0xFF
		}
		return b
	}
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	half := func() uint16 {
		switch f {
		case fillMaxScale:
			return asmMaxHalf
		case fillNegScale:
			return asmHalf(r, true)
		case fillExtreme:
			return asmHalf(r, false) &^ 0x8000
		}
		return asmHalf(r, false)
	}
	act := func() int8 {
		if f == fillExtreme {
			return int8(127 - 254*r.IntN(2))
		}
		return int8(r.IntN(255) - 127)
	}
	for blk := 0; blk < nb; blk++ {
		p := b[blk*bs : (blk+1)*bs]
		switch t {
		case F32:
			v := float32(r.NormFloat64())
			switch f {
			case fillMaxScale:
				v *= 1e16
			case fillNegScale:
				v = -float32(math.Abs(float64(v)))
			case fillExtreme:
				v = 1e17
			}
			binary.LittleEndian.PutUint32(p, math.Float32bits(v))
		case F16:
			h := half()
			if f == fillRandom {
				h = uint16(r.IntN(0x7C00)) | uint16(r.IntN(2))<<15 // any finite half
			}
			binary.LittleEndian.PutUint16(p, h)
		case Q8_0:
			binary.LittleEndian.PutUint16(p, half())
			if f == fillExtreme {
				for j := 2; j < bs; j++ {
					p[j] = 0x80 // -128, the one value |w| does not fit int8
				}
			}
		case Q4_0, Q5_0:
			binary.LittleEndian.PutUint16(p, half())
			if f == fillExtreme {
				for j := 2; j < bs; j++ {
					p[j] = byte(0xFF * r.IntN(2)) // nibbles 0 or 15
				}
			}
		case Q4_1, Q5_1, Q4_K, Q5_K:
			// The same head: fp16 d, then m (K: dmin); past it, at
			// the extreme, every bit set.
			binary.LittleEndian.PutUint16(p, half())
			binary.LittleEndian.PutUint16(p[2:], half())
			if f == fillExtreme {
				for j := 4; j < bs; j++ {
					p[j] = 0xFF
				}
			}
		case Q6_K:
			binary.LittleEndian.PutUint16(p[208:], half())
			if f == fillExtreme {
				for j := 0; j < 192; j++ {
					p[j] = 0xFF
				}
				for j := 192; j < 208; j++ {
					p[j] = byte(0x80 | 0x7F*byte(r.IntN(2))) // -128 or -1
				}
			}
		case Q2_K:
			binary.LittleEndian.PutUint16(p[80:], half())
			binary.LittleEndian.PutUint16(p[82:], half())
			if f == fillExtreme {
				for j := 0; j < 80; j++ {
					p[j] = 0xFF // quants 3, scales and mins 15
				}
			}
		case TQ1_0, TQ2_0:
			binary.LittleEndian.PutUint16(p[bs-2:], half())
			if f == fillExtreme {
				for j := 0; j < bs-2; j++ {
					p[j] = byte(0xFF * r.IntN(2)) // codes all 2 (TQ2_0: 3) or all 0
				}
			}
		case Q3_K:
			binary.LittleEndian.PutUint16(p[108:], half())
			if f == fillExtreme {
				for j := 0; j < 96; j++ {
					p[j] = byte(0xFF * r.IntN(2)) // quants 3 or -4
				}
			}
		case IQ4_NL, IQ4_XS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S:
			binary.LittleEndian.PutUint16(p, half())
			if f == fillExtreme {
				first := 2
				if t == IQ4_XS {
					first = 8
				}
				for j := first; j < bs; j++ {
					// IQ4: levels -127 or 113. The lattice types: the
					// first or the last grid points, every sign and
					// scale bit of a byte set or clear.
					p[j] = byte(0xFF * r.IntN(2))
				}
			}
		case IQ3_XXS, IQ1_S:
			binary.LittleEndian.PutUint16(p, half())
			if f == fillExtreme {
				for j := 2; j < bs; j++ {
					p[j] = byte(0xFF * r.IntN(2)) // the last grid points or the first; scales 15 or 0 (IQ1_S: 7 or 0), signs all set or none
				}
			}
		case MXFP4:
			// Exponents whose products stay finite in float32.
			p[0] = byte(100 + r.IntN(50))
			if f == fillMaxScale {
				p[0] = 160
			}
			if f == fillExtreme {
				for j := 1; j < bs; j++ {
					p[j] = byte(0x77 | 0x88*r.IntN(2)) // levels 12 or -12
				}
			}
		case IQ1_M:
			// No d field: its fp16 bits are the top nibbles of the four
			// scale words at 48.
			if f == fillExtreme {
				for j := range p {
					p[j] = byte(0xFF * r.IntN(2))
				}
			}
			h := half()
			for i := 0; i < 4; i++ {
				p[49+2*i] = p[49+2*i]&0x0F | byte(h>>(4*i))<<4
			}
		case Q8_1:
			binary.LittleEndian.PutUint16(p, half())
			binary.LittleEndian.PutUint16(p[2:], half())
			for j := 4; j < bs; j++ {
				p[j] = byte(act())
			}
		case Q8_K:
			d := float32(asmHalfToF64(half()))
			if f == fillMaxScale {
				d = 65504
			}
			binary.LittleEndian.PutUint32(p, math.Float32bits(d))
			for j := 0; j < QKK; j++ {
				v := act()
				if f == fillExtreme && j%3 == 0 {
					v = -128
				}
				p[4+j] = byte(v)
			}
			for g := 0; g < QKK/16; g++ {
				s := 0
				for j := 0; j < 16; j++ {
					s += int(int8(p[4+16*g+j]))
				}
				binary.LittleEndian.PutUint16(p[4+QKK+2*g:], uint16(int16(s)))
			}
		}
		if t == Q8_0 && f != fillExtreme {
			// Q8_0 is also the activation type: keep it in [-127, 127].
			for j := 2; j < bs; j++ {
				if p[j] == 0x80 {
					p[j] = 0x81
				}
			}
		}
	}
	return b
}

// asmKScaleMin unpacks the 6-bit scale and min of sub-block j of a Q4_K or
// Q5_K block from its 12 packed bytes.
func asmKScaleMin(q []byte, j int) (sc, m float64) {
	if j < 4 {
		return float64(q[j] & 63), float64(q[j+4] & 63)
	}
	return float64(q[j+4]&0xF | (q[j-4]>>6)<<4), float64(q[j+4]>>4 | (q[j]>>6)<<4)
}

// asmRef evaluates the dot product of n elements of weights w (type t) and
// activations x (t.VecDotType()) in float64, term by term, and returns it
// with the sum of the terms' magnitudes, which bounds the rounding error of
// any float32 evaluation order.
func asmRef(t Type, n int, w, x []byte) (dot, mag float64) {
	add := func(v float64) {
		dot += v
		mag += math.Abs(v)
	}
	f16 := func(b []byte) float64 { return asmHalfToF64(binary.LittleEndian.Uint16(b)) }
	i8 := func(b byte) float64 { return float64(int8(b)) }
	nb := n / t.BlockElems()
	wb, xb := t.BlockBytes(), t.VecDotType().BlockBytes()
	for blk := 0; blk < nb; blk++ {
		p := w[blk*wb : (blk+1)*wb]
		q := x[blk*xb : (blk+1)*xb]
		switch t {
		case F32:
			a := float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
			b := float64(math.Float32frombits(binary.LittleEndian.Uint32(q)))
			add(a * b)
		case F16:
			add(f16(p) * f16(q))
		case Q8_0:
			d := f16(p) * f16(q)
			for j := 0; j < QK; j++ {
				add(d * i8(p[2+j]) * i8(q[2+j]))
			}
		case Q4_0, Q5_0:
			d := f16(p) * f16(q)
			qs, qh := p[2:], uint32(0)
			if t == Q5_0 {
				qh = binary.LittleEndian.Uint32(p[2:])
				qs = p[6:]
			}
			for j := 0; j < QK; j++ {
				v := int(qs[j%16] >> (4 * (j / 16)) & 15)
				if t == Q5_0 {
					v |= int(qh>>j&1) << 4
					v -= 16
				} else {
					v -= 8
				}
				add(d * float64(v) * i8(q[2+j]))
			}
		case Q4_1:
			d := f16(p) * f16(q)
			for j := 0; j < QK; j++ {
				add(d * float64(p[4+j%16]>>(4*(j/16))&15) * i8(q[4+j]))
			}
			add(f16(p[2:]) * f16(q[2:]))
		case Q5_1:
			d := f16(p) * f16(q)
			qh := binary.LittleEndian.Uint32(p[4:])
			for j := 0; j < QK; j++ {
				v := int(p[8+j%16]>>(4*(j/16))&15) | int(qh>>j&1)<<4
				add(d * float64(v) * i8(q[4+j]))
			}
			add(f16(p[2:]) * f16(q[2:]))
		case Q4_K, Q5_K:
			yd := float64(math.Float32frombits(binary.LittleEndian.Uint32(q)))
			d, dmin := f16(p)*yd, f16(p[2:])*yd
			qs, qh := p[16:], []byte(nil)
			if t == Q5_K {
				qh, qs = p[16:48], p[48:]
			}
			for i := 0; i < QKK; i++ {
				chunk, l := i/64, i%32
				hi := (i / 32) % 2
				v := int(qs[32*chunk+l] >> (4 * hi) & 15)
				if qh != nil {
					v |= int(qh[l]>>(2*chunk+hi)&1) << 4
				}
				sc, m := asmKScaleMin(p[4:16], i/32)
				y := i8(q[4+i])
				add(d * sc * float64(v) * y)
				add(-dmin * m * y)
			}
		case Q6_K:
			yd := float64(math.Float32frombits(binary.LittleEndian.Uint32(q)))
			d := f16(p[208:]) * yd
			for i := 0; i < QKK; i++ {
				h, r := i/128, i%128
				l, k := r%32, r/32
				ql := p[64*h+l+32*(k%2)] >> (4 * (k / 2)) & 15
				qh := p[128+32*h+l] >> (2 * k) & 3
				v := int(ql|qh<<4) - 32
				add(d * i8(p[192+i/16]) * float64(v) * i8(q[4+i]))
			}
		case Q2_K, Q3_K, IQ4_NL, IQ4_XS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M, MXFP4, TQ1_0, TQ2_0:
			// ref_test.go's element decoders, as independent of the Go
			// kernels as the cases above.
			d, m := refDot(t, t.BlockElems(), p, q)
			dot += d
			mag += m
		default:
			panic("asmRef: no reference for " + t.String())
		}
	}
	return dot, mag
}

// asmCheck reports whether got is within float32 rounding of want.
func asmCheck(got float32, want, mag float64) bool {
	if math.IsNaN(want) || math.IsInf(want, 0) {
		return math.IsNaN(float64(got)) || float64(got) == want
	}
	return math.Abs(float64(got)-want) <= 1e-5*mag
}

// asmOffset copies b to an offset of off bytes inside a larger buffer, so the
// kernels see unaligned rows.
func asmOffset(b []byte, off int) []byte {
	buf := make([]byte, len(b)+off+7)
	for i := range buf {
		buf[i] = 0xA5
	}
	return append(buf[:off], b...)[off : off+len(b) : off+len(b)]
}

func TestAsmKernelsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fills := []asmFill{fillRandom, fillZero, fillOnes, fillMaxScale, fillNegScale, fillExtreme}
	for _, typ := range asmTypes {
		var asm []Kernel
		for _, k := range Kernels(typ) {
			if k.Name != "generic" {
				asm = append(asm, k)
			}
		}
		if len(asm) == 0 {
			t.Logf("%v: no assembly kernel on this CPU", typ)
			continue
		}
		counts := []int{1, 2, 3, 5, 8, 17, 64}
		if typ.BlockElems() == 1 {
			counts = []int{1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 127, 130, 4096}
		}
		for _, fill := range fills {
			for _, nb := range counts {
				n := nb * typ.BlockElems()
				w := asmRow(r, typ, nb, fill)
				xfill := fill
				if fill == fillExtreme && asmSignTrick(typ) {
					xfill = fillRandom // -128 weights, or a sign trick, need activations of ±127
				}
				x := asmRow(r, typ.VecDotType(), nb, xfill)
				want, mag := asmRef(typ, n, w, x)
				for off := 0; off < 8; off++ {
					wo, xo := asmOffset(w, off), asmOffset(x, (off*3)%8)
					for _, k := range asm {
						got := k.Dot(n, wo, xo)
						if !asmCheck(got, want, mag) {
							t.Errorf("%v/%s %v n=%d off=%d: got %v, want %v (magnitude %g)",
								typ, k.Name, fill, n, off, got, want, mag)
						}
					}
				}
			}
		}
	}
}

// TestAsmKernelsMatchGeneric compares every assembly kernel with the pure-Go
// kernel on random rows of the size a model has.
func TestAsmKernelsMatchGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range asmTypes {
		ks := Kernels(typ)
		if len(ks) < 2 || ks[0].Name != "generic" {
			continue
		}
		n := 4096
		for i := 0; i < 20; i++ {
			nb := n / typ.BlockElems()
			w := asmRow(r, typ, nb, fillRandom)
			x := asmRow(r, typ.VecDotType(), nb, fillRandom)
			_, mag := asmRef(typ, n, w, x)
			want := ks[0].Dot(n, w, x)
			for _, k := range ks[1:] {
				if got := k.Dot(n, w, x); !asmCheck(got, float64(want), 2*mag) {
					t.Errorf("%v/%s: got %v, generic %v (magnitude %g)", typ, k.Name, got, want, mag)
				}
			}
		}
	}
}

func TestAsmKernelsEmpty(t *testing.T) {
	for _, typ := range asmTypes {
		for _, k := range Kernels(typ) {
			if got := k.Dot(0, nil, nil); got != 0 {
				t.Errorf("%v/%s: n=0 gave %v", typ, k.Name, got)
			}
		}
	}
}

// TestAsmKernelsNoOverread puts the rows at the very end of their backing
// arrays: a kernel reading past len would pick up the poison that follows in
// the full slice, or fault at a page end.
func TestAsmKernelsNoOverread(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range asmTypes {
		for _, nb := range []int{1, 2, 3, 5} {
			n := nb * typ.BlockElems()
			w := asmRow(r, typ, nb, fillRandom)
			x := asmRow(r, typ.VecDotType(), nb, fillRandom)
			want, mag := asmRef(typ, n, w, x)
			wp := append(append([]byte(nil), w...), make([]byte, 64)...)
			xp := append(append([]byte(nil), x...), make([]byte, 64)...)
			for i := len(w); i < len(wp); i++ {
				wp[i] = 0x77
			}
			for i := len(x); i < len(xp); i++ {
				xp[i] = 0x77
			}
			for _, k := range Kernels(typ) {
				if got := k.Dot(n, wp, xp); !asmCheck(got, want, mag) {
					t.Errorf("%v/%s n=%d: got %v, want %v", typ, k.Name, n, got, want)
				}
			}
		}
	}
}

// BenchmarkKernel measures each kernel on a 4096-element row, which stays in
// L1, and on a 16 MB matrix of such rows, which streams from memory as a
// matrix-vector product in decode does. Bytes are weight bytes.
func BenchmarkKernel(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 4096
	for _, typ := range asmTypes {
		nb := n / typ.BlockElems()
		rowBytes := nb * typ.BlockBytes()
		rows := (16 << 20) / rowBytes
		mat := make([]byte, rows*rowBytes)
		for i := 0; i < rows; i += 64 {
			copy(mat[i*rowBytes:], asmRow(r, typ, nb, fillRandom))
		}
		w := mat[:rowBytes]
		x := asmRow(r, typ.VecDotType(), nb, fillRandom)
		for _, k := range Kernels(typ) {
			b.Run(fmt.Sprintf("%v/%s/row4096", typ, k.Name), func(b *testing.B) {
				b.SetBytes(int64(rowBytes))
				var s float32
				for b.Loop() {
					s += k.Dot(n, w, x)
				}
				asmSink = s
			})
			b.Run(fmt.Sprintf("%v/%s/mat16M", typ, k.Name), func(b *testing.B) {
				b.SetBytes(int64(len(mat)))
				var s float32
				for b.Loop() {
					for i := 0; i < rows; i++ {
						s += k.Dot(n, mat[i*rowBytes:(i+1)*rowBytes], x)
					}
				}
				asmSink = s
			})
		}
	}
}

var asmSink float32

// On Zen 4 (cpu.Model.Split512) IQ2_XXS and IQ2_S take the AVX2 dot
// products, which beat the AVX-512 kernels' gathers there (tilePrefs);
// every dot product stays a tile that LLM_KERNELS can name.
func TestTileChoiceZen4Lattice(t *testing.T) {
	for _, typ := range []Type{IQ2_XXS, IQ2_S} {
		names := []string{}
		for _, k := range Tiles(typ) {
			names = append(names, k.Name)
		}
		for _, k := range Kernels(typ)[1:] {
			if !slices.Contains(names, "dot-"+k.Name) {
				t.Errorf("%v: tiles %v lack dot-%s", typ, names, k.Name)
			}
		}
		_, named := kernelEnv[typ]
		k, _ := TileChoice(typ)
		if cpu.CPU().Split512() && cpu.Has(cpu.AVX2) && !named && k.Name != "dot-avx2" {
			t.Errorf("%v: TileChoice %s on %v, want dot-avx2", typ, k.Name, cpu.CPU())
		}
	}
}
