//go:build !purego

package quant

// tileRows is the most rows one call of an assembly tile takes: four
// kernel tiles, whose weights stay in the L1 cache while the columns pass
// over them.
const tileRows = 16

// armTiles holds, per weight type, the tile kernels this CPU runs, slowest
// first.
var armTiles = buildArmTiles()

func buildArmTiles() map[Type][]TileKernel {
	m := make(map[Type][]TileKernel)
	for _, s := range armSpecs {
		if s.ok() && s.col != nil {
			cols := 1
			if s.big != nil {
				cols = s.cols
			}
			m[s.t] = append(m[s.t], TileKernel{Name: s.name, Type: s.t, Rows: tileRows, Cols: cols, Tile: s.tile})
		}
	}
	return m
}

// archTiles lists the assembly tile kernels this CPU can run for t, slowest
// first.
func archTiles(t Type) []TileKernel {
	return append([]TileKernel(nil), armTiles[t]...)
}

// tile runs the assembly tiles of s over rows×cols: the 4×cols kernel for
// whole tiles, the 4×1 kernel for the columns left over and the dot
// product for the rows past the last multiple of 4. Every kernel adds each
// output's blocks in order, as the dot product does, so a result does not
// depend on which kernel computed it.
func (s *armSpec) tile(n int, w []byte, wStride, rows int, x []byte, xStride, cols int, out []float32, outStride int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	l := s.layout
	nb := n / l.be
	rb, xrb := nb*l.wb, n/l.xbe*l.xbb
	if nb <= 0 || wStride < rb || xStride < xrb || (cols > 1 && outStride < rows) || (s.mult > 1 && n%s.mult != 0) {
		// Odd strides and lengths are the caller's business.
		tileByDot(s.asmDot, l, n, w, wStride, rows, x, xStride, cols, out, outStride)
		return
	}
	// One bounds check each, so the assembly stays inside the slices.
	w = w[:(rows-1)*wStride+rb]
	x = x[:(cols-1)*xStride+xrb]
	out = out[:(cols-1)*outStride+rows]
	full := rows &^ 3
	for r := 0; r < full; r += 4 {
		c := 0
		if s.big != nil {
			for ; c+s.cols <= cols; c += s.cols {
				s.big(&w[r*wStride], wStride, &x[c*xStride], xStride, nb, &out[c*outStride+r], outStride)
			}
		}
		for ; c < cols; c++ {
			s.col(&w[r*wStride], wStride, &x[c*xStride], xStride, nb, &out[c*outStride+r], outStride)
		}
	}
	if full < rows {
		tileByDot(s.asmDot, l, n, w[full*wStride:], wStride, rows-full, x, xStride, cols, out[full:], outStride)
	}
}
