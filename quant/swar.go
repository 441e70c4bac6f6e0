package quant

import (
	"math/bits"
)

// The pure-Go tile kernels ("swar") compute several products of small
// integers with one 64-bit multiplication (SIMD within a register). They
// are what every platform without assembly runs, so they use only portable
// integer arithmetic: words are read with encoding/binary, never through
// unsafe casts, and give the same results on big- and little-endian and on
// 32-bit targets.
//
// The trick: put four weight quants a0..a3 in the 16-bit lanes of a word,
// A = a0 + a1·2^16 + a2·2^32 + a3·2^48, and four activation quants in the
// lanes of another in reverse order, X = x3 + x2·2^16 + x1·2^32 + x0·2^48.
// The product A·X mod 2^64 is c0 + c1·2^16 + c2·2^32 + c3·2^48 with
// c3 = a0·x0 + a1·x1 + a2·x2 + a3·x3, the dot product we want, in the top
// lane, and the other coefficients (partial cross sums) below it. With
// unsigned a ≤ 15 and signed x in [-128, 127] (the activation quants, held
// as the signed polynomial, two's complement mod 2^64), adding up to four
// such products keeps everything below the top lane within ±2^47 and the
// top lane within ±2^15, so adding 2^47 and taking the top 16 bits as an
// int16 recovers the exact sum of 16 products (top16). Wider weights need
// smaller groups: two products for 5-bit quants, one for 6-bit; Q8_0's
// bytes are split into two nibbles. Offsets such as Q4_0's -8 are applied
// afterwards through the sum of the activation quants. Each block
// still sums its integers exactly and scales them in float32 in the same
// order as the dot product, so a tile equals the DotFunc up to the rounding
// of fused multiply-adds on the platforms whose compilers fuse.
//
// The activation vector is the same for every row of a matrix, so a tile
// packs each column into lanes once (packQ8) and reuses it for all its
// rows, up to 64, four rows at a time; the weights are unpacked from their
// nibbles with shifts and masks as they stream by. No lookup table per
// activation is needed: packing a column costs about as much as a few
// rows of Q4_0.

const (
	lanes4  = 0x000f000f000f000f // low nibble of every 16-bit lane
	lanes1  = 0x0001000100010001 // low bit of every lane; also the lane-sum multiplier
	lanes2  = 0x0003000300030003 // low two bits of every lane
	lanes8  = 0x00ff00ff00ff00ff // low byte of every lane
	nibbles = 0x0f0f0f0f0f0f0f0f // low nibble of every byte
	bits45  = 0x3030303030303030 // bits 4 and 5 of every byte
	signs8  = 0x0080008000800080 // bit 7 of every lane
	flip8   = 0x8080808080808080 // bit 7 of every byte
	topBias = 1 << 47
)

// top16 returns the top lane of a sum of lane products (see above) as the
// signed number it holds.
func top16(v uint64) int32 { return int32(int16((v + topBias) >> 48)) }

// packQ8 spreads 32 int8 quants over eight words of four signed 16-bit
// lanes, in the order the weight kernels unpack their quants: word 2k holds
// elements 8k, 8k+2, 8k+4, 8k+6 and word 2k+1 elements 8k+1, 8k+3, 8k+5,
// 8k+7, each with its first element in the top lane. It returns the sums
// of the first and the last 16 quants.
func packQ8(dst *[8]uint64, q *[QK]byte) (s0, s1 int32) {
	var a, b uint64
	for k := 0; k < 4; k++ {
		// Reversing the bytes puts byte 0 in the top lane's high byte and
		// byte 1 in its low byte, and so on down; the low bytes become the
		// odd elements, the high bytes the even ones. XOR-then-subtract
		// sign-extends each byte into its lane.
		r := bits.ReverseBytes64(le64(q[8*k:]))
		even := (r>>8&lanes8 ^ signs8) - signs8
		odd := (r&lanes8 ^ signs8) - signs8
		dst[2*k], dst[2*k+1] = even, odd
		if k < 2 {
			a += even + odd
		} else {
			b += even + odd
		}
	}
	// Multiplying by lanes1 adds all lanes into the top one; each lane
	// holds at most four quants, the top lane's total at most sixteen.
	return top16(a * lanes1), top16(b * lanes1)
}

// swarChunk is how many elements of each activation column a tile packs at
// a time, on its stack.
const swarChunk = 512

// swarCols and swarRows are the largest tile the pure-Go kernels take.
const (
	swarRows = 64
	swarCols = 4
)

// xpack is one activation column's chunk in lanes, with the per-block
// numbers the kernels need.
type xpack struct {
	q  [swarChunk / 4]uint64 // packQ8 words, eight per 32 elements
	d  [swarChunk / QK]float32
	m  [swarChunk / QK]float32 // Q8_1: s; unused otherwise
	s  [swarChunk / 16]int32   // sum of every 16 quants, computed here
	bs [swarChunk / 16]int32   // Q8_K: the bsums stored in the block
}

// swarBlocks cuts the four weight rows of a SWAR kernel to their whole
// blocks of bs bytes and returns how many blocks that is.
func swarBlocks(w0, w1, w2, w3 []byte, bs int) (int, [4][]byte) {
	nb := len(w0) / bs
	return nb, [4][]byte{w0[:nb*bs], w1[:nb*bs], w2[:nb*bs], w3[:nb*bs]}
}

