//go:build (amd64 || arm64) && !purego

package quant

import "github.com/lowmem/llm/internal/cpu"

// The tile kernel machinery shared by the architectures with assembly
// tiles: each lists its kernels in tileVariants (tile_<arch>.go).

// tileAsm is the signature of the assembly tile kernels: out[c*outStride+r]
// for the kernel's fixed rows and cols, over nb blocks, nb a positive
// multiple of the kernel's unroll. Strides are in bytes for w and x and in
// floats for out.
type tileAsm func(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)

// rowAsm is the signature of the assembly row kernels of decode:
// out[r] = row r · x for r < rows, over nb blocks, nb a positive multiple
// of 8 and at most rowMaxBlocks. They read the rows one after the other.
type rowAsm func(w *byte, wStride int, rows int, x *byte, nb int, out *float32)

// rowMaxBlocks is the most blocks a row kernel takes (its frame holds
// eight bytes per activation block).
const rowMaxBlocks = 1024

// tileSpec describes the assembly kernels of one weight type and
// instruction set: a h×cols kernel for full tiles, a h×1 kernel for the
// columns left over, and the dot product for everything else (the blocks
// past the last whole unroll, and rows past the last whole tile). A call
// takes up to rows rows, h at a time, which saves the caller a call per
// tile of a matrix-vector product.
type tileSpec struct {
	name       string
	t          Type
	layout     tileLayout
	be         int // elements per block
	wb, xb     int // bytes per weight and activation block
	unit       int // blocks per assembly loop iteration
	mult       int // n must be a multiple of this, else the dot product does all (0: any)
	h          int // rows of the assembly kernels
	rows, cols int
	big        tileAsm // h × cols
	col        tileAsm // h × 1; nil: the dot product does all
	dot        DotFunc
	// Decode (one column) reads rows one after the other: with row, or,
	// when rowDot is set, with the dot product row by row. Otherwise it
	// takes the h×1 kernel.
	row    rowAsm
	rowDot bool
}

// tileVariant is one entry of tileVariants: an assembly tile kernel's spec,
// the CPU level it needs, and the dot-product variant that takes the rows
// (and blocks) it leaves over.
type tileVariant struct {
	level cpu.Level
	dot   string
	s     tileSpec
}

func (s *tileSpec) kernel() TileKernel {
	return TileKernel{Name: s.name, Type: s.t, Rows: s.rows, Cols: s.cols, Tile: s.tile}
}

func (s *tileSpec) tile(n int, w []byte, wStride, rows int, x []byte, xStride, cols int, out []float32, outStride int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	nb := n / s.be
	rb, xrb := nb*s.wb, nb*s.xb
	if s.col == nil || nb <= 0 || wStride < rb || xStride < xrb || (cols > 1 && outStride < rows) || (s.mult > 1 && n%s.mult != 0) {
		// Odd strides are the caller's business and keep the plain order
		// of evaluation.
		tileByDot(s.dot, s.layout, n, w, wStride, rows, x, xStride, cols, out, outStride)
		return
	}
	// One bounds check each, so the assembly stays inside the slices.
	w = w[:(rows-1)*wStride+rb]
	x = x[:(cols-1)*xStride+xrb]
	out = out[:(cols-1)*outStride+rows]
	main := nb - nb%s.unit
	if cols == 1 && (s.rowDot || s.row != nil && main > 0 && main <= rowMaxBlocks) {
		s.decode(n, nb, main, w, wStride, rows, x, out)
		return
	}
	full := rows - rows%s.h
	if full < rows {
		// Rows past the last whole tile, at matrix edges.
		r := full
		tileByDot(s.dot, s.layout, n, w[r*wStride:], wStride, rows-r, x, xStride, cols, out[r:], outStride)
	}
	if main > 0 {
		for r := 0; r < full; r += s.h {
			c := 0
			if s.big != nil {
				for ; c+s.cols <= cols; c += s.cols {
					s.big(&w[r*wStride], wStride, &x[c*xStride], xStride, main, &out[c*outStride+r], outStride)
				}
			}
			for ; c < cols; c++ {
				s.col(&w[r*wStride], wStride, &x[c*xStride], xStride, main, &out[c*outStride+r], outStride)
			}
		}
	}
	if main == nb {
		return
	}
	tn := (nb - main) * s.be
	wo, xo := main*s.wb, main*s.xb
	for c := 0; c < cols; c++ {
		xc := x[c*xStride+xo : c*xStride+xrb]
		o := out[c*outStride : c*outStride+full]
		for r := range o {
			v := s.dot(tn, w[r*wStride+wo:r*wStride+rb], xc)
			if main > 0 {
				o[r] += v
			} else {
				o[r] = v
			}
		}
	}
}

// decode computes one column, the rows one after the other: the row
// kernel over the first main blocks and the dot product over the rest, or
// the dot product over whole rows.
func (s *tileSpec) decode(n, nb, main int, w []byte, wStride, rows int, x []byte, out []float32) {
	rb := nb * s.wb
	if s.rowDot {
		for r := range out[:rows] {
			out[r] = s.dot(n, w[r*wStride:r*wStride+rb], x)
		}
		return
	}
	s.row(&w[0], wStride, rows, &x[0], main, &out[0])
	if main == nb {
		return
	}
	tn := (nb - main) * s.be
	wo, xo := main*s.wb, main*s.xb
	xt := x[xo : nb*s.xb]
	for r := range out[:rows] {
		out[r] += s.dot(tn, w[r*wStride+wo:r*wStride+rb], xt)
	}
}

// tileRows is the most rows one call of an assembly tile takes: four
// kernel tiles, whose weights (up to some 25 KB for rows of 5632 Q8_0
// elements) stay in the L1 cache while the columns pass over them.
const tileRows = 16

// tileSpecs holds, per weight type, the tile kernels this process runs,
// slowest first. Built once, after asmKernels.
var tileSpecs = buildTileSpecs()

func buildTileSpecs() map[Type][]TileKernel {
	m := make(map[Type][]TileKernel)
	for _, v := range tileVariants {
		dot := asmDotOf(v.s.t, v.dot)
		if !cpu.Has(v.level) || dot == nil {
			continue
		}
		s := v.s
		s.layout = tileLayoutOf(s.t)
		s.dot = dot
		m[s.t] = append(m[s.t], s.kernel())
	}
	return m
}

// archTiles lists the assembly tile kernels this process can run for t,
// slowest first.
func archTiles(t Type) []TileKernel {
	return append([]TileKernel(nil), tileSpecs[t]...)
}
