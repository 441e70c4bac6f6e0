package quant

import (
	"encoding/binary"
	"math"
)

// Panels of Q8_K activations, for the GEMM kernels of the k-quants and the
// ternary types: per super-block of 256 elements, per sub-block j of sub
// elements (32 for Q4_K, 16 for Q6_K, the whole 256 for TQ1_0 and TQ2_0) its groups of four elements
// (128 bytes each: 4 bytes of each of the 32 columns), then T_j of the 32
// columns, then d_x of the 32 columns (float32). T_j is d_x·Σy_j, a
// float32, for Q4_K (mins: the kernel subtracts dmin·m_j·T_j, as the dot
// product does with the block sums), and -bias·Σy_j, an int32, for Q6_K
// (bias 32: the kernel multiplies the 6-bit values unsigned) and the
// ternary types (bias 1: it multiplies the codes c = t+1): their integer sums start at
// T_j, so they are exact. Q4_K's panel ends with Σy_j of each column as
// int16 pairs (pairsOff), which the X8 GEMM takes for the mins as the
// decode kernels do.

type kPanel struct {
	sub, bias int32
	mins      bool
}

func (p kPanel) groups() int   { return int(p.sub) / 4 }
func (p kPanel) subBytes() int { return p.groups()*128 + 128 }
func (p kPanel) dxOff() int    { return QKK / int(p.sub) * p.subBytes() }

// pairsOff is where Q4_K's panel (mins) holds Σy_j of each column as
// int16 pairs, (Σy_2k, Σy_2k+1) in field k of 128 bytes, column c at 4c:
// the X8 GEMM computes the mins term as the decode kernels do, in integers
// (Σ_j m_j·Σy_j) with VPDPWSSD; the other panels have none.
func (p kPanel) pairsOff() int { return p.dxOff() + 128 }

func (p kPanel) block() int {
	if p.mins {
		return p.pairsOff() + 4*128
	}
	return p.dxOff() + 128
}

var (
	panelQ4_K = kPanel{sub: 32, mins: true}
	panelQ6_K = kPanel{sub: 16, bias: 32}
	panelTQ   = kPanel{sub: QKK, bias: 1}
)

func (p kPanel) panelBytes(n int) int { return n / QKK * p.block() }

// pack lays out the panel column by column, each column's super-block a
// run of 4-byte stores (BenchmarkGemmPack: the closure per store it had
// made it a tenth of a k-quant GEMM's time on a 1024-row matrix).
func (p kPanel) pack(n int, x []byte, xStride, cols int, out []byte) {
	nb := n / QKK
	bl := p.block()
	out = out[:nb*bl]
	cols = min(cols, GemmCols)
	if cols < GemmCols {
		// Columns past cols are zero.
		clear(out)
	}
	sub, groups, sbytes := int(p.sub), p.groups(), p.subBytes()
	subs := QKK / sub
	le := binary.LittleEndian
	for c := 0; c < cols; c++ {
		col := x[c*xStride : c*xStride+nb*q8_KBytes]
		for b := 0; b < nb; b++ {
			xb := (*[q8_KBytes]byte)(col[b*q8_KBytes:])
			blk := out[b*bl : (b+1)*bl]
			d := f32At(xb[:])
			for j := 0; j < subs; j++ {
				sb := blk[j*sbytes+4*c : (j+1)*sbytes]
				q := xb[4+sub*j : 4+sub*(j+1)]
				for g := 0; g < groups; g++ {
					le.PutUint32(sb[128*g:], le.Uint32(q[4*g:]))
				}
				var s int32
				switch sub {
				case 16:
					s = int32(int16(le.Uint16(xb[260+2*j:])))
				case 32:
					s = int32(bsumPair(xb[:], j))
				default: // the whole super-block
					s = tqBsums((*[32]byte)(xb[260:]))
				}
				if p.mins {
					le.PutUint32(sb[128*groups:], math.Float32bits(d*float32(s)))
				} else {
					le.PutUint32(sb[128*groups:], uint32(-p.bias*s))
				}
			}
			le.PutUint32(blk[p.dxOff()+4*c:], math.Float32bits(d))
			if p.mins {
				for k := 0; k < 4; k++ {
					lo, hi := bsumPair(xb[:], 2*k), bsumPair(xb[:], 2*k+1)
					le.PutUint32(blk[p.pairsOff()+128*k+4*c:], uint32(uint16(lo))|uint32(uint16(hi))<<16)
				}
			}
		}
	}
}

// bsumPair is Σy of the 32 elements of sub-block j of the Q8_K block xb:
// its two 16-element block sums added.
func bsumPair(xb []byte, j int) int16 {
	return int16(binary.LittleEndian.Uint16(xb[260+4*j:])) + int16(binary.LittleEndian.Uint16(xb[262+4*j:]))
}

