package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The X8 layout: a weight matrix repacked at load time, eight rows at a
// time, so that decode reads one sequential stream per thread (as it reads
// rows in place) while the eight rows' integer sums of a block land in
// the eight lanes of one register: a block's conversion, scale load and
// FMAs serve eight rows instead of one, which on Zen 4 doubles what the
// kernel streams from the caches (BenchmarkX8). llama.cpp's CPU backend
// repacks Q4_0 likewise (its q4_0_8x8); the layout here is our own.
//
// For Q4_0, each group of eight rows (rows 8g..8g+7) is stored as its nb
// block columns in order, X8BlockBytes (144) each: the eight rows' F16
// scales (row r at 2r), then four 32-byte chunks, chunk c holding bytes
// 4c..4c+3 of each row's sixteen code bytes (row r at 4r), so chunk c's
// low nibbles are elements 4c..4c+3 of the eight rows and its high ones
// elements 16+4c..16+4c+3. A group takes exactly the bytes of its eight
// rows in place: repacking needs no more memory than the rows.

// X8BlockBytes is the size of one block column of a Q4_0 group.
const X8BlockBytes = 8 * q4_0Bytes

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
	Mul func(n int, w []byte, groups int, p []byte, cols int, out []float32, outStride int)
}

// X8 returns the X8 kernels for weight type t and rows of n elements on
// this CPU, or false when there are none (the matrix then stays in its
// row layout): Q4_0 with n a multiple of 256 and at most 32768, on CPUs
// with AVX-512 VNNI, in builds with assembly.
func X8(t Type, n int) (X8Kernel, bool) {
	if t != Q4_0 || n <= 0 || n%(8*QK) != 0 || n/QK > x8MaxBlocks {
		return X8Kernel{}, false
	}
	return archX8(t)
}

// x8MaxBlocks bounds n/32: the kernels keep per-block activation factors
// in their frame.
const x8MaxBlocks = 1024

// RepackX8 writes the rows (a multiple of 8) of n elements of type t in
// src, row after row, to dst in the X8 layout; dst and src are the same
// size and must not overlap.
func RepackX8(t Type, dst, src []byte, rows, n int) error {
	if t != Q4_0 || rows <= 0 || rows%8 != 0 || n <= 0 || n%QK != 0 {
		return fmt.Errorf("quant: X8 repack of %d rows of %d %v elements: want Q4_0, rows a multiple of 8, n of 32", rows, n, t)
	}
	nb := n / QK
	size := rows * nb * q4_0Bytes
	if len(src) < size || len(dst) < size {
		return fmt.Errorf("quant: X8 repack of %d rows of %d elements needs %d bytes, src has %d and dst %d", rows, n, size, len(src), len(dst))
	}
	for g := 0; g < rows/8; g++ {
		for b := 0; b < nb; b++ {
			o := dst[(g*nb+b)*X8BlockBytes : (g*nb+b+1)*X8BlockBytes]
			for r := 0; r < 8; r++ {
				blk := src[((8*g+r)*nb+b)*q4_0Bytes:]
				o[2*r], o[2*r+1] = blk[0], blk[1]
				for c := 0; c < 4; c++ {
					copy(o[16+32*c+4*r:16+32*c+4*r+4], blk[2+4*c:2+4*c+4])
				}
			}
		}
	}
	return nil
}

// x8Code is the 4-bit code of element e of row r in a Q4_0 X8 block
// column gb.
func x8Code(gb []byte, r, e int) int32 {
	q := gb[16+32*(e%16/4)+4*r+e%4]
	if e >= 16 {
		q >>= 4
	}
	return int32(q & 0xF)
}

// matVecX8Q4_0 is the pure-Go twin of the X8 decode kernel, in its order
// of operations: per block, the integer sum Σ c·y, then
// (Σ c·y)·d_x − 8·d_x·Σy fused, then an FMA with d_w.
func matVecX8Q4_0(n int, w []byte, groups int, x []byte, out []float32) {
	nb := n / QK
	for g := 0; g < groups; g++ {
		var acc [8]float32
		for b := 0; b < nb; b++ {
			gb := w[(g*nb+b)*X8BlockBytes:]
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
					s += x8Code(gb, r, e) * int32(int8(xb[2+e]))
				}
				f := float32(math.FMA(float64(s), float64(dx), -float64(corr)))
				dw := FP16ToFP32(binary.LittleEndian.Uint16(gb[2*r:]))
				acc[r] = float32(math.FMA(float64(dw), float64(f), float64(acc[r])))
			}
		}
		copy(out[8*g:8*g+8], acc[:])
	}
}

// mulX8Q4_0 is the pure-Go twin of the X8 GEMM kernel, in its order of
// operations: per block, row and column, the integer sum from −8·Σy, then
// an FMA of d_w·d_x with it.
func mulX8Q4_0(n int, w []byte, groups int, p []byte, cols int, out []float32, outStride int) {
	nb := n / QK
	cols = min(cols, GemmCols)
	for g := 0; g < groups; g++ {
		for r := 0; r < 8; r++ {
			for c := 0; c < cols; c++ {
				var acc float32
				for b := 0; b < nb; b++ {
					gb := w[(g*nb+b)*X8BlockBytes:]
					pb := p[b*gemmPanelBlock : (b+1)*gemmPanelBlock]
					var s int32
					for e := 0; e < QK; e++ {
						s += x8Code(gb, r, e) * int32(int8(pb[128*(e/4)+4*c+e%4]))
					}
					s += int32(binary.LittleEndian.Uint32(pb[1152+4*c:]))
					dx := f32At(pb[1024+4*c:])
					dw := FP16ToFP32(binary.LittleEndian.Uint16(gb[2*r:]))
					acc = float32(math.FMA(float64(dw*dx), float64(s), float64(acc)))
				}
				out[c*outStride+8*g+r] = acc
			}
		}
	}
}
