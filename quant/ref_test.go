package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// This file holds the slow references the tests compare against. Each one
// decodes a single element straight from the layout description, in
// float64, with no shared code from the package except FP16ToFP32 (tested
// on its own against the IEEE definition).

// refElemOf holds the references of one type that have a function of
// their own (taking a block and the element's index in it).
var refElemOf = map[Type]func(blk []byte, j int) (v, mag float64){
	Q2_K:    refElemQ2_K,
	Q3_K:    refElemQ3_K,
	IQ4_NL:  refElemIQ4_NL,
	MXFP4:   refElemMXFP4,
	IQ4_XS:  refElemIQ4_XS,
	IQ3_S:   refElemIQ3_S,
	IQ3_XXS: refElemIQ3_XXS,
	TQ1_0:   refElemTQ1_0,
	TQ2_0:   refElemTQ2_0,
}

// refElem returns element i of a row of type t stored in b, and a
// magnitude: the sum of the absolute values of the terms that make it up,
// which bounds the rounding error of any float32 evaluation of it.
func refElem(t Type, b []byte, i int) (v, mag float64) {
	bb, be := t.BlockBytes(), t.BlockElems()
	blk := b[(i/be)*bb : (i/be+1)*bb]
	j := i % be
	h16 := func(off int) float64 { return float64(FP16ToFP32(binary.LittleEndian.Uint16(blk[off:]))) }
	nib := func(qs []byte, j int) int { // Q4_0 layout: low nibbles first
		if j < 16 {
			return int(qs[j] & 15)
		}
		return int(qs[j-16] >> 4)
	}
	if ref, ok := refElemOf[t]; ok {
		return ref(blk, j)
	}
	switch t {
	case F32:
		v = float64(math.Float32frombits(binary.LittleEndian.Uint32(blk)))
		return v, math.Abs(v)
	case F16:
		v = h16(0)
		return v, math.Abs(v)
	case BF16:
		v = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(blk)) << 16))
		return v, math.Abs(v)
	case Q4_0:
		v = h16(0) * float64(nib(blk[2:], j)-8)
		return v, math.Abs(v)
	case Q4_1:
		a, m := h16(0)*float64(nib(blk[4:], j)), h16(2)
		return a + m, math.Abs(a) + math.Abs(m)
	case Q5_0:
		qh := binary.LittleEndian.Uint32(blk[2:])
		q := nib(blk[6:], j) + int(qh>>j&1)*16
		v = h16(0) * float64(q-16)
		return v, math.Abs(v)
	case Q5_1:
		qh := binary.LittleEndian.Uint32(blk[4:])
		q := nib(blk[8:], j) + int(qh>>j&1)*16
		a, m := h16(0)*float64(q), h16(2)
		return a + m, math.Abs(a) + math.Abs(m)
	case Q8_0:
		v = h16(0) * float64(int8(blk[2+j]))
		return v, math.Abs(v)
	case Q8_1:
		v = h16(0) * float64(int8(blk[4+j]))
		return v, math.Abs(v)
	case Q8_K:
		v = float64(math.Float32frombits(binary.LittleEndian.Uint32(blk))) * float64(int8(blk[4+j]))
		return v, math.Abs(v)
	case Q4_K, Q5_K:
		sub := j / 32
		s := blk[4:16]
		var sc, m int
		if sub < 4 {
			sc, m = int(s[sub]&63), int(s[sub+4]&63)
		} else {
			sc = int(s[sub+4]&15) | int(s[sub-4]>>6)<<4
			m = int(s[sub+4]>>4) | int(s[sub]>>6)<<4
		}
		group, r := j/64, j%64
		qs := blk[16:]
		if t == Q5_K {
			qs = blk[48:]
		}
		by := qs[32*group+r%32]
		q := int(by & 15)
		if r >= 32 {
			q = int(by >> 4)
		}
		if t == Q5_K {
			q += int(blk[16+r%32]>>(2*group+r/32)&1) * 16
		}
		a := h16(0) * float64(sc) * float64(q)
		c := h16(2) * float64(m)
		return a - c, math.Abs(a) + math.Abs(c)
	case Q6_K:
		half, r := j/128, j%128
		k, l := r/32, r%32
		by := blk[64*half+l+32*(k&1)]
		q := int(by & 15)
		if k >= 2 {
			q = int(by >> 4)
		}
		q |= int(blk[128+32*half+l]>>(2*k)&3) << 4
		v = h16(208) * float64(int8(blk[192+j/16])) * float64(q-32)
		return v, math.Abs(v)
	case IQ2_XXS, IQ2_XS, IQ2_S:
		return refElemIQ2(t, blk, j)
	case IQ1_S, IQ1_M:
		return refElemIQ1(t, blk, j)
	}
	panic("refElem: no reference for " + t.String())
}

