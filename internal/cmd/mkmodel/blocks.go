package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// Random blocks are drawn directly in each format rather than by
// quantizing random floats: the reference quantizers would take many
// minutes for an 8B model, and speed tests only need weights of the right
// size and a sane distribution. Codes are uniform; the fp16 block scales
// are positive, finite and vary by ±20% between blocks; their base value
// is the target standard deviation divided by the RMS of the code values
// below, so that the dequantized weights have a standard deviation of
// about 1/sqrt(fan-in).
const (
	// Q8_0: codes -127…127, with -128 mapped to 0 (ggml never emits -128).
	rmsQ8_0 = 73.47 // sqrt(2·Σk², k=1…127, / 256)
	// Q4_0: nibbles 1…15 (values -7…7), with nibble 0 mapped to 8 (value 0)
	// so the weights have zero mean.
	rmsQ4_0 = 4.183 // sqrt(2·Σk², k=1…7, / 16)
	// Q5_0: 5-bit codes minus 16, -15…15, with -16 mapped to 0.
	rmsQ5_0 = 8.803 // sqrt(2·Σk², k=1…15, / 32)
	// Q4_K: nibbles 0…15 times 6-bit sub-block scales 8…23, minus
	// dmin·m with dmin = 5·d and m = round(1.5·scale), which centres each
	// sub-block on zero within 2.5·d.
	rmsQ4_K = 74.55 // sqrt(21.25 · mean(s², s=8…23))
	// Q6_K: 6-bit codes minus 32 times int8 sub-block scales ±2…±9 with a
	// random sign, so the weights have zero mean.
	rmsQ6_K = 110.1 // sqrt(341.5 · mean(s², s=2…9))
	// Q2_K: 2-bit codes times 4-bit group scales 3…10, minus dmin·m with
	// dmin = d and m = 1.5·scale rounded down or up at random, which
	// centres each group on zero.
	rmsQ2_K = 7.714 // sqrt(mean((s·q - m)²)), q=0…3, s=3…10
	// Q3_K: 3-bit codes minus 4 (-4…3) times 6-bit group scales ±2…±9 with
	// a random sign, so the weights have zero mean.
	rmsQ3_K = 13.97 // sqrt(5.5 · mean(s², s=2…9))
	// Q5_K: 5-bit codes times 6-bit sub-block scales 5…20, minus dmin·m
	// with dmin = 5·d and m = 3.1·scale rounded at random (at most 62).
	rmsQ5_K = 123.0 // sqrt(mean((s·q - 5m)²)), q=0…31, s=5…20
	// Q5_1: 5-bit codes plus the minimum m = -15.5·d.
	rmsQ5_1 = 9.233 // sqrt(mean((q-15.5)²)), q=0…31
	// IQ4_NL: the sixteen non-linear levels; the block scale has a random
	// sign, since the levels do not average to zero.
	rmsIQ4_NL = 67.44 // sqrt(mean(v²)) over kvalues_iq4nl
	// IQ4_XS: the levels times 6-bit sub-block scales ±4…±11 with a random
	// sign.
	rmsIQ4_XS = 528.9 // 67.44 · sqrt(mean(s², s=4…11))
	// IQ3_S: lattice magnitudes (odd, 1…15) with random signs times the
	// sub-block factors 1+2·s, s=4…11.
	rmsIQ3_S = 126.4 // sqrt(mean(g²) · mean((1+2s)², s=4…11)), mean(g²) = 57.67 over iq3s_grid
	// MXFP4: the sixteen doubled E2M1 values (0, ±1 … ±12, symmetric)
	// times a power of two, 2^(e−128).
	rmsMXFP4 = 5.852 // sqrt(mean(v²)) over kvalues_mxfp4: sqrt(548/16)
	// TQ1_0: random bytes hold uniform base-3 codes, weights −d, 0, d.
	rmsTQ1_0 = 0.8165 // sqrt(2/3)
	// TQ2_0: 2-bit codes with 3 (which no encoder writes) mapped to 1, so
	// the weights are −d, 0, 0, d.
	rmsTQ2_0 = 0.7071 // sqrt(1/2)
)

// mxfp4Steps is how many exponents an MXFP4 tensor's blocks draw from:
// its scale is a power of two, so the target spread is met on average by
// mixing two neighbouring exponents, in steps of 1/mxfp4Steps.
const mxfp4Steps = 64

// scaleSteps is how many jittered values a block scale takes.
const scaleSteps = 8

