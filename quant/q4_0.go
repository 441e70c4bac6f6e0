package quant

import "encoding/binary"

// Q4_0 block: fp16 scale d, then 16 bytes of 4-bit quants. Byte j holds
// element j in its low nibble and element j+16 in its high nibble (the
// order Q4_1, IQ4_NL, IQ4_XS and the low bits of Q5_0 and Q5_1 share);
// x = d·(q-8).
const q4_0Bytes = 2 + QK/2

func dequantQ4_0(dst []float32, src []byte) {
	for y, b := range blocks[[QK]float32, [q4_0Bytes]byte](dst, src) {
		d := f16At(b[0:])
		for j, q := range (*[QK / 2]byte)(b[2:]) {
			y[j] = float32(int32(q&0xf)-8) * d
			y[j+QK/2] = float32(int32(q>>4)-8) * d
		}
	}
}

// quantQ4_0 follows quantize_row_q4_0_ref: the scale maps the element of
// largest magnitude to -8, so the opposite extreme is clipped to 7.
func quantQ4_0(dst []byte, src []float32) { quantSmall(dst, src, q4_0Bytes, false, 4) }

// quantSmall quantizes a row of the 32-element 4- and 5-bit formats
// (blocks of bs bytes): their levels from quantCentered (Q4_0, Q5_0) or,
// withMin, from quantMin (Q4_1, Q5_1), then the fifth bits of 5-bit ones
// (packQ5) and the low nibbles, after the head the levels' function wrote.
func quantSmall(dst []byte, src []float32, bs int, withMin bool, bits uint) {
	var l [QK]uint8
	for i := range min(len(src)/QK, len(dst)/bs) {
		b, x := dst[i*bs:(i+1)*bs], (*[QK]float32)(src[i*QK:])
		qs := b[2:]
		if withMin {
			quantMin(b, x, 1<<bits-1, &l)
			qs = b[4:]
		} else {
			quantCentered(b, x, 1<<(bits-1), &l)
		}
		if bits == 5 {
			binary.LittleEndian.PutUint32(qs, packQ5((*[QK / 2]byte)(qs[4:]), &l))
		} else {
			packNibbles(qs, l[:])
		}
	}
}

// quantCentered is the scale and levels of quantize_row_q4_0_ref (nmax
// 8) and quantize_row_q5_0_ref (nmax 16): d maps the element of largest
// magnitude to -nmax and goes to the block's head b[0:2] (fp16), and
// element x gets level x/d + nmax in l, rounded from x/d + nmax + 0.5 by
// truncation and clamped to [0, 2·nmax-1], so the opposite extreme is
// clipped to nmax-1.
func quantCentered(b []byte, x *[QK]float32, nmax int32, l *[QK]uint8) {
	max, _ := signedAbsMax(x[:])
	d := max / -float32(nmax)
	id := invScale(d)
	for j, v := range x {
		l[j] = truncClamp(float32(v*id)+(float32(nmax)+0.5), 2*nmax-1)
	}
	put16(b[0:], FP32ToFP16(d))
}

// signedAbsMax returns the element of largest magnitude with its sign, the
// first one on ties, as ggml's reference quantizers pick it, and that
// magnitude.
func signedAbsMax(x []float32) (max, amax float32) {
	for _, v := range x {
		a := v
		if a < 0 {
			a = -a
		}
		if amax < a {
			amax = a
			max = v
		}
	}
	return max, amax
}

// invScale is 1/d, the factor the reference quantizers scale elements by
// before rounding, or 0 for d = 0, which sends every element of the block
// to the code for zero.
func invScale(d float32) float32 {
	if d == 0 {
		return 0
	}
	return 1 / d
}

// truncClamp converts f to an integer by truncation, as C's (int8_t) cast
// does for the reference quantizers, and clamps it to [0, hi]. The lower
// clamp only matters for NaN or infinite input, where C is undefined.
func truncClamp(f float32, hi int32) byte {
	if !(f >= 0) {
		return 0
	}
	if f >= float32(hi) {
		return byte(hi)
	}
	return byte(int32(f))
}

// dotQ4_0 is ggml_vec_dot_q4_0_q8_0: Σ_blocks d_w·d_x·Σ(q_w-8)·q_x.
func dotQ4_0(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[q4_0Bytes]byte, [q8_0Bytes]byte](n/QK, w, x) {
		isum := nibbleDot((*[QK / 2]byte)(a[2:]), (*[QK]byte)(b[2:]), 8)
		sum += (f16At(a[0:]) * f16At(b[0:])) * float32(isum)
	}
	return sum
}

// nibbleDot is Σ(q_j-off)·y_j over the 4-bit quants q of a block (Q4_0
// order) and the Q8 quants y: the integer sum of dotQ4_0 (off 8) and
// dotQ4_1 (off 0). It inlines, and with it the constant off.
func nibbleDot(qs *[QK / 2]byte, y *[QK]byte, off int32) int32 {
	var s0, s1 int32
	for j, q := range qs {
		s0 += (int32(q&0xf) - off) * int32(int8(y[j]))
		s1 += (int32(q>>4) - off) * int32(int8(y[j+QK/2]))
	}
	return s0 + s1
}