// refDot is the dot product a ggml vec_dot computes, in float64: the sum of
// products of the decoded elements, except that the Q4_1/Q5_1 min term uses
// the s stored in the Q8_1 block, as the kernels do. It also returns the
// magnitude that bounds the rounding error of a float32 evaluation.
func refDot(t Type, n int, w, x []byte) (dot, mag float64) {
	vt := t.VecDotType()
	for i := 0; i < n; i++ {
		wv, wm := refElem(t, w, i)
		xv, xm := refElem(vt, x, i)
		if t == Q4_1 || t == Q5_1 {
			// Split w = a + m: a·x uses the quants, m·Σx uses s.
			blk := w[(i/QK)*t.BlockBytes():]
			m := float64(FP16ToFP32(binary.LittleEndian.Uint16(blk[2:])))
			wv -= m
			if i%QK == 0 {
				s := float64(FP16ToFP32(binary.LittleEndian.Uint16(x[(i/QK)*q8_1Bytes+2:])))
				dot += m * s
				mag += math.Abs(m * s)
			}
		}
		dot += wv * xv
		mag += wm * xm
	}
	return dot, mag
}

// dotTolerance bounds the difference between a float32 kernel and refDot:
// a few roundings per block plus the float32 sum over blocks.
func dotTolerance(t Type, n int, mag float64) float64 {
	nb := n / t.BlockElems()
	return float64(nb+16) * 0x1p-22 * mag
}

// randF16 returns a random half for a scale field: mostly moderate normal
// values of either sign, sometimes subnormal, sometimes zero.
func randF16(r *rand.Rand) uint16 {
	switch r.IntN(16) {
	case 0:
		return 0
	case 1:
		return uint16(r.IntN(0x3ff)+1) | uint16(r.IntN(2))<<15 // subnormal
	}
	f := float32(math.Exp2(r.Float64()*12-10)) * float32(1-2*r.IntN(2))
	return FP32ToFP16(f)
}

// randInt8 returns an int8 in [-127, 127]: the range QuantizeRow produces and
// ggml's SIMD kernels assume (they negate activation bytes, and -(-128)
// overflows).
func randInt8(r *rand.Rand) byte { return byte(int8(r.IntN(255) - 127)) }

// blockKind selects edge cases for randBlocks.
type blockKind int

const (
	kindRandom   blockKind = iota
	kindZero               // every byte zero
	kindMaxCodes           // every quant at its largest code, scales large
	kindMinCodes           // every quant at its smallest code
	kindNegScale           // negative fp16 scales
	kindMixed              // random, zero and extreme blocks interleaved
)

// randBlocks returns nb random blocks of type t; for the Q8 activation types
// the derived fields (Q8_1's s, Q8_K's bsums) are consistent with the quants.
func randBlocks(t Type, nb int, r *rand.Rand, kind blockKind) []byte {
	bb := t.BlockBytes()
	out := make([]byte, nb*bb)
	for i := 0; i < nb; i++ {
		k := kind
		if kind == kindMixed {
			k = blockKind(r.IntN(int(kindMixed)))
		}
		fillBlock(t, out[i*bb:(i+1)*bb], r, k)
	}
	return out
}

