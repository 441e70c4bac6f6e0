package quant

import (
	"encoding/binary"
	"math"
)

// GEMM kernels for prefill: weight rows times panels of GemmCols
// activation columns that the kernel's Pack laid out for it beforehand,
// once per batch, so that the product reads each activation byte from a
// place where one instruction takes a group of four elements of 16
// columns, and the float work (convert, scale, accumulate) is done once
// per block and 16 columns instead of per column.
//
// Panel layout (Q8_0 activations, for Q4_0 and Q8_0 weights): per block of
// 32 elements, 1280 bytes: eight groups of four elements, each the 4 bytes
// of the group in each of the 32 columns (128 bytes, column c at 4c), then
// d_x of the 32 columns (float32) and -bias·Σy of each (int32), where bias
// is the weight type's offset (8 for Q4_0, whose unsigned nibbles the
// kernel multiplies, 128 for Q8_0, whose bytes it makes unsigned with xor
// 0x80): the kernels start each block's integer sum there, so that it is
// exact, as the dot products' are. Columns past cols are zero.

// GemmCols is the number of activation columns in a packed panel.
const GemmCols = 32

// GemmKernel is a prefill kernel for weights of type Type.
type GemmKernel struct {
	Name string
	Type Type
	// PanelBytes returns the bytes of one packed panel of rows of n
	// elements.
	PanelBytes func(n int) int
	// Pack lays out cols ≤ GemmCols activation rows of n elements
	// (VecDotType; row c at x[c*xStride:]) as one panel in p
	// (PanelBytes(n) bytes).
	Pack func(n int, x []byte, xStride, cols int, p []byte)
	// Mul sets out[c*outStride+r] = row r of w · column c of the panel p,
	// for r < rows and c < cols. Results equal the dot products up to
	// the order of float32 operations. It never allocates.
	Mul func(n int, w []byte, wStride, rows int, p []byte, cols int, out []float32, outStride int)
}

// Gemm returns the GEMM kernel chosen for weight type t on this CPU, or
// false when t has none in assembly (matrix products then use Tile): the
// pure-Go GEMM is the twin the assembly is tested against, slower than
// the portable tiles (-tags purego prefill ran at a quarter of their
// speed with it).
func Gemm(t Type) (GemmKernel, bool) {
	ks := Gemms(t)
	if len(ks) < 2 {
		return GemmKernel{}, false
	}
	return ks[len(ks)-1], true
}

// Gemms lists the GEMM kernels of t this CPU runs, the pure-Go one first
// (it is the twin tests compare the others with).
func Gemms(t Type) []GemmKernel {
	g, ok := gemmGeneric[t]
	if !ok {
		return nil
	}
	ks := []GemmKernel{g}
	return append(ks, archGemms(t)...)
}

// GemmScratchBytes is the packed-panel scratch a matrix product of rows
// whose quantized activation row takes xRowBytes bytes needs: at least one
// panel of the widest layout (Q8_0: 1280 bytes per 34-byte block; Q8_K:
// 10368 per 292-byte block), and at least gemmGroupBytes, which holds
// several panels so that a group's panels stay in the L2 cache while the
// weights stream past them once.
func GemmScratchBytes(xRowBytes int) int {
	return max(gemmGroupBytes, (xRowBytes+33)/34*gemmPanelBlock, (xRowBytes+291)/292*panelQ6_K.block())
}

const (
	gemmPanelBlock = 8*128 + 2*128 // bytes of a panel's 32-element block
	gemmGroupBytes = 512 << 10
)

var gemmGeneric = map[Type]GemmKernel{
	Q4_0:  {Name: "generic", Type: Q4_0, PanelBytes: panelBytesQ8_0, Pack: packQ8_0For(8), Mul: mulPanelQ4_0},
	Q8_0:  {Name: "generic", Type: Q8_0, PanelBytes: panelBytesQ8_0, Pack: packQ8_0For(128), Mul: mulPanelQ8_0},
	Q4_K:  kGemm(Q4_K, panelQ4_K),
	Q5_K:  kGemm(Q5_K, panelQ4_K),
	Q6_K:  kGemm(Q6_K, panelQ6_K),
	TQ1_0: kGemm(TQ1_0, panelTQ),
	TQ2_0: kGemm(TQ2_0, panelTQ),
}

