package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The X8 layout: a weight matrix repacked at load time, eight rows at a
// time, so that decode reads one sequential stream per thread (as it reads
// rows in place) while the eight rows' integer sums of a block land in
// the eight lanes of one register: a block's conversion, scale loads and
// FMAs serve eight rows instead of one, which on Zen 4 streams up to
// twice the bytes per cycle (BenchmarkX8 against BenchmarkDecode).
// llama.cpp's CPU backend repacks Q4_0 and Q4_K likewise (q4_0_8x8,
// q4_K_8x8); the layouts here are our own.
//
// Each group of eight rows (rows 8g..8g+7) is stored as its block columns
// in order, X8BlockBytes(t) each:
//
//   - Q4_0 (144 bytes, the eight rows' blocks exactly): the eight F16
//     scales (row r at 2r), then four 32-byte chunks, chunk c holding
//     bytes 4c..4c+3 of each row's sixteen code bytes (row r at 4r): the
//     low nibbles are elements 4c..4c+3, the high ones 16+4c..16+4c+3.
//   - Q4_K (1184 bytes, 32 more than the rows' blocks: the 6-bit scales
//     and mins unpacked to bytes): the eight rows' (d, dmin) F16 pairs
//     (row r at 4r); the scales sc_j of sub-block j (row r at 32+8j+r);
//     the mins m_j (row r at 96+8j+r); then 32 chunks of 32 bytes, chunk k
//     holding bytes 4k..4k+3 of each row's 128 code bytes (row r at
//     160+32k+4r).
//   - Q6_K (1680 bytes, the rows' blocks exactly): the eight F16 d (row r
//     at 2r); the int8 scales of the sixteen sub-blocks (sub-block j, row
//     r at 16+8j+r); then, for each group of four elements g (0..7) of
//     each half h, the three chunks its values come from, in the order
//     the kernels read them (a sequential stream): at 144+96(8h+g), the
//     rows' dwords 16h+g and 16h+8+g of the low-bit bytes ql and dword
//     8h+g of the high-bit bytes qh, 32 bytes each (row r at 4r).
//   - Q5_K (1440 bytes, Q4_K's 32 more than the rows' blocks): Q4_K's
//     160 bytes of (d, dmin), scales and mins; then, for each group of
//     four elements g (0..7) of the sub-blocks, the five chunks the
//     kernels read for it, in that order (a sequential stream): at
//     160+160g, dword g of each row's 32 qh bytes, then at
//     160+160g+32+32p, dword g of the row's code bytes 32p..32p+31 (the
//     sub-blocks 2p and 2p+1), 32 bytes each (row r at 4r).
//   - Q8_0 (272 bytes, the eight rows' blocks exactly): the eight F16
//     scales (row r at 2r), then eight 32-byte chunks, chunk c holding
//     codes 4c..4c+3 of each row (row r at 4r).
//   - Q5_0 (176 bytes, the eight rows' blocks exactly): the eight F16
//     scales (row r at 2r); the rows' fifth bits, a dword each (row r at
//     16+4r), reordered so that bit 2c+h of byte i is element
//     16h+4c+i's (x8_q5_0.go); then Q4_0's four chunks of the rows' code
//     bytes at 48 (chunk c at 48+32c, row r at 48+32c+4r). Like IQ4_NL's
//     (x8_lowbit.go), its kernels have no GEMM: Q5_0 has none in the
//     row layout either, and batches take MatVecN.

// X8BlockBytes is the size of one block column of a group in the X8
// layout of t (0 for a type without one).
func X8BlockBytes(t Type) int {
	// Beyond the eight rows' blocks: the packed scales unpacked to bytes.
	switch t {
	case Q4_0, Q8_0, Q6_K, Q2_K:
		return 8 * t.BlockBytes()
	case Q4_K, Q5_K, Q3_K:
		return 8*t.BlockBytes() + 32
	case IQ4_XS:
		return 8*t.BlockBytes() + 16
	case IQ4_NL, MXFP4, Q5_0:
		return 8 * t.BlockBytes()
	case IQ3_S:
		// IQ4_XS's layout (x8_lowbit.go): four bits an element, the grid
		// resolved, against the file's 3.25.
		return X8BlockBytes(IQ4_XS)
	case IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M:
		// The lattice types' grids resolved too, and a scale each 16
		// elements (x8_lattice.go).
		return x8LatBytes
	}
	return 0
}