func fillBlock(t Type, b []byte, r *rand.Rand, kind blockKind) {
	if kind == kindZero {
		clear(b)
		return
	}
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	var code byte // byte pattern for every quant
	switch kind {
	case kindMaxCodes:
		code = 0xff
	case kindMinCodes:
		code = 0x00
	}
	setCodes := func(lo, hi int) {
		if kind == kindMaxCodes || kind == kindMinCodes {
			for i := lo; i < hi; i++ {
				b[i] = code
			}
		}
	}
	scale := func(off int) {
		h := randF16(r)
		if kind == kindNegScale {
			h |= 0x8000
		}
		if kind == kindMaxCodes {
			// Large, yet finite through every product, including
			// Q8_1's s = d·Σq.
			h = FP32ToFP16(1000)
			if t == Q8_1 {
				h = FP32ToFP16(10)
			}
		}
		binary.LittleEndian.PutUint16(b[off:], h)
	}
	switch t {
	case F32:
		v := float32(r.NormFloat64())
		if kind == kindNegScale {
			v = -float32(math.Abs(float64(v)))
		}
		binary.LittleEndian.PutUint32(b, math.Float32bits(v))
	case F16:
		v := FP32ToFP16(float32(r.NormFloat64()))
		if r.IntN(8) == 0 {
			v = uint16(r.IntN(0x400)) | uint16(r.IntN(2))<<15 // subnormal
		}
		binary.LittleEndian.PutUint16(b, v)
	case BF16:
		binary.LittleEndian.PutUint16(b, FP32ToBF16(float32(r.NormFloat64())))
	case Q4_0, Q5_0:
		scale(0)
		setCodes(2, len(b))
	case Q4_1, Q5_1:
		scale(0)
		scale(2)
		setCodes(4, len(b))
	case Q8_0, Q8_1:
		off := 2
		if t == Q8_1 {
			off = 4
		}
		scale(0)
		var sum int
		for i := off; i < len(b); i++ {
			switch kind {
			case kindMaxCodes:
				b[i] = 127
			case kindMinCodes:
				b[i] = byte(0x81) // -127
			default:
				b[i] = randInt8(r)
			}
			sum += int(int8(b[i]))
		}
		if t == Q8_1 {
			d := FP16ToFP32(binary.LittleEndian.Uint16(b))
			binary.LittleEndian.PutUint16(b[2:], FP32ToFP16(d*float32(sum)))
		}
	case Q8_K:
		d := float32(math.Exp2(r.Float64()*16-12)) * float32(1-2*r.IntN(2))
		if kind == kindNegScale {
			d = -float32(math.Abs(float64(d)))
		}
		binary.LittleEndian.PutUint32(b, math.Float32bits(d))
		for g := 0; g < QKK/16; g++ {
			var s int
			for i := 4 + 16*g; i < 4+16*g+16; i++ {
				switch kind {
				case kindMaxCodes:
					b[i] = 127
				case kindMinCodes:
					b[i] = byte(0x81)
				default:
					b[i] = randInt8(r)
				}
				s += int(int8(b[i]))
			}
			binary.LittleEndian.PutUint16(b[4+QKK+2*g:], uint16(int16(s)))
		}
	case Q4_K, Q5_K:
		scale(0)
		scale(2)
		if kind == kindMaxCodes {
			for i := 4; i < 16; i++ {
				b[i] = 0xff // every 6-bit scale and min at 63
			}
		}
		setCodes(16, len(b))
	case Q6_K:
		setCodes(0, 192)
		if kind == kindMaxCodes {
			for i := 192; i < 208; i++ {
				b[i] = 127
			}
		}
		scale(208)
	case Q2_K:
		fillQ2_K(b, kind, scale, setCodes)
	case Q3_K:
		fillQ3_K(b, kind, scale, setCodes)
	case IQ4_NL:
		scale(0)
		setCodes(2, len(b))
	case MXFP4:
		fillMXFP4(b, r, kind)
		setCodes(1, len(b))
	case IQ4_XS:
		fillIQ4_XS(b, kind, scale, setCodes)
	case TQ1_0, TQ2_0:
		// Codes in every byte, d last.
		setCodes(0, len(b)-2)
		scale(len(b) - 2)
	case IQ3_S:
		fillIQ3_S(b, kind, scale, setCodes)
	case IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S:
		// d first, then codes, scales and signs in any bytes.
		scale(0)
		setCodes(2, len(b))
	case IQ1_M:
		setCodes(0, len(b))
		scale(0) // d lives in the scales' top nibbles: spread it there
		h := binary.LittleEndian.Uint16(b)
		for i := 0; i < 4; i++ {
			b[49+2*i] = b[49+2*i]&0x0f | byte(h>>(4*i))<<4
		}
		if kind != kindMaxCodes && kind != kindMinCodes {
			b[0], b[1] = byte(r.Uint32()), byte(r.Uint32())
		}
	default:
		panic("fillBlock: " + t.String())
	}
}

// supportedTypes is every type with a layout in the package.
var supportedTypes = []Type{F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q4_K, Q5_K, Q6_K, Q8_K,
	Q2_K, Q3_K, IQ4_NL, IQ4_XS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M, MXFP4, TQ1_0, TQ2_0}

// dotTypes is every weight type with a dot kernel.
var dotTypes = []Type{F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K,
	Q2_K, Q3_K, IQ4_NL, IQ4_XS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M, MXFP4, TQ1_0, TQ2_0}