// blockParams are the per-tensor constants the block fillers use.
type blockParams struct {
	d    [scaleSteps]uint16 // fp16 block scales
	dmin [scaleSteps]uint16 // fp16 Q4_K minimum scales, 5·d
	f16  *[1 << 16]uint16   // F16: normal quantiles times the target std
	e8m0 [mxfp4Steps]uint8  // MXFP4 block exponents
}

// newBlockParams returns the scales for weights of type t with standard
// deviation std.
func newBlockParams(t quant.Type, std float64) (*blockParams, error) {
	p := &blockParams{}
	var rms float64
	switch t {
	case quant.F16:
		p.f16 = f16Table(std)
		return p, nil
	case quant.Q8_0:
		rms = rmsQ8_0
	case quant.Q4_0:
		rms = rmsQ4_0
	case quant.Q5_0:
		rms = rmsQ5_0
	case quant.Q4_K:
		rms = rmsQ4_K
	case quant.Q6_K:
		rms = rmsQ6_K
	case quant.Q2_K:
		rms = rmsQ2_K
	case quant.Q3_K:
		rms = rmsQ3_K
	case quant.Q5_K:
		rms = rmsQ5_K
	case quant.Q5_1:
		rms = rmsQ5_1
	case quant.IQ4_NL:
		rms = rmsIQ4_NL
	case quant.IQ4_XS:
		rms = rmsIQ4_XS
	case quant.IQ3_S:
		rms = rmsIQ3_S
	case quant.IQ3_XXS, quant.IQ2_S, quant.IQ2_XS, quant.IQ2_XXS, quant.IQ1_M, quant.IQ1_S:
		rms = latticeRMS(t)
	case quant.MXFP4:
		return p, mxfp4Exponents(&p.e8m0, std)
	case quant.TQ1_0:
		rms = rmsTQ1_0
	case quant.TQ2_0:
		rms = rmsTQ2_0
	default:
		return nil, fmt.Errorf("no random block generator for type %v", t)
	}
	for k := range scaleSteps {
		d := std / rms * (0.8 + 0.4*float64(k)/(scaleSteps-1))
		p.d[k] = quant.FP32ToFP16(float32(d))
		p.dmin[k] = quant.FP32ToFP16(float32(5 * d))
		for _, h := range []uint16{p.d[k], p.dmin[k]} {
			if f := quant.FP16ToFP32(h); !(f > 0) || math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("standard deviation %g gives the fp16 block scale %g", std, f)
			}
		}
	}
	return p, nil
}

// mxfp4Exponents fills e with MXFP4 block exponents whose weights have a
// mean square of std² on average: e0, with 2^(e0−128)·rmsMXFP4 ≤ std, and
// e0+1 (four times the mean square) in the share that makes up the rest.
func mxfp4Exponents(e *[mxfp4Steps]uint8, std float64) error {
	d := std / rmsMXFP4
	e0 := math.Floor(math.Log2(d)) + 128
	if !(e0 >= 1 && e0 <= 253) {
		return fmt.Errorf("standard deviation %g needs the MXFP4 exponent %g", std, e0)
	}
	v0 := math.Pow(math.Ldexp(rmsMXFP4, int(e0)-128), 2)
	hi := int(math.Round(mxfp4Steps * (std*std - v0) / (3 * v0)))
	for k := range e {
		e[k] = uint8(e0)
		if k < hi {
			e[k]++
		}
	}
	return nil
}

// fillBlocks fills dst, a whole number of blocks of type t, with random
// blocks drawn from r.
func fillBlocks(t quant.Type, dst []byte, r *rand.PCG, p *blockParams) {
	switch t {
	case quant.F16:
		fillF16(dst, r, p)
	case quant.Q8_0:
		fillQ8_0(dst, r, p)
	case quant.Q4_0:
		fillQ4_0(dst, r, p)
	case quant.Q5_0:
		fillQ5_0(dst, r, p)
	case quant.Q4_K:
		fillQ4_K(dst, r, p)
	case quant.Q6_K:
		fillQ6_K(dst, r, p)
	case quant.Q2_K:
		fillQ2_K(dst, r, p)
	case quant.Q3_K:
		fillQ3_K(dst, r, p)
	case quant.Q5_K:
		fillQ5_K(dst, r, p)
	case quant.Q5_1:
		fillQ5_1(dst, r, p)
	case quant.IQ4_NL:
		fillIQ4_NL(dst, r, p)
	case quant.IQ4_XS:
		fillIQ4_XS(dst, r, p)
	case quant.IQ3_S:
		fillIQ3_S(dst, r, p)
	case quant.IQ3_XXS, quant.IQ2_S, quant.IQ2_XS, quant.IQ2_XXS, quant.IQ1_M, quant.IQ1_S:
		fillLattice(t, dst, r, p)
	case quant.MXFP4:
		fillMXFP4(dst, r, p)
	case quant.TQ1_0, quant.TQ2_0:
		fillTQ(t, dst, r, p)
	}
}