// packQ8_32 packs whole Q8_0 blocks, or with withS Q8_1 blocks, whose
// fp16 s (after d) goes to p.m.
func packQ8_32(p *xpack, x []byte, withS bool) {
	bs, q := q8_0Bytes, 2
	if withS {
		bs, q = q8_1Bytes, 4
	}
	for i := 0; i < len(x)/bs; i++ {
		b := x[i*bs : (i+1)*bs]
		p.d[i] = f16At(b[0:])
		if withS {
			p.m[i] = f16At(b[2:])
		}
		p.s[2*i], p.s[2*i+1] = packQ8((*[8]uint64)(p.q[8*i:]), (*[QK]byte)(b[q:]))
	}
}

// packQ8_K packs whole Q8_K blocks.
func packQ8_K(p *xpack, x []byte) {
	for i := 0; i < len(x)/q8_KBytes; i++ {
		b := (*[q8_KBytes]byte)(x[i*q8_KBytes:])
		p.d[i] = f32At(b[0:])
		for j := 0; j < QKK/QK; j++ {
			k := QKK/QK*i + j
			p.s[2*k], p.s[2*k+1] = packQ8((*[8]uint64)(p.q[8*k:]), (*[QK]byte)(b[4+QK*j:]))
		}
		bs := (*[32]byte)(b[4+QKK:])
		for j := 0; j < QKK/16; j++ {
			p.bs[QKK/16*i+j] = bsum(bs, j)
		}
	}
}

// swarSpec is the pure-Go tile kernel of one weight type. The kernels are
// called through switches, not function values, so that the packed
// columns on the tile's stack do not escape to the heap. internal/gen
// writes the switch over the kernels (rows4, in swar_gen.go) with the
// kernels whose four rows are written out (Q4_0, Q4_1, Q8_0).
type swarSpec struct {
	t      Type
	be, wb int // elements and bytes per weight block
	xb     int // bytes per activation block (of be elements)
	dot    DotFunc
}

// swarTile returns the pure-Go tile kernel Tiles offers for t, or false if
// t has none or it does not pay on this platform: on 32-bit targets a
// 64-bit multiplication takes three, and Q8_0, which needs twice the
// products of the 4-bit types, runs faster as the plain dot product
// (measured on 386: 0.65×, where Q4_0 gains 1.5×).
func swarTile(t Type) (TileKernel, bool) {
	if bits.UintSize == 32 && t == Q8_0 {
		return TileKernel{}, false
	}
	return swarKernel(t)
}

// swarKernel returns the pure-Go tile kernel for t on any platform, or
// false if t has none.
func swarKernel(t Type) (TileKernel, bool) {
	if !hasSwar(t) {
		return TileKernel{}, false
	}
	l := tileLayoutOf(t)
	s := &swarSpec{t: t, be: l.be, wb: l.wb, xb: l.xbb, dot: opsOf(t).dot}
	return TileKernel{Name: "swar", Type: t, Rows: swarRows, Cols: swarCols, Tile: s.tile}, true
}

// pack packs whole activation blocks of the type's VecDotType.
func (s *swarSpec) pack(p *xpack, x []byte) {
	switch s.t {
	case Q4_0, Q5_0, Q8_0:
		packQ8_32(p, x, false)
	case Q4_1, Q5_1:
		packQ8_32(p, x, true)
	default:
		packQ8_K(p, x)
	}
}

func (s *swarSpec) tile(n int, w []byte, wStride, rows int, x []byte, xStride, cols int, out []float32, outStride int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	if rows > swarRows || cols > swarCols {
		tileByDot(s.dot, tileLayoutOf(s.t), n, w, wStride, rows, x, xStride, cols, out, outStride)
		return
	}
	nb := n / s.be
	rb, xrb := nb*s.wb, nb*s.xb
	per := swarChunk / s.be // blocks per chunk
	var p xpack
	// Rows past the tile's land in acc's spare entries, unread.
	var acc [swarCols][swarRows + 3]float32
	row := func(r, b0, b1 int) []byte {
		r = min(r, rows-1)
		return w[r*wStride : r*wStride+rb][b0*s.wb : b1*s.wb]
	}
	for b0 := 0; b0 < nb; b0 += per {
		b1 := min(nb, b0+per)
		for c := 0; c < cols; c++ {
			xc := x[c*xStride : c*xStride+xrb]
			s.pack(&p, xc[b0*s.xb:b1*s.xb])
			for r := 0; r < rows; r += 4 {
				s.rows4(row(r, b0, b1), row(r+1, b0, b1), row(r+2, b0, b1), row(r+3, b0, b1), &p, (*[4]float32)(acc[c][r:]))
			}
		}
	}
	for c := 0; c < cols; c++ {
		copy(out[c*outStride:c*outStride+rows], acc[c][:rows])
	}
}

// q4Group is the lane sum of four products of a packed column's words x
// with the quants in the low nibbles of the bytes of lo and hi: even
// bytes, odd bytes of lo, then of hi, the packQ8 order of 16 elements.
func q4Group(lo, hi uint64, x *[4]uint64) uint64 {
	return (lo&lanes4)*x[0] + (lo>>8&lanes4)*x[1] + (hi&lanes4)*x[2] + (hi>>8&lanes4)*x[3]
}
