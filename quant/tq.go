package quant

import "math"

// The ternary types of BitNet b1.58 and TriLM models: every element is
// d·t with t in {-1, 0, 1} and one fp16 d per 256 elements, stored as a
// code c = t+1 in {0, 1, 2}.
//
// TQ2_0, 66 bytes: qs[64] with c in two bits, in the Q2_K order (element
// 128h + 32j + l is bits 2j..2j+1 of qs[32h+l]), then d at 64. A code of 3,
// which no encoder writes, decodes to 2·d, as in ggml.
//
// TQ1_0, 54 bytes: 240 elements five to a byte in qs[48], 16 four to a
// byte in qh[4], then d at 52. A byte holds its codes as the base-3 number
// c0c1c2c3c4 (c0 the most significant digit) scaled to a fraction of 256,
// q = ⌈(Σ c_n·3^(4-n))·256/243⌉, so that c_n is the top two bits (of nine)
// of 3·(q·3^n mod 256): multiply by 3^n, keep the low byte, multiply by 3
// and shift right by 8. Byte m of qs[0:32] holds elements m+32n, byte m of
// qs[32:48] elements 160+m+16n, byte m of qh elements 240+m+4n for n < 4
// (its fifth digit is 0).
const (
	tq1_0Bytes = 48 + 4 + 2
	tq2_0Bytes = QKK/4 + 2
)

// tq1Pow3 are the multipliers that bring digit n of a TQ1_0 byte to the top.
var tq1Pow3 = [5]uint8{1, 3, 9, 27, 81}

// tq1Code is digit n of the TQ1_0 byte q, given p = 3^n.
func tq1Code(q, p uint8) int32 { return int32(uint16(q*p) * 3 >> 8) }

// tq1Runs are TQ1_0's three runs of bytes: bytes [at, at+width) hold
// elements first+m+width·n for digit n < digits of byte at+m.
var tq1Runs = [3]struct{ at, width, first, digits int }{
	{0, 32, 0, 5},
	{32, 16, 160, 5},
	{48, 4, 240, 4},
}

func dequantTQ1_0(dst []float32, src []byte) {
	for y, b := range blocks[[QKK]float32, [tq1_0Bytes]byte](dst, src) {
		d := f16At(b[52:])
		for _, r := range tq1Runs {
			for n, p := range tq1Pow3[:r.digits] {
				yy := y[r.first+r.width*n : r.first+r.width*(n+1)]
				for m, q := range b[r.at : r.at+r.width] {
					yy[m] = float32(tq1Code(q, p)-1) * d
				}
			}
		}
	}
}

func dequantTQ2_0(dst []float32, src []byte) {
	for y, b := range blocks[[QKK]float32, [tq2_0Bytes]byte](dst, src) {
		d := f16At(b[64:])
		for i := range y {
			h, j, l := i/128, i%128/32, i%32
			y[i] = float32(int32(b[32*h+l]>>(2*j)&3)-1) * d
		}
	}
}

// tqScale returns d = max |x|, ggml's MAX(amax, |x|) kept literally (a
// NaN drops what came before it), and 1/d (0 for d = 0).
func tqScale(x *[QKK]float32) (d, id float32) {
	for _, v := range x {
		if a := abs32(v); !(d > a) {
			d = a
		}
	}
	if d != 0 {
		id = 1 / d
	}
	return d, id
}

// tqCode is lroundf(v·id)+1 as quantize_row_tq*_0_ref computes it: ties
// away from zero; a NaN or infinite product (an infinite input, or a d so
// small that 1/d overflows) becomes code 1, as x86-64's lroundf (the
// "integer indefinite" 2^63, whose low 32 bits are 0) gives it.
func tqCode(v, id float32) int32 {
	p := float64(float32(v * id))
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return 1
	}
	return int32(math.Round(p)) + 1
}