// X8Bytes is the size of rows (a multiple of 8) of n elements of t in the
// X8 layout.
func X8Bytes(t Type, rows, n int) int {
	return rows / 8 * (n / t.BlockElems()) * X8BlockBytes(t)
}

// X8Kernel multiplies a matrix in the X8 layout. Results equal the row
// layout's products up to the order of float32 operations.
type X8Kernel struct {
	Name string
	Type Type
	// MatVec sets out[r] = row r · x for r < 8·groups: w holds the groups
	// of rows of n elements, x one activation row of n elements in
	// Type.VecDotType(). It never allocates.
	MatVec func(n int, w []byte, groups int, x []byte, out []float32)
	// Mul is GemmKernel.Mul over the X8 layout: rows 8·groups, p one panel
	// packed by the Pack of Gemm(Type), out[c*outStride+r] for c < cols.
	// It never allocates. It is nil for a type without a GEMM kernel
	// (the low-bit types), whose batches go through MatVecN.
	Mul func(n int, w []byte, groups int, p []byte, cols int, out []float32, outStride int)
	// MatVecN is MatVec for tokens activation rows at once, row k at
	// x[k*xStride:], its results at out[k*outStride:]: each block column
	// is unpacked once for up to eight tokens (four or two for most
	// types), and each token's results
	// equal MatVec's bit for bit. It never allocates. It is nil for the
	// types without one (callers then call MatVec a token at a time).
	MatVecN func(n int, w []byte, groups int, x []byte, xStride, tokens int, out []float32, outStride int)
}

// X8 returns the X8 kernels for weight type t and rows of n elements on
// this CPU (LLM_KERNELS may name one, as for TileChoice), or false when
// there are none (the matrix then stays in its row layout): Q4_0, Q8_0,
// Q5_0, Q4_K, Q5_K, Q6_K, IQ4_XS, Q3_K, Q2_K, IQ4_NL, MXFP4, IQ3_S and
// the lattice types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S, IQ1_M), with
// n whole blocks of t (any multiple of 32 for Q4_0, Q8_0, Q5_0, IQ4_NL
// and MXFP4, whose kernels take the blocks past the last eight one at a
// time; a multiple of 256 for the others) and at most 32768, in builds
// with assembly on
// CPUs with AVX-512 VNNI; on CPUs with AVX2 and no AVX-512, Q4_0, Q4_K,
// Q8_0 and the lattice types only, the types whose AVX2 X8 kernels beat
// the row layout (x8AVX2Pays; LLM_KERNELS may still name the others).
func X8(t Type, n int) (X8Kernel, bool) {
	if X8BlockBytes(t) == 0 || n <= 0 || n%t.BlockElems() != 0 || n/QK > x8MaxBlocks {
		return X8Kernel{}, false
	}
	ks := x8Variants(t)
	if len(ks) == 0 {
		return X8Kernel{}, false
	}
	if name, ok := kernelEnv[t]; ok {
		for _, k := range ks {
			if k.Name == name {
				return k, true
			}
		}
	}
	k := ks[x8Default(ks)]
	if !x8Pays(k) {
		return X8Kernel{}, false
	}
	return k, true
}

// x8MaxBlocks bounds n/32: the kernels keep per-block activation factors
// in their frame.
const x8MaxBlocks = 1024