func panelBytesQ8_0(n int) int { return n / QK * gemmPanelBlock }

// packQ8_0For returns the packer of Q8_0 activations for weights whose
// bias is bias.
func packQ8_0For(bias int32) func(n int, x []byte, xStride, cols int, p []byte) {
	return func(n int, x []byte, xStride, cols int, p []byte) {
		packQ8_0(n, x, xStride, cols, p, bias)
	}
}

func packQ8_0(n int, x []byte, xStride, cols int, p []byte, bias int32) {
	nb := n / QK
	p = p[:nb*gemmPanelBlock]
	cols = min(cols, GemmCols)
	for b := 0; b < nb; b++ {
		blk := p[b*gemmPanelBlock : (b+1)*gemmPanelBlock]
		for c := 0; c < GemmCols; c++ {
			if c >= cols {
				for g := 0; g < 8; g++ {
					binary.LittleEndian.PutUint32(blk[128*g+4*c:], 0)
				}
				binary.LittleEndian.PutUint32(blk[1024+4*c:], 0)
				binary.LittleEndian.PutUint32(blk[1152+4*c:], 0)
				continue
			}
			xb := (*[q8_0Bytes]byte)(x[c*xStride+b*q8_0Bytes:])
			var s int32
			for g := 0; g < 8; g++ {
				copy(blk[128*g+4*c:128*g+4*c+4], xb[2+4*g:2+4*g+4])
				for _, q := range xb[2+4*g : 2+4*g+4] {
					s += int32(int8(q))
				}
			}
			d := f16At(xb[:])
			binary.LittleEndian.PutUint32(blk[1024+4*c:], math.Float32bits(d))
			binary.LittleEndian.PutUint32(blk[1152+4*c:], uint32(-bias*s))
		}
	}
}

// mulPanelQ4_0 and mulPanelQ8_0 are the pure-Go GEMM kernels: per block,
// row and column, (d_w·d_x)·(Σ u·y − bias·Σy), u the unsigned weight bytes
// the assembly multiplies (Q4_0 nibbles, Q8_0 bytes + 128).
func mulPanelQ4_0(n int, w []byte, wStride, rows int, p []byte, cols int, out []float32, outStride int) {
	mulPanel(n, w, wStride, rows, p, cols, out, outStride, q4_0Bytes, func(blk []byte, e int) int32 {
		q := blk[2+e%16]
		if e >= 16 {
			q >>= 4
		}
		return int32(q & 0xF)
	})
}

func mulPanelQ8_0(n int, w []byte, wStride, rows int, p []byte, cols int, out []float32, outStride int) {
	mulPanel(n, w, wStride, rows, p, cols, out, outStride, q8_0Bytes, func(blk []byte, e int) int32 {
		return int32(int8(blk[2+e])) + 128
	})
}

// mulPanelQ8_0Signed is the twin for panels packed without the bias term
// (packQ8_0For(0)): the weights signed, as AVX2's kernel multiplies them.
func mulPanelQ8_0Signed(n int, w []byte, wStride, rows int, p []byte, cols int, out []float32, outStride int) {
	mulPanel(n, w, wStride, rows, p, cols, out, outStride, q8_0Bytes, func(blk []byte, e int) int32 {
		return int32(int8(blk[2+e]))
	})
}

func mulPanel(n int, w []byte, wStride, rows int, p []byte, cols int, out []float32, outStride int,
	wb int, elem func(blk []byte, e int) int32) {
	nb := n / QK
	for r := 0; r < rows; r++ {
		row := w[r*wStride : r*wStride+nb*wb]
		for c := 0; c < cols; c++ {
			var acc float32
			for b := 0; b < nb; b++ {
				blk := row[b*wb : (b+1)*wb]
				pb := p[b*gemmPanelBlock : (b+1)*gemmPanelBlock]
				var s int32
				for e := 0; e < QK; e++ {
					s += elem(blk, e) * int32(int8(pb[128*(e/4)+4*c+e%4]))
				}
				s += int32(binary.LittleEndian.Uint32(pb[1152+4*c:]))
				dx := f32At(pb[1024+4*c:])
				acc += (f16At(blk) * dx) * float32(s)
			}
			out[c*outStride+r] = acc
		}
	}
}
