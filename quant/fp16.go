package quant

import "math"

// f16Table maps every IEEE half-precision bit pattern to its float32 value.
// The conversion is exact, so a table read is both the fastest and the
// simplest way to do it in Go; it is filled once at init and never written
// again.
var f16Table [1 << 16]float32

func init() {
	for h := range f16Table {
		f16Table[h] = math.Float32frombits(fp16Bits(uint16(h)))
	}
}

// fp16Bits widens a half to the bit pattern of the equal float32, as the
// F16C instruction vcvtph2ps does: subnormals become normal float32s and a
// signalling NaN becomes quiet with its payload kept.
func fp16Bits(h uint16) uint32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f && mant == 0:
		return sign | 0x7f800000
	case exp == 0x1f:
		return sign | 0x7fc00000 | mant<<13
	case exp == 0 && mant == 0:
		return sign
	case exp == 0:
		// A subnormal half is mant·2^-24; shift the mantissa up until its
		// leading one becomes the implicit bit of a normal float32.
		e := uint32(127 - 14)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return sign | e<<23 | (mant&0x3ff)<<13
	}
	return sign | (exp+127-15)<<23 | mant<<13
}

// FP16ToFP32 returns the value of the IEEE 754 half-precision number with
// bits h. Every half is exactly representable as a float32; NaNs come back
// quiet with their payload.
func FP16ToFP32(h uint16) float32 { return f16Table[h] }

// FP32ToFP16 rounds f to the nearest IEEE 754 half-precision number, ties to
// even, and returns its bits. The result is bit-identical to the F16C
// instruction vcvtps2ph with rounding mode 0, which is what llama.cpp uses on
// x86: values too large become ±Inf, values too small become signed zero or a
// subnormal half, and a NaN stays a NaN with the quiet bit set and the top of
// its payload kept.
func FP32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 | uint16(mant>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // biased half exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half (or zero): the result counts units of 2^-24. A
		// float32 below 2^-25 rounds to zero; this also covers float32
		// subnormals, whose exponent field is 0.
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint32(14 - e) // 14..24
		r := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++ // may carry into the smallest normal, which is the right encoding
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // a carry out of the mantissa bumps the exponent, up to Inf
	}
	return sign | uint16(r)
}

// dequant16 and quant16 convert rows of 16-bit floats (F16, BF16), each
// two little-endian bytes, through the type's conversion.
func dequant16(dst []float32, src []byte, conv func(uint16) float32) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = conv(le16(src[2*i:]))
	}
}

func quant16(dst []byte, src []float32, conv func(float32) uint16) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		put16(dst[2*i:], conv(v))
	}
}

// FP32ToFP16Row converts src to halves in dst, which must hold len(src):
// FP32ToFP16 of every element, with F16C on amd64. It never allocates.
func FP32ToFP16Row(dst []uint16, src []float32) { toHalves(dst, src) }

func toHalvesGo(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = FP32ToFP16(v)
	}
}

func dequantF16(dst []float32, src []byte) { dequant16(dst, src, FP16ToFP32) }
func quantF16(dst []byte, src []float32)   { quant16(dst, src, FP32ToFP16) }

// dotF16 multiplies two rows of halves in float32, like ggml_vec_dot_f16.
func dotF16(n int, w, x []byte) float32 { return dotHalf(n, w, x, &f16Table) }