var le = binary.LittleEndian

// fillRandom fills dst with random bytes passed through fix.
func fillRandom(dst []byte, r *rand.PCG, fix *[256]byte) {
	for len(dst) >= 8 {
		u := r.Uint64()
		if fix == nil {
			le.PutUint64(dst, u)
		} else {
			for j := range 8 {
				dst[j] = fix[byte(u>>(8*j))]
			}
		}
		dst = dst[8:]
	}
	if len(dst) > 0 {
		u := r.Uint64()
		for j := range dst {
			b := byte(u >> (8 * j))
			if fix != nil {
				b = fix[b]
			}
			dst[j] = b
		}
	}
}

var (
	fixQ8_0  [256]byte // -128 → 0
	fixQ4_0  [256]byte // nibble 0 → 8 in both halves
	fixTQ2_0 [256]byte // 2-bit code 3 → 1 in all four fields
)

func init() {
	for i := range 256 {
		fixQ8_0[i] = byte(i)
		lo, hi := byte(i&15), byte(i>>4)
		if lo == 0 {
			lo = 8
		}
		if hi == 0 {
			hi = 8
		}
		fixQ4_0[i] = lo | hi<<4
	}
	fixQ8_0[0x80] = 0
	for i := range 256 {
		b := byte(i)
		for f := 0; f < 8; f += 2 {
			if b>>f&3 == 3 {
				b ^= 2 << f
			}
		}
		fixTQ2_0[i] = b
	}
}

// fillTQ fills TQ1_0 blocks (52 bytes of base-3 codes, then d) or TQ2_0
// blocks (64 bytes of 2-bit codes, then d).
func fillTQ(t quant.Type, dst []byte, r *rand.PCG, p *blockParams) {
	bs := t.BlockBytes()
	fix := &fixTQ2_0
	if t == quant.TQ1_0 {
		fix = nil
	}
	for ; len(dst) >= bs; dst = dst[bs:] {
		fillRandom(dst[:bs-2], r, fix)
		le.PutUint16(dst[bs-2:], p.d[r.Uint64()%scaleSteps])
	}
}

func fillQ8_0(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 2 + 32
	for ; len(dst) >= bs; dst = dst[bs:] {
		le.PutUint16(dst, p.d[r.Uint64()%scaleSteps])
		fillRandom(dst[2:bs], r, &fixQ8_0)
	}
}

func fillQ4_0(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 2 + 16
	for ; len(dst) >= bs; dst = dst[bs:] {
		le.PutUint16(dst, p.d[r.Uint64()%scaleSteps])
		fillRandom(dst[2:bs], r, &fixQ4_0)
	}
}

func fillQ5_0(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 2 + 4 + 16
	for ; len(dst) >= bs; dst = dst[bs:] {
		le.PutUint16(dst, p.d[r.Uint64()%scaleSteps])
		fillRandom(dst[2:bs], r, nil)
		// Element j's low four bits are nibble j%16 of qs (low nibbles
		// first) and its fifth is bit j of qh. Setting the fifth where the
		// low four are zero turns -16 into 0, so the codes are symmetric.
		qh := le.Uint32(dst[2:])
		qs := dst[6:bs]
		for j := range 16 {
			if qs[j]&15 == 0 {
				qh |= 1 << j
			}
			if qs[j]>>4 == 0 {
				qh |= 1 << (j + 16)
			}
		}
		le.PutUint32(dst[2:], qh)
	}
}

// Q4_K block: d, dmin (fp16), 12 bytes of packed 6-bit scales and mins
// for 8 sub-blocks of 32, 128 bytes of nibbles.
func fillQ4_K(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 4 + 12 + 128
	for ; len(dst) >= bs; dst = dst[bs:] {
		u := r.Uint64()
		k := u % scaleSteps
		le.PutUint16(dst[0:], p.d[k])
		le.PutUint16(dst[2:], p.dmin[k])
		var sc, m [8]byte
		for j := range 8 {
			sc[j] = 8 + byte(u>>(8+4*j))&15
			m[j] = (3*sc[j] + 1) / 2
		}
		packScalesMinsK4((*[12]byte)(dst[4:16]), &sc, &m)
		fillRandom(dst[16:bs], r, nil)
	}
}