// decodeOnly are the types QuantizeRow cannot encode.
var decodeOnly = []Type{IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M}

// unaligned returns a copy of b starting off bytes into a larger buffer, so
// kernels see data at every alignment.
func unaligned(b []byte, off int) []byte {
	buf := make([]byte, len(b)+off+8)
	copy(buf[off:], b)
	return buf[off : off+len(b) : off+len(b)]
}

// refSigned8 is element e of a group of eight: the grid byte negated where
// the group's sign bit e is set.
func refSigned8(grid uint64, signs uint8, e int) float64 {
	v := float64(grid >> (8 * e) & 0xff)
	if signs>>e&1 != 0 {
		v = -v
	}
	return v
}

// refSigns7 expands seven stored sign bits with the parity bit ggml's
// ksigns_iq2xs adds: the count of minus signs is even.
func refSigns7(s uint32) uint8 {
	s &= 127
	n := 0
	for i := 0; i < 7; i++ {
		n += int(s >> i & 1)
	}
	return uint8(s) | uint8(n%2)<<7
}

// refElemIQ2 decodes element j of an IQ2_XXS, IQ2_XS or IQ2_S block.
func refElemIQ2(t Type, blk []byte, j int) (v, mag float64) {
	d := float64(FP16ToFP32(binary.LittleEndian.Uint16(blk)))
	ib, g, e := j/32, j%32/8, j%8
	var s int
	var grid uint64
	var signs uint8
	switch t {
	case IQ2_XXS:
		aux := binary.LittleEndian.Uint32(blk[2+8*ib+4:])
		s = int(aux >> 28)
		grid = iq2xxsGrid[blk[2+8*ib+g]]
		signs = refSigns7(aux >> (7 * g))
	case IQ2_XS:
		q := binary.LittleEndian.Uint16(blk[2+8*ib+2*g:])
		s = int(blk[66+ib]>>(4*(g/2))) & 15
		grid = iq2xsGrid[q&511]
		signs = refSigns7(uint32(q >> 9))
	case IQ2_S:
		s = int(blk[74+ib]>>(4*(g/2))) & 15
		grid = iq2sGrid[int(blk[2+4*ib+g])+256*int(blk[66+ib]>>(2*g)&3)]
		signs = blk[34+4*ib+g]
	}
	v = d * (0.5 + float64(s)) / 4 * refSigned8(grid, signs, e)
	return v, math.Abs(v)
}

// refElemIQ3_XXS decodes element j of an IQ3_XXS block.
func refElemIQ3_XXS(blk []byte, j int) (v, mag float64) {
	d := float64(FP16ToFP32(binary.LittleEndian.Uint16(blk)))
	ib, r := j/32, j%32
	aux := binary.LittleEndian.Uint32(blk[66+4*ib:])
	g := float64(iq3xxsGrid[blk[2+8*ib+r/4]] >> (8 * (r % 4)) & 0xff)
	if refSigns7(aux>>(7*(r/8)))>>(r%8)&1 != 0 {
		g = -g
	}
	v = d * (0.5 + float64(aux>>28)) / 2 * g
	return v, math.Abs(v)
}

// refElemIQ1 decodes element j of an IQ1_S or IQ1_M block.
func refElemIQ1(t Type, blk []byte, j int) (v, mag float64) {
	ib, g, e := j/32, j%32/8, j%8
	var d float64
	var s, idx int
	var neg bool
	switch t {
	case IQ1_S:
		d = float64(FP16ToFP32(binary.LittleEndian.Uint16(blk)))
		qh := int(binary.LittleEndian.Uint16(blk[34+2*ib:]))
		s, neg = qh>>12&7, qh&0x8000 != 0
		idx = int(blk[2+4*ib+g]) + 256*(qh>>(3*g)&7)
	case IQ1_M:
		var h uint16
		for i := 0; i < 4; i++ {
			h |= uint16(blk[49+2*i]>>4) << (4 * i)
		}
		d = float64(FP16ToFP32(h))
		sc := int(binary.LittleEndian.Uint16(blk[48+2*(ib/2):]))
		s = sc >> (6*(ib%2) + 3*(g/2)) & 7
		q := int(blk[32+2*ib+g/2]) >> (4 * (g % 2))
		idx, neg = int(blk[4*ib+g])+256*(q&7), q&8 != 0
	}
	delta := 0.125
	if neg {
		delta = -delta
	}
	v = d * float64(2*s+1) * (float64(int8(iq1sGrid[idx]>>(8*e))) + delta)
	return v, math.Abs(v)
}