// RepackX8 writes the rows (a multiple of 8) of n elements of type t in
// src, row after row, to dst (X8Bytes(t, rows, n) bytes) in the X8 layout
// of t (Q4_0, Q8_0, Q5_0, Q4_K, Q5_K, Q6_K, IQ4_XS, Q3_K, Q2_K, IQ4_NL,
// MXFP4, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ1_S or IQ1_M; x8.go,
// x8_lowbit.go and x8_lattice.go document them); dst and src must not
// overlap.
func RepackX8(t Type, dst, src []byte, rows, n int) error {
	bb := X8BlockBytes(t)
	if bb == 0 || rows <= 0 || rows%8 != 0 || n <= 0 || n%t.BlockElems() != 0 {
		return fmt.Errorf("quant: X8 repack of %d rows of %d %v elements: want Q4_0, Q8_0, Q5_0, Q4_K, Q5_K, Q6_K, IQ4_XS, Q3_K, Q2_K, IQ4_NL, MXFP4, IQ3_S or a lattice type, rows a multiple of 8, whole blocks", rows, n, t)
	}
	nb := n / t.BlockElems()
	wb := t.BlockBytes()
	if len(src) < rows*nb*wb || len(dst) < X8Bytes(t, rows, n) {
		return fmt.Errorf("quant: X8 repack of %d rows of %d %v elements needs %d bytes from %d, src has %d and dst %d",
			rows, n, t, rows*nb*wb, X8Bytes(t, rows, n), len(src), len(dst))
	}
	for g := 0; g < rows/8; g++ {
		for b := 0; b < nb; b++ {
			o := dst[(g*nb+b)*bb : (g*nb+b+1)*bb]
			for r := 0; r < 8; r++ {
				blk := src[((8*g+r)*nb+b)*wb : ((8*g+r)*nb+b+1)*wb]
				if repackX8Low(t, o, blk, r) {
					continue
				}
				r4 := 4 * (r & 7)
				switch t {
				case Q4_0:
					o[2*r], o[2*r+1] = blk[0], blk[1]
					codes, q := (*[128]byte)(o[16:]), (*[16]byte)(blk[2:])
					for c := range 4 {
						*(*[4]byte)(codes[32*c+r4:]) = *(*[4]byte)(q[4*c:])
					}
					continue
				case Q8_0:
					o[2*r], o[2*r+1] = blk[0], blk[1]
					codes, q := (*[256]byte)(o[16:]), (*[32]byte)(blk[2:])
					for c := range 8 {
						*(*[4]byte)(codes[32*c+r4:]) = *(*[4]byte)(q[4*c:])
					}
					continue
				}
				if t == Q6_K {
					ob, q := (*[8 * 210]byte)(o), (*[210]byte)(blk)
					ob[2*r], ob[2*r+1] = q[208], q[209]
					for j := range 16 {
						ob[16+8*j+r] = q[192+j]
					}
					for k := range 32 {
						*(*[4]byte)(ob[x8Q6Low(r&7, 4*k):]) = *(*[4]byte)(q[4*k:])
					}
					for k := range 16 {
						*(*[4]byte)(ob[x8Q6High(r&7, 4*k):]) = *(*[4]byte)(q[128+4*k:])
					}
					continue
				}
				put4(o[r4:], blk[:4])
				s := (*[kScaleSize]byte)(blk[4:])
				for j := 0; j < 8; j++ {
					o[32+8*j+r], o[96+8*j+r] = scaleMinK4(j, s)
				}
				if t == Q5_K {
					for k := 0; k < 8; k++ {
						put4(o[x8Q5High(r, 4*k):], blk[16+4*k:])
					}
					for k := 0; k < 32; k++ {
						put4(o[x8Q5Low(r, 4*k):], blk[48+4*k:])
					}
					continue
				}
				codes, q := (*[1024]byte)(o[160:]), (*[128]byte)(blk[16:])
				for k := range 32 {
					*(*[4]byte)(codes[32*k+r4:]) = *(*[4]byte)(q[4*k:])
				}
			}
		}
	}
	return nil
}

// x8Code is the unsigned code of element e of row r in a block column gb
// of the X8 layout of t (e < 32 for Q4_0 and Q8_0, < 256 for the
// k-quants): 4 bits, Q5_K's 5, Q6_K's 6, or Q8_0's int8 plus 128.
func x8Code(t Type, gb []byte, r, e int) int32 {
	var q byte
	switch t {
	case Q8_0:
		return int32(int8(gb[16+32*(e/4)+4*r+e%4])) + 128
	case Q5_K:
		// Element 64p+32h+l: the low (h 0) or high nibble of code byte
		// 32p+l, and bit 2p+h of qh byte l.
		p, hh, l := e/64, e%64/32, e%32
		lo := gb[x8Q5Low(r, 32*p+l)]
		if hh == 1 {
			lo >>= 4
		}
		hi := gb[x8Q5High(r, l)] >> (2*p + hh) & 1
		return int32(lo&0xF | hi<<4)
	case Q6_K:
		// Element 128h+32q+l: the low (q < 2) or high nibble of ql byte
		// 64h+32(q%2)+l, and bits 2q, 2q+1 of qh byte 32h+l.
		h, qq, l := e/128, e%128/32, e%32
		lo := gb[x8Q6Low(r, 64*h+32*(qq%2)+l)]
		if qq >= 2 {
			lo >>= 4
		}
		hi := gb[x8Q6High(r, 32*h+l)] >> (2 * qq) & 3
		return int32(lo&0xF | hi<<4)
	case Q4_0:
		q = gb[16+32*(e%16/4)+4*r+e%4]
		if e >= 16 {
			q >>= 4
		}
	default:
		// Sub-blocks 2p and 2p+1 are the low and high nibbles of the
		// row's code bytes 32p..32p+31.
		p, i := e/64, e%32
		q = gb[160+32*(8*p+i/4)+4*r+i%4]
		if e%64 >= 32 {
			q >>= 4
		}
	}
	return int32(q & 0xF)
}