// mul is the pure-Go GEMM kernel of the k-quants and the ternary types,
// in the assembly's order per sub-block: Q4_K acc += d·sc·(d_x·Σu·y) −
// dmin·m·T, Q6_K acc += d·sc·(d_x·(T + Σu·y)), TQ1_0 and TQ2_0 acc +=
// (d·d_x)·(T + Σu·y) as their dot products associate, u the unsigned
// quants or codes.
func (p kPanel) mul(t Type, n int, w []byte, wStride, rows int, pp []byte, cols int, out []float32, outStride int) {
	nb := n / QKK
	wb := t.BlockBytes()
	var u [QKK]int32
	var sc, mn [16]float32
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			var acc float32
			for b := 0; b < nb; b++ {
				blk := w[r*wStride+b*wb : r*wStride+(b+1)*wb]
				p.unpack(t, blk, &u, &sc, &mn)
				pb := pp[b*p.block() : (b+1)*p.block()]
				dx := f32At(pb[p.dxOff()+4*c:])
				for j := 0; j < QKK/int(p.sub); j++ {
					sb := pb[j*p.subBytes():]
					var s int32
					for e := 0; e < int(p.sub); e++ {
						s += u[int(p.sub)*j+e] * int32(int8(sb[128*(e/4)+4*c+e%4]))
					}
					if p.mins {
						tj := f32At(sb[128*p.groups()+4*c:])
						acc += sc[j]*(dx*float32(s)) - mn[j]*tj
						continue
					}
					s += int32(binary.LittleEndian.Uint32(sb[128*p.groups()+4*c:]))
					if t == Q6_K {
						acc += sc[j] * (dx * float32(s))
					} else {
						acc += (sc[j] * dx) * float32(s)
					}
				}
			}
			out[c*outStride+r] = acc
		}
	}
}

// unpack sets the super-block's unsigned quants in element order and its
// sub-block factors: Q4_K and Q5_K d·sc_j, dmin·m_j; Q6_K d·sc_j; TQ1_0
// and TQ2_0 their codes and d.
func (p kPanel) unpack(t Type, blk []byte, u *[QKK]int32, sc, mn *[16]float32) {
	if t == TQ1_0 {
		for _, r := range tq1Runs {
			for n, p := range tq1Pow3[:r.digits] {
				for m, q := range blk[r.at : r.at+r.width] {
					u[r.first+r.width*n+m] = tq1Code(q, p)
				}
			}
		}
		sc[0] = f16At(blk[52:])
		return
	}
	if t == TQ2_0 {
		for i := range u {
			h, j, l := i/128, i%128/32, i%32
			u[i] = int32(blk[32*h+l] >> (2 * j) & 3)
		}
		sc[0] = f16At(blk[64:])
		return
	}
	if t == Q6_K {
		b := (*[q6_KBytes]byte)(blk)
		d := f16At(b[208:])
		for j := 0; j < 16; j++ {
			sc[j] = d * float32(int8(b[192+j]))
		}
		for h := 0; h < 2; h++ {
			for l := 0; l < 32; l++ {
				ql0, ql1, qh := b[64*h+l], b[64*h+32+l], b[128+32*h+l]
				u[128*h+l] = int32(ql0&0xF | (qh&3)<<4)
				u[128*h+32+l] = int32(ql1&0xF | (qh>>2&3)<<4)
				u[128*h+64+l] = int32(ql0>>4 | (qh>>4&3)<<4)
				u[128*h+96+l] = int32(ql1>>4 | (qh>>6&3)<<4)
			}
		}
		return
	}
	b := (*[q4_KBytes]byte)(blk)
	d, dmin := f16At(b[0:]), f16At(b[2:])
	s := (*[kScaleSize]byte)(b[4:])
	for j := 0; j < 8; j++ {
		a, m := scaleMinK4(j, s)
		sc[j] = d * float32(a)
		mn[j] = dmin * float32(m)
	}
	// Q5_K: 32 bytes qh before the codes; bit 2j (2j+1) of qh[l] is bit 4
	// of element 64j+l (64j+32+l).
	qs, qh := 16, []byte(nil)
	if t == Q5_K {
		qs, qh = 48, blk[16:48]
	}
	for j := 0; j < 4; j++ {
		for l := 0; l < 32; l++ {
			q := blk[qs+32*j+l]
			u[64*j+l] = int32(q & 0xF)
			u[64*j+32+l] = int32(q >> 4)
			if qh != nil {
				u[64*j+l] |= int32(qh[l]>>(2*j)&1) << 4
				u[64*j+32+l] |= int32(qh[l]>>(2*j+1)&1) << 4
			}
		}
	}
}

func kGemm(t Type, p kPanel) GemmKernel {
	return GemmKernel{Name: "generic", Type: t, PanelBytes: p.panelBytes, Pack: p.pack,
		Mul: func(n int, w []byte, wStride, rows int, pp []byte, cols int, out []float32, outStride int) {
			p.mul(t, n, w, wStride, rows, pp, cols, out, outStride)
		}}
}