// quantTQ1_0 follows quantize_row_tq1_0_ref: d = max |x|, codes
// lroundf(x/d)+1, packed in base 3 and scaled to the byte's range with a
// ceiling division.
func quantTQ1_0(dst []byte, src []float32) {
	for x, b := range blocks[[QKK]float32, [tq1_0Bytes]byte](src, dst) {
		d, id := tqScale(x)
		for _, r := range tq1Runs {
			for m := 0; m < r.width; m++ {
				var q uint8
				for n := 0; n < 5; n++ {
					q *= 3
					if n < r.digits {
						q += uint8(tqCode(x[r.first+m+r.width*n], id))
					}
				}
				b[r.at+m] = uint8((uint16(q)*256 + 242) / 243)
			}
		}
		put16(b[52:], FP32ToFP16(d))
	}
}

// quantTQ2_0 follows quantize_row_tq2_0_ref: d = max |x|, codes
// lroundf(x/d)+1 in two bits each.
func quantTQ2_0(dst []byte, src []float32) {
	var l [QKK]uint8
	for x, b := range blocks[[QKK]float32, [tq2_0Bytes]byte](src, dst) {
		d, id := tqScale(x)
		for i, v := range x {
			l[i] = uint8(tqCode(v, id))
		}
		packQ2Bits((*[64]byte)(b[0:]), &l)
		put16(b[64:], FP32ToFP16(d))
	}
}

// tq1Codes8 returns digit n of the eight TQ1_0 bytes in x, given p =
// 3^n, a code a byte: tq1Code in 16-bit lanes, even bytes and odd apart so
// that no product (at most 255·81, then 255·3) reaches the next lane.
func tq1Codes8(x, p uint64) uint64 {
	const m8, m2 = 0x00ff00ff00ff00ff, 0x0003000300030003
	even := (x & m8 * p & m8 * 3 >> 8) & m2
	odd := (x >> 8 & m8 * p & m8 * 3 >> 8) & m2
	return even | odd<<8
}

// dotTQ1_0 is ggml_vec_dot_tq1_0_q8_K: per block the exact integer
// Σ c·y − Σ y, the second from the Q8_K block sums, then
// sum += float32(isum)·(d·d_y). The codes of eight bytes at a time come
// from tq1Codes8 (1.4× the speed of a byte at a time), qh's byte by byte.
func dotTQ1_0(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[tq1_0Bytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		var isum int32
		for _, r := range tq1Runs {
			qs := a[r.at : r.at+r.width]
			for k, p := range tq1Pow3[:r.digits] {
				y := b[4+r.first+r.width*k:][:len(qs)]
				m := 0
				for ; m+8 <= len(qs); m += 8 {
					c, yk := tq1Codes8(le64(qs[m:]), uint64(p)), le64(y[m:])
					isum += dot4(c, yk) + dot4(c>>32, yk>>32)
				}
				for ; m < len(qs); m++ {
					isum += tq1Code(qs[m], p) * int32(int8(y[m]))
				}
			}
		}
		isum -= tqBsums((*[32]byte)(b[4+QKK:]))
		sum += float32(float32(isum) * (f16At(a[52:]) * f32At(b[0:])))
	}
	return sum
}

// dotTQ2_0 is ggml_vec_dot_tq2_0_q8_K, in the order of dotTQ1_0; the codes
// are taken as Q2_K's quants are (see dotQ2_K).
func dotTQ2_0(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[tq2_0Bytes]byte, [q8_KBytes]byte](n/QKK, w, x) {
		var isum int32
		for h := 0; h < 2; h++ {
			q := le64x4(a[32*h:])
			for j := 0; j < 4; j++ {
				y := (*[32]byte)(b[4+128*h+32*j:])
				for k := 0; k < 4; k++ {
					v := q[k] >> (2 * j) & lanes03
					yk := le64(y[8*k:])
					isum += dot4(v, yk) + dot4(v>>32, yk>>32)
				}
			}
		}
		isum -= tqBsums((*[32]byte)(b[4+QKK:]))
		sum += float32(float32(isum) * (f16At(a[64:]) * f32At(b[0:])))
	}
	return sum
}

// tqBsums is Σ y over a Q8_K block, from its sixteen block sums.
func tqBsums(bs *[32]byte) int32 {
	var s int32
	for g := 0; g < 16; g++ {
		s += bsum(bs, g)
	}
	return s
}