// Q6_K block: 128 bytes of low nibbles, 64 of high bit pairs, 16 int8
// scales, d (fp16).
func fillQ6_K(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 128 + 64 + 16 + 2
	for ; len(dst) >= bs; dst = dst[bs:] {
		fillRandom(dst[:192], r, nil)
		u := r.Uint64()
		for j := range 16 {
			n := byte(u >> (4 * j))
			v := int8(2 + n&7)
			if n&8 != 0 {
				v = -v
			}
			dst[192+j] = byte(v)
		}
		le.PutUint16(dst[208:], p.d[r.Uint64()%scaleSteps])
	}
}

func fillF16(dst []byte, r *rand.PCG, p *blockParams) {
	for ; len(dst) >= 8; dst = dst[8:] {
		u := r.Uint64()
		for j := range 4 {
			le.PutUint16(dst[2*j:], p.f16[uint16(u>>(16*j))])
		}
	}
	for ; len(dst) >= 2; dst = dst[2:] {
		le.PutUint16(dst, p.f16[uint16(r.Uint64())])
	}
}

var (
	unitNormalOnce sync.Once
	unitNormal     *[1 << 16]float32
)

// f16Table returns std times the 65536 quantiles of N(0,1) at the midpoints
// of equal-probability bins, as fp16: indexing it with 16 uniform random
// bits draws from a normal distribution.
func f16Table(std float64) *[1 << 16]uint16 {
	unitNormalOnce.Do(func() {
		unitNormal = new([1 << 16]float32)
		for i := range unitNormal {
			p := (float64(i) + 0.5) / (1 << 16)
			unitNormal[i] = float32(math.Sqrt2 * math.Erfinv(2*p-1))
		}
	})
	t := new([1 << 16]uint16)
	for i, x := range unitNormal {
		t[i] = quant.FP32ToFP16(float32(std) * x)
	}
	return t
}

// Q2_K block: 16 bytes of 4-bit scale and min codes (one byte per 16
// elements), 64 bytes of 2-bit quants, d and dmin (fp16).
func fillQ2_K(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 16 + 64 + 4
	for ; len(dst) >= bs; dst = dst[bs:] {
		u := r.Uint64()
		for g := range 16 {
			n := byte(u >> (4 * g))
			sc := 3 + n&7
			m := (3*sc + n>>3&1) / 2
			dst[g] = sc | m<<4
		}
		fillRandom(dst[16:80], r, nil)
		k := r.Uint64() % scaleSteps
		le.PutUint16(dst[80:], p.d[k])
		le.PutUint16(dst[82:], p.d[k])
	}
}

// Q3_K block: 32 bytes of high bits, 64 of low bit pairs, 12 bytes of
// packed 6-bit scale codes (32 + scale), d (fp16).
func fillQ3_K(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 32 + 64 + 12 + 2
	for ; len(dst) >= bs; dst = dst[bs:] {
		fillRandom(dst[:96], r, nil)
		u := r.Uint64()
		s := dst[96:108]
		clear(s)
		for g := range 16 {
			n := byte(u >> (4 * g))
			v := 2 + int(n&7)
			if n&8 != 0 {
				v = -v
			}
			c := byte(32 + v)
			s[g%8] |= (c & 15) << (4 * (g / 8))
			s[8+g%4] |= (c >> 4) << (2 * (g / 4))
		}
		le.PutUint16(dst[108:], p.d[r.Uint64()%scaleSteps])
	}
}

// Q5_K block: d, dmin (fp16), 12 bytes of packed 6-bit scales and mins
// (as Q4_K), 32 bytes of fifth bits, 128 bytes of nibbles.
func fillQ5_K(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 4 + 12 + 32 + 128
	for ; len(dst) >= bs; dst = dst[bs:] {
		u := r.Uint64()
		k := u % scaleSteps
		le.PutUint16(dst[0:], p.d[k])
		le.PutUint16(dst[2:], p.dmin[k])
		v := r.Uint64()
		var sc, m [8]byte
		for j := range 8 {
			sc[j] = 5 + byte(u>>(8+4*j))&15
			m[j] = byte(3.1*float64(sc[j]) + float64(v>>(4*j)&15)/16)
		}
		packScalesMinsK4((*[12]byte)(dst[4:16]), &sc, &m)
		fillRandom(dst[16:bs], r, nil)
	}
}

// Q5_1 block: d, m (fp16), 4 bytes of fifth bits, 16 bytes of nibbles.
func fillQ5_1(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 4 + 4 + 16
	for ; len(dst) >= bs; dst = dst[bs:] {
		d := p.d[r.Uint64()%scaleSteps]
		le.PutUint16(dst[0:], d)
		le.PutUint16(dst[2:], quant.FP32ToFP16(-15.5*quant.FP16ToFP32(d)))
		fillRandom(dst[4:bs], r, nil)
	}
}