// x8Q6Low and x8Q6High are the offsets in a Q6_K X8 block column of row
// r's byte o of ql and of qh.
func x8Q6Low(r, o int) int {
	h, w := o/64, o%64/4
	return 144 + 96*(8*h+w%8) + 32*(w/8) + 4*r + o%4
}

func x8Q6High(r, o int) int {
	h, g := o/32, o%32/4
	return 144 + 96*(8*h+g) + 64 + 4*r + o%4
}

// x8Q5Low and x8Q5High are the offsets in a Q5_K X8 block column of row
// r's byte o of the codes qs and of qh.
func x8Q5Low(r, o int) int {
	return 160 + 160*(o%32/4) + 32 + 32*(o/32) + 4*r + o%4
}

func x8Q5High(r, o int) int { return 160 + 160*(o/4) + 4*r + o%4 }

// fma32 is float32 a·b+c rounded once, as VFMADD does.
func fma32(a, b, c float32) float32 { return float32(math.FMA(float64(a), float64(b), float64(c))) }

// matVecX8Go is the pure-Go twin of the X8 decode kernels, in their order
// of operations. Q4_0, per block: the integer sum Σc·y, then
// (Σc·y)·d_x − 8·d_x·Σy fused, then an FMA with d_w. Q8_0, per block:
// acc += d_w·((Σc·y)·d_x) fused. Q4_K and Q5_K, per
// super-block: S = Σ_j sc_j·Σc·y and M = Σ_j m_j·Σy_j as integers, then
// acc += S·(d·d_x) and acc −= M·(dmin·d_x), each fused. Q6_K, per
// super-block: S = Σ_j sc_j·(s_j − 32·Σy_j) as an integer, then
// acc += S·(d·d_x) fused.
func matVecX8Go(t Type, n int, w []byte, groups int, x []byte, out []float32) {
	nb := n / t.BlockElems()
	bb := X8BlockBytes(t)
	for g := 0; g < groups; g++ {
		var acc [8]float32
		for b := 0; b < nb; b++ {
			gb := w[(g*nb+b)*bb : (g*nb+b+1)*bb]
			if t == Q8_0 {
				xb := x[b*q8_0Bytes : (b+1)*q8_0Bytes]
				dx := f16At(xb)
				for r := 0; r < 8; r++ {
					var s int32
					for e := 0; e < QK; e++ {
						s += (x8Code(t, gb, r, e) - 128) * int32(int8(xb[2+e]))
					}
					acc[r] = fma32(f16At(gb[2*r:]), float32(s)*dx, acc[r])
				}
				continue
			}
			if t == Q4_0 {
				xb := x[b*q8_0Bytes : (b+1)*q8_0Bytes]
				dx := f16At(xb)
				var sy int32
				for _, q := range xb[2:] {
					sy += int32(int8(q))
				}
				corr := 8 * (dx * float32(sy))
				for r := 0; r < 8; r++ {
					var s int32
					for e := 0; e < QK; e++ {
						s += x8Code(t, gb, r, e) * int32(int8(xb[2+e]))
					}
					acc[r] = fma32(f16At(gb[2*r:]), fma32(float32(s), dx, -corr), acc[r])
				}
				continue
			}
			xb := x[b*q8_KBytes : (b+1)*q8_KBytes]
			dx := f32At(xb)
			if t == Q6_K {
				for r := 0; r < 8; r++ {
					var s int32
					for j := 0; j < 16; j++ {
						sj := -32 * int32(int16(binary.LittleEndian.Uint16(xb[260+2*j:])))
						for e := 16 * j; e < 16*j+16; e++ {
							sj += x8Code(t, gb, r, e) * int32(int8(xb[4+e]))
						}
						s += int32(int8(gb[16+8*j+r])) * sj
					}
					acc[r] = fma32(float32(s), f16At(gb[2*r:])*dx, acc[r])
				}
				continue
			}
			for r := 0; r < 8; r++ {
				var s, m int32
				for j := 0; j < 8; j++ {
					var sj, yj int32
					for e := 32 * j; e < 32*j+32; e++ {
						sj += x8Code(t, gb, r, e) * int32(int8(xb[4+e]))
					}
					for k := 2 * j; k < 2*j+2; k++ {
						yj += int32(int16(binary.LittleEndian.Uint16(xb[260+2*k:])))
					}
					s += int32(gb[32+8*j+r]) * sj
					m += int32(gb[96+8*j+r]) * yj
				}
				acc[r] = fma32(float32(s), f16At(gb[4*r:])*dx, acc[r])
				acc[r] = fma32(-float32(m), f16At(gb[4*r+2:])*dx, acc[r])
			}
		}
		copy(out[8*g:8*g+8], acc[:])
	}
}

