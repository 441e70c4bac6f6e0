package quant

// iq4nlValues is ggml's kvalues_iq4nl: the sixteen non-uniform levels a
// 4-bit IQ4_NL or IQ4_XS code stands for, denser near zero. Codes 0..15
// map in increasing order, so the table is sorted, which the quantizer's
// nearest-level search relies on.
var iq4nlValues = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// iq4nlValues32 is iq4nlValues widened once, for the dot kernels.
var iq4nlValues32 = func() (t [16]int32) {
	for i, v := range iq4nlValues {
		t[i] = int32(v)
	}
	return t
}()

// IQ4_NL block of 32 elements, 18 bytes: fp16 d, then 16 bytes of 4-bit
// codes; byte j holds element j in its low nibble and element j+16 in its
// high nibble (the Q4_0 order). Element i is d·iq4nlValues[code_i].
const iq4_NLBytes = 2 + QK/2

func dequantIQ4_NL(dst []float32, src []byte) {
	for y, b := range blocks[[QK]float32, [iq4_NLBytes]byte](dst, src) {
		dequantLUT(y, (*[QK / 2]byte)(b[2:]), f16At(b[0:]), &iq4nlValues)
	}
}

// dequantLUT expands the 32 codes of a block of 4-bit table codes in the
// Q4_0 order (an IQ4_NL block, an IQ4_XS sub-block, an MXFP4 block) with
// scale d: element j is d·tab[code_j].
func dequantLUT(y *[QK]float32, qs *[QK / 2]byte, d float32, tab *[16]int8) {
	for j, q := range qs {
		y[j] = d * float32(tab[q&0xf])
		y[j+QK/2] = d * float32(tab[q>>4])
	}
}

// quantIQ4_NL follows quantize_iq4_nl as llama-quantize runs it without an
// importance matrix (x² weights, 15 candidate scales; see quantIQ4Blocks).
// ggml's quantize_row_iq4_nl_ref tries no candidates; this package follows
// the file-writing path instead, so its output matches llama-quantize's.
func quantIQ4_NL(dst []byte, src []float32) {
	var scales [1]float32
	var l [QK]uint8
	for x, b := range blocks[[QK]float32, [iq4_NLBytes]byte](src, dst) {
		quantIQ4Blocks(x[:], scales[:], l[:])
		put16(b[0:], FP32ToFP16(scales[0]))
		id := invScale(scales[0])
		for j, v := range x {
			l[j] = bestIndexIQ4(float32(id * v))
		}
		packNibbles(b[2:], l[:])
	}
}

// iq4Tries is the ntry ggml's quantize_iq4_nl and quantize_iq4_xs pass:
// scales for -max/(values[0]+k), k = -7..7, are tried.
const iq4Tries = 7

// quantIQ4Blocks is the per-block half of ggml's quantize_row_iq4_nl_impl
// without quant weights: for each 32-element block of x it picks the scale
// d minimising Σ x²·(x - d·v(code))², starting from max/127 and trying the
// 15 scales that map the element of largest magnitude near -127, and
// stores it in scales. l receives the codes for the first scale only, as
// in ggml; callers recompute them against the scale they store.
func quantIQ4Blocks(x []float32, scales []float32, l []uint8) {
	for ib := range scales {
		xb := x[32*ib : 32*ib+32]
		lb := l[32*ib : 32*ib+32]
		max, amax := signedAbsMax(xb)
		if amax < groupMaxEps {
			scales[ib] = 0
			clear(lb)
			continue
		}
		d := -max / float32(iq4nlValues[0])
		id := 1 / d
		var sumqx, sumq2 float32
		for j, v := range xb {
			c := bestIndexIQ4(float32(id * v))
			lb[j] = c
			q := float32(iq4nlValues[c])
			w := float32(v * v)
			sumqx += float32(float32(w*q) * v)
			sumq2 += float32(float32(w*q) * q)
		}
		d = 0
		if sumq2 > 0 {
			d = sumqx / sumq2
		}
		best := float32(d * sumqx)
		for itry := -iq4Tries; itry <= iq4Tries; itry++ {
			id = float32(itry+int(iq4nlValues[0])) / max
			sumqx, sumq2 = 0, 0
			for _, v := range xb {
				q := float32(iq4nlValues[bestIndexIQ4(float32(id*v))])
				w := float32(v * v)
				sumqx += float32(float32(w*q) * v)
				sumq2 += float32(float32(w*q) * q)
			}
			if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
				d = sumqx / sumq2
				best = float32(d * sumqx)
			}
		}
		scales[ib] = d
	}
}

// bestIndexIQ4 is ggml's best_index_int8 over iq4nlValues: the code whose
// level is nearest to x, the higher one on a tie, the end codes beyond the
// table's range.
func bestIndexIQ4(x float32) uint8 {
	v := &iq4nlValues
	if x <= float32(v[0]) {
		return 0
	}
	if x >= float32(v[15]) {
		return 15
	}
	lo, hi := 0, 15
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if x < float32(v[mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if float32(x-float32(v[hi-1])) < float32(float32(v[hi])-x) {
		return uint8(hi - 1)
	}
	return uint8(hi)
}

// packNibbles stores 4-bit codes in the Q4_0 order: for each 32 codes, 16
// bytes with code j in the low nibble and code j+16 in the high one.
func packNibbles(q []byte, l []uint8) {
	for i := 0; i < len(l)/32; i++ {
		for j := 0; j < 16; j++ {
			q[16*i+j] = l[32*i+j] | l[32*i+16+j]<<4
		}
	}
}

// dotIQ4_NL is ggml_vec_dot_iq4_nl_q8_0: per block
// (d_x·d)·Σ iq4nlValues[code_i]·y_i, the sum exact in int32.
//
// Loop order, to mirror in SIMD: each weight block meets one Q8_0 block;
// its 16 code bytes give 32 codes (low nibbles elements 0..15, high
// nibbles 16..31), each looked up in the 16-entry level table (a byte
// shuffle) and multiplied with the matching activation byte.
func dotIQ4_NL(n int, w, x []byte) float32 {
	var sum float32
	for a, b := range dotBlocks[[iq4_NLBytes]byte, [q8_0Bytes]byte](n/QK, w, x) {
		isum := lutSum(&iq4nlValues32, (*[16]byte)(a[2:]), (*[QK]byte)(b[2:]))
		sum += f16At(b[0:]) * f16At(a[0:]) * float32(isum)
	}
	return sum
}

// lutSum is Σ tab[code_i]·y_i over one 32-element block of 4-bit codes q
// (low nibbles elements 0..15, high nibbles 16..31) and Q8 bytes y, exact
// in int32: the inner loop of dotIQ4_NL, dotIQ4_XS (tab the IQ4 levels)
// and dotMXFP4 (the doubled E2M1 values).
func lutSum(tab *[16]int32, q *[16]byte, y *[QK]byte) int32 {
	var s0, s1 int32
	for j := 0; j < 16; j++ {
		s0 += tab[q[j]&0xf] * int32(int8(y[j]))
		s1 += tab[q[j]>>4] * int32(int8(y[j+16]))
	}
	return s0 + s1
}
