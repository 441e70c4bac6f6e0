package quant

// The lattice types' decoders share one walk each: every super-block is 32
// groups of eight elements, and what differs between the types is where a
// group's grid point, signs and scale code sit, which each type's group
// function reads (iq2_xxs.go …). Decoding is not on the hot path (it
// serves embeddings and tests), so the group is read through a function
// value; the dot products read theirs inline.

// dequantSigned returns the decoder of IQ2_XXS, IQ2_XS, IQ2_S (mul 1/4) or
// IQ3_XXS (mul 1/2) blocks of bb bytes: element e of a group is
// d·(0.5 + s)·mul · byte e of its grid point, negated where its sign bit
// is set, rounded as ggml rounds it.
func dequantSigned(bb int, mul float32, group func(b []byte, g int) (grid uint64, signs uint8, s uint32)) func(dst []float32, src []byte) {
	// A plain loop, not blocks: a range-over-func body that calls a
	// function value escapes, and then allocates.
	return func(dst []float32, src []byte) {
		for ; len(src) >= bb && len(dst) >= QKK; src, dst = src[bb:], dst[QKK:] {
			d := f16At(src)
			for g := 0; g < QKK/8; g++ {
				grid, signs, s := group(src[:bb], g)
				decodeSigned8(dst[8*g:], float32(d*(0.5+float32(s)))*mul, grid, signs)
			}
		}
	}
}

// dequantIQ1 returns the decoder of IQ1_S or IQ1_M blocks of bb bytes
// whose super-block scale d reads: element e of a group is
// d·(2s + 1)·(byte e of its grid point ± 1/8).
func dequantIQ1(bb int, d func(b []byte) float32, group func(b []byte, g int) (grid uint64, s uint32, neg bool)) func(dst []float32, src []byte) {
	return func(dst []float32, src []byte) {
		for ; len(src) >= bb && len(dst) >= QKK; src, dst = src[bb:], dst[QKK:] {
			db := d(src[:bb])
			for g := 0; g < QKK/8; g++ {
				grid, s, neg := group(src[:bb], g)
				delta := float32(iq1Delta)
				if neg {
					delta = -iq1Delta
				}
				decodeIQ1(dst[8*g:], db*float32(2*s+1), delta, grid)
			}
		}
	}
}
