package quant

// IQ3_S super-block of 256 elements, 110 bytes:
//
//	[0:2)     d (fp16)
//	[2:66)    qs: the low eight bits of 64 lattice indexes, one per group
//	          of four elements
//	[66:74)   qh: the ninth index bit; bit k of qh[b] belongs to index k of
//	          sub-block b
//	[74:106)  signs: one bit per element, 1 = negative; byte 4b+l covers
//	          elements 8l..8l+7 of sub-block b, bit j element 8l+j
//	[106:110) scales: 4-bit codes, sub-block b in nibble b%2 (low first)
//	          of byte b/2
//
// Sub-block b is elements 32b..32b+31. Its group k (elements 32b+4k..+3)
// has lattice index qs[8b+k] | ((qh[b]>>k)&1)<<8, and element 32b+4k+e is
//
//	d·(1 + 2·scale_b)·byte e of iq3sGrid[index]·(-1 if its sign bit is set)
//
// Any bytes form a valid block: every 9-bit index is on the lattice.
const iq3_SBytes = 2 + QKK/4 + QKK/32 + QKK/8 + QKK/64

// iq3sSignMask expands a sign byte into eight byte masks: byte j of entry
// s is 0xff when bit j of s is set.
var iq3sSignMask = func() (t [256]uint64) {
	for s := range t {
		for j := 0; j < 8; j++ {
			if s>>j&1 != 0 {
				t[s] |= 0xff << (8 * j)
			}
		}
	}
	return t
}()

func dequantIQ3_S(dst []float32, src []byte) {
	for len(dst) >= QKK && len(src) >= iq3_SBytes {
		b := (*[iq3_SBytes]byte)(src)
		y := (*[QKK]float32)(dst)
		d := f16At(b[0:])
		for ib := 0; ib < 8; ib++ {
			db := d * float32(1+2*int32(b[106+ib/2]>>(4*uint(ib%2))&0xf))
			qh := b[66+ib]
			for k := 0; k < 8; k++ {
				g := iq3sGrid[int(b[2+8*ib+k])|int(qh>>uint(k)&1)<<8]
				s := b[74+4*ib+k/2] >> (4 * uint(k%2))
				for e := 0; e < 4; e++ {
					v := db * float32(g>>(8*uint(e))&0xff)
					if s>>uint(e)&1 != 0 {
						v = -v
					}
					y[32*ib+4*k+e] = v
				}
			}
		}
		src = src[iq3_SBytes:]
		dst = dst[QKK:]
	}
}

// dotIQ3_S is ggml_vec_dot_iq3_s_q8_K. Per super-block:
//
//	isum = Σ_b (1+2·scale_b) · Σ_{i in b} ±grid_i·y_i   (exact, int32)
//	sum += (d·d_x)·isum
//
// Loop order, to mirror in SIMD: for each sub-block b and each eight
// elements l (two lattice points, indexes 2l and 2l+1), the two grid
// entries form eight unsigned bytes, the sign byte signs[4b+l] negates
// some of them, and the eight products with the Q8_K bytes 32b+8l.. are
// summed. (x86 gathers the 8 grid entries of 32 elements into one
// register with scalar loads, and applies the signs to the activations
// with VPSIGNB, which is exact because Q8_K never holds -128.) Here the
// signs are applied to the grid bytes as (g ^ m) + (m & 1) per byte, which
// cannot carry between bytes because no grid byte is 0.
func dotIQ3_S(n int, w, x []byte) float32 {
	nb := n / QKK
	w = w[:nb*iq3_SBytes]
	x = x[:nb*q8_KBytes]
	var sum float32
	for len(w) >= iq3_SBytes && len(x) >= q8_KBytes {
		a := (*[iq3_SBytes]byte)(w)
		b := (*[q8_KBytes]byte)(x)
		qs := (*[64]byte)(a[2:])
		var isum int32
		for ib := 0; ib < 8; ib++ {
			ls := 1 + 2*int32(a[106+ib/2]>>(4*uint(ib%2))&0xf)
			qh := uint32(a[66+ib])
			var s int32
			for l := 0; l < 4; l++ {
				i0 := uint32(qs[8*ib+2*l]) | (qh>>uint(2*l)&1)<<8
				i1 := uint32(qs[8*ib+2*l+1]) | (qh>>uint(2*l+1)&1)<<8
				g := uint64(iq3sGrid[i0&511]) | uint64(iq3sGrid[i1&511])<<32
				m := iq3sSignMask[a[74+4*ib+l]]
				v := (g ^ m) + (m & 0x0101010101010101)
				y := le64(b[4+32*ib+8*l:])
				s += dot4(v, y) + dot4(v>>32, y>>32)
			}
			isum += ls * s
		}
		sum += f16At(a[0:]) * f32At(b[0:]) * float32(isum)
		w = w[iq3_SBytes:]
		x = x[q8_KBytes:]
	}
	return sum
}
