package ops

import (
	"fmt"

	"github.com/lowmem/llm/quant"
)

// A Matrix in the X8 layout (quant.RepackX8) holds its rows repacked eight
// at a time in memory of its own, the mapped rows given back: decode
// multiplies a group of eight rows per block column (X8Kernel.MatVec),
// batches below the GEMM's threshold through X8Kernel.MatVecN (a token
// at a time through MatVec for the types without it), prefill through
// the GEMM panels of the weight type (X8Kernel.Mul), or, for a kernel
// without a GEMM (IQ4_XS, Q3_K, Q2_K, IQ4_NL, MXFP4, IQ3_S; AVX2's Q4_K,
// Q5_K, Q6_K), through MatVecN as small batches do. A group takes the bytes of
// its eight rows in place, or more (Q4_K: 32 more a super-block, IQ3_S
// 224: quant.X8BlockBytes), so row r's group begins at r times a row's
// share of a group (x8RowBytes).

// UseX8 makes m multiply through k from data, which holds m's rows
// repacked by quant.RepackX8 (quant.X8Bytes of them). From then on
// products never read m.T.Data, and Part rows of m must start and end on
// multiples of 8. It is meant for before m is used: at load, or as an
// expert cache fills a slot (it allocates nothing).
func (m *Matrix) UseX8(data []byte, k quant.X8Kernel) error {
	switch {
	case k.MatVec == nil || k.Type != m.T.Type:
		return fmt.Errorf("ops: tensor %q: X8 kernel %q for %v, the tensor is %v", m.T.Name, k.Name, k.Type, m.T.Type)
	case m.Rows%8 != 0:
		return fmt.Errorf("ops: tensor %q: %d rows, the X8 layout needs a multiple of 8", m.T.Name, m.Rows)
	case len(data) != quant.X8Bytes(m.T.Type, m.Rows, m.Cols):
		return fmt.Errorf("ops: tensor %q: %d repacked bytes, the X8 layout of %d rows of %d takes %d", m.T.Name, len(data), m.Rows, m.Cols, quant.X8Bytes(m.T.Type, m.Rows, m.Cols))
	}
	m.x8, m.x8Data = k, data
	m.x8RowBytes = quant.X8Bytes(m.T.Type, 8, m.Cols) / 8
	m.Kernel = k.Name
	m.tileRows = 8
	return nil
}

// X8 reports whether m is in the X8 layout (UseX8).
func (m *Matrix) X8() bool { return m.x8.MatVec != nil }

// RowLayout returns a copy of m in its row layout, multiplying m.T.Data
// (a matrix viewed elsewhere, e.g. a block read from disk into a buffer,
// whose bytes are the file's rows whatever layout m has in memory).
func (m *Matrix) RowLayout() Matrix {
	c := *m
	if !c.X8() {
		return c
	}
	k, _ := quant.TileChoice(m.T.Type)
	c.x8, c.x8Data, c.x8RowBytes = quant.X8Kernel{}, nil, 0
	c.Kernel, c.tileRows = k.Name, k.Rows
	return c
}

// rowBytes is a row's share of the bytes weights returns.
func (m *Matrix) rowBytes() int {
	if m.X8() {
		return m.x8RowBytes
	}
	return m.T.RowBytes()
}

// weights is the bytes products read: the repacked ones in the X8 layout.
func (m *Matrix) weights() []byte {
	if m.X8() {
		return m.x8Data
	}
	return m.T.Data
}

// x8BatchGroups is the groups of rows a small batch multiplies at a time:
// their weights (18 KiB a group of 4096 Q4_0 columns) stay in the L1 and
// L2 caches while the tokens pass over them.
const x8BatchGroups = 2

// runX8 is matmulTask.run for a matrix in the X8 layout: rows [r0, r1)
// of the part, multiples of 8, times tokens [t0, t1), one MatVec a token
// over the rows for decode, by groups of rows for a small batch: the
// tokens together through MatVecN (each block column unpacked once for up
// to eight of them), or, without one, a MatVec a token.
func runX8(pt *mmPart, r0, r1, t0, t1 int) {
	m := pt.M
	rb := m.x8RowBytes
	w := m.x8Data[pt.Row0*rb:]
	xrb, n, mv := m.XRowBytes, m.Cols, m.x8.MatVec
	if t1-t0 == 1 {
		mv(n, w[r0*rb:], (r1-r0)/8, pt.X[t0*xrb:(t0+1)*xrb], pt.Out[t0*pt.Stride+r0:])
		return
	}
	if mvn := m.x8.MatVecN; mvn != nil {
		for r := r0; r < r1; r += 8 * x8BatchGroups {
			g := min(x8BatchGroups, (r1-r)/8)
			mvn(n, w[r*rb:], g, pt.X[t0*xrb:t1*xrb], xrb, t1-t0, pt.Out[t0*pt.Stride+r:], pt.Stride)
		}
		return
	}
	for r := r0; r < r1; r += 8 * x8BatchGroups {
		g := min(x8BatchGroups, (r1-r)/8)
		for t := t0; t < t1; t++ {
			mv(n, w[r*rb:], g, pt.X[t*xrb:(t+1)*xrb], pt.Out[t*pt.Stride+r:])
		}
	}
}

// mulX8 is gemmTask's work on rows [r0, r1) of a matrix in the X8 layout,
// a group of 8 rows times every panel of the group of tokens at a time.
func (k *gemmTask) mulX8(r0, r1, panels int) {
	m := k.m
	rb := m.x8RowBytes
	for r := r0; r < r1; r += 8 {
		for j := 0; j < panels; j++ {
			t := k.t0 + j*quant.GemmCols
			cols := min(quant.GemmCols, k.t0+k.nTok-t)
			m.x8.Mul(m.Cols, k.w[r*rb:], 1, k.p[j*k.pb:(j+1)*k.pb], cols, k.out[t*k.outStride+r:], k.outStride)
		}
	}
}