// mulX8Go is the pure-Go twin of the X8 GEMM kernels. The k-quants' take
// the decode kernels' order (matVecX8Go), so that each column equals
// MatVec on its token bit for bit. Q4_0's and Q8_0's take the order of
// operations of the row layout's assembly GEMM (their X8 GEMM kernels are
// that assembly with other addresses): per block, row and column acc +=
// (d_w·d_x)·(Σu·y − bias·Σy) fused.
func mulX8Go(t Type, n int, w []byte, groups int, p []byte, cols int, out []float32, outStride int) {
	nb := n / t.BlockElems()
	bb := X8BlockBytes(t)
	cols = min(cols, GemmCols)
	for g := 0; g < groups; g++ {
		for r := 0; r < 8; r++ {
			for c := 0; c < cols; c++ {
				var acc float32
				for b := 0; b < nb; b++ {
					gb := w[(g*nb+b)*bb : (g*nb+b+1)*bb]
					if t == Q4_0 || t == Q8_0 {
						pb := p[b*gemmPanelBlock : (b+1)*gemmPanelBlock]
						s := int32(binary.LittleEndian.Uint32(pb[1152+4*c:]))
						for e := 0; e < QK; e++ {
							s += x8Code(t, gb, r, e) * int32(int8(pb[128*(e/4)+4*c+e%4]))
						}
						acc = fma32(f16At(gb[2*r:])*f32At(pb[1024+4*c:]), float32(s), acc)
						continue
					}
					if t == Q6_K {
						// The decode kernels' order, from the panel.
						pan := panelQ6_K
						pb := p[b*pan.block() : (b+1)*pan.block()]
						dx := f32At(pb[pan.dxOff()+4*c:])
						var s int32
						for j := 0; j < 16; j++ {
							sb := pb[j*pan.subBytes():]
							sj := int32(binary.LittleEndian.Uint32(sb[128*pan.groups()+4*c:]))
							for e := 0; e < 16; e++ {
								sj += x8Code(t, gb, r, 16*j+e) * int32(int8(sb[128*(e/4)+4*c+e%4]))
							}
							s += int32(int8(gb[16+8*j+r])) * sj
						}
						acc = fma32(float32(s), f16At(gb[2*r:])*dx, acc)
						continue
					}
					pan := panelQ4_K
					pb := p[b*pan.block() : (b+1)*pan.block()]
					dx := f32At(pb[pan.dxOff()+4*c:])
					d, dmin := f16At(gb[4*r:]), f16At(gb[4*r+2:])
					// Q4_K and Q5_K: the decode kernels' order, from the panel.
					var s, m int32
					for j := 0; j < 8; j++ {
						sb := pb[j*pan.subBytes():]
						var sj int32
						for e := 0; e < 32; e++ {
							sj += x8Code(t, gb, r, 32*j+e) * int32(int8(sb[128*(e/4)+4*c+e%4]))
						}
						yj := int32(int16(binary.LittleEndian.Uint16(pb[pan.pairsOff()+128*(j/2)+4*c+2*(j%2):])))
						s += int32(gb[32+8*j+r]) * sj
						m += int32(gb[96+8*j+r]) * yj
					}
					acc = fma32(float32(s), d*dx, acc)
					acc = fma32(-float32(m), dmin*dx, acc)
				}
				out[c*outStride+8*g+r] = acc
			}
		}
	}
}

// put4 copies the first 4 bytes of src to dst as one 32-bit move: copy of
// two slices calls memmove, and the repacks' 4-byte pieces made that a
// third of loading a Q4_K model. Both hold at least 4 bytes (RepackX8
// checks the sizes first).
func put4(dst, src []byte) { *(*[4]byte)(dst) = *(*[4]byte)(src) }