// IQ4_NL block: d (fp16, random sign), 16 bytes of 4-bit level codes.
func fillIQ4_NL(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 2 + 16
	for ; len(dst) >= bs; dst = dst[bs:] {
		u := r.Uint64()
		le.PutUint16(dst, p.d[u%scaleSteps]|uint16(u>>8&1)<<15)
		fillRandom(dst[2:bs], r, nil)
	}
}

// MXFP4 block: the E8M0 exponent, 16 bytes of 4-bit E2M1 codes.
func fillMXFP4(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 1 + 16
	for ; len(dst) >= bs; dst = dst[bs:] {
		dst[0] = p.e8m0[r.Uint64()%mxfp4Steps]
		fillRandom(dst[1:bs], r, nil)
	}
}

// IQ4_XS block: d (fp16), 2 bytes of high scale bits, 4 of low scale
// nibbles (6-bit codes 32 + scale), 128 bytes of level codes.
func fillIQ4_XS(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 2 + 2 + 4 + 128
	for ; len(dst) >= bs; dst = dst[bs:] {
		u := r.Uint64()
		le.PutUint16(dst, p.d[u%scaleSteps])
		var sh uint16
		clear(dst[4:8])
		for ib := range 8 {
			n := byte(u >> (8 + 4*ib))
			v := 4 + int(n&7)
			if n&8 != 0 {
				v = -v
			}
			c := byte(32 + v)
			dst[4+ib/2] |= (c & 15) << (4 * (ib % 2))
			sh |= uint16(c>>4) << (2 * ib)
		}
		le.PutUint16(dst[2:], sh)
		fillRandom(dst[8:bs], r, nil)
	}
}

// IQ3_S block: d (fp16), 64 bytes of lattice indexes, 8 of ninth index
// bits, 32 of signs, 4 of 4-bit sub-block scales. Any index bytes are on
// the lattice and random signs give zero mean.
func fillIQ3_S(dst []byte, r *rand.PCG, p *blockParams) {
	const bs = 2 + 64 + 8 + 32 + 4
	for ; len(dst) >= bs; dst = dst[bs:] {
		u := r.Uint64()
		le.PutUint16(dst, p.d[u%scaleSteps])
		fillRandom(dst[2:106], r, nil)
		for j := range 4 {
			dst[106+j] = 4 + byte(u>>(8+8*j))&7 | (4+byte(u>>(12+8*j))&7)<<4
		}
	}
}

// packScalesMinsK4 packs eight 6-bit scales and mins into the 12 bytes
// Q4_K and Q5_K keep them in (ggml's get_scale_min_k4 reads them back).
func packScalesMinsK4(s *[12]byte, sc, m *[8]byte) {
	for j := range 4 {
		s[j] = sc[j] | (sc[j+4]>>4)<<6
		s[j+4] = m[j] | (m[j+4]>>4)<<6
		s[j+8] = sc[j+4]&15 | (m[j+4]&15)<<4
	}
}

// fillLattice fills blocks of the lattice types (IQ3_XXS, IQ2_S, IQ2_XS,
// IQ2_XXS, IQ1_M, IQ1_S) with random bytes, every one of which is a valid
// index, sign or sub-block scale, and then sets the super-block scale:
// the fp16 at offset 0, or, in IQ1_M, the top nibbles of its four scale
// words (bytes 48..55). Random signs (IQ1: offsets of random sign) give
// a mean near zero.
func fillLattice(t quant.Type, dst []byte, r *rand.PCG, p *blockParams) {
	bs := t.BlockBytes()
	for ; len(dst) >= bs; dst = dst[bs:] {
		fillRandom(dst[:bs], r, nil)
		testutil.PutLatticeScale(t, dst[:bs], p.d[r.Uint64()%scaleSteps])
	}
}

// latticeRMS is the RMS of the weights fillLattice draws for type t with
// a block scale of 1, measured on 256 blocks: the lattices' magnitudes
// are tables in package quant, so the constant is measured, not written
// down.
func latticeRMS(t quant.Type) float64 {
	one := &blockParams{}
	for k := range one.d {
		one.d[k] = quant.FP32ToFP16(1)
	}
	const nb = 256
	buf := make([]byte, nb*t.BlockBytes())
	fillLattice(t, buf, rand.NewPCG(7, uint64(t)), one)
	vals := make([]float32, nb*t.BlockElems())
	if err := quant.Dequantize(t, vals, buf); err != nil {
		return math.NaN()
	}
	var sq float64
	for _, v := range vals {
		sq += float64(v) * float64(v)
	}
	return math.Sqrt(sq / float64(len(vals)))
}
