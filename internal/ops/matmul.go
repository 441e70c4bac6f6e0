package ops

import (
	"fmt"

	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/tensor"
)

// Matrix is a weight matrix prepared for multiplication: its kernels and
// the type activations must be converted to are looked up once, at load.
type Matrix struct {
	T       *tensor.Tensor
	Dot     quant.DotFunc
	VecType quant.Type
	Cols    int
	Rows    int
	// XRowBytes is the size of one activation row of Cols elements once
	// converted to VecType.
	XRowBytes int

	// tile multiplies up to tileRows weight rows by up to tileCols
	// activation rows at once.
	tile               quant.TileFunc
	tileRows, tileCols int
}

// NewMatrix prepares a 2-D weight tensor (Shape[0] inputs, Shape[1] outputs).
func NewMatrix(t *tensor.Tensor) (*Matrix, error) {
	if len(t.Shape) != 2 {
		return nil, fmt.Errorf("ops: tensor %q: want 2 dimensions, have %v", t.Name, t.Shape)
	}
	dot, err := quant.Dot(t.Type)
	if err != nil {
		return nil, fmt.Errorf("ops: tensor %q: %w", t.Name, err)
	}
	tile, tr, tc := quant.Tile(t.Type)
	if tile == nil {
		return nil, fmt.Errorf("ops: tensor %q: no tile kernel for %v: %w", t.Name, t.Type, quant.ErrUnsupportedType)
	}
	vt := t.Type.VecDotType()
	xrb, err := vt.RowBytes(int64(t.Cols()))
	if err != nil {
		return nil, fmt.Errorf("ops: tensor %q: %w", t.Name, err)
	}
	return &Matrix{T: t, Dot: dot, VecType: vt, Cols: t.Cols(), Rows: t.Rows(), XRowBytes: int(xrb),
		tile: tile, tileRows: tr, tileCols: tc}, nil
}

// groupBytes bounds the activations of one group of tokens in a batch
// product: each tile of weight rows, read from memory once per group, is
// multiplied by every token of the group while the group's activations
// stay in the core's L2 cache.
const groupBytes = 256 << 10

type matmulTask struct {
	m         *Matrix
	xq        []byte
	nTok      int
	out       []float32
	outStride int
}

func (k *matmulTask) Do(_, lo, hi int) {
	m := k.m
	w := m.T.Data
	rb := m.T.RowBytes()
	xrb := m.XRowBytes
	tile, tr, tc := m.tile, m.tileRows, m.tileCols
	n := m.Cols
	if k.nTok == 1 {
		x := k.xq[:xrb]
		for r := lo; r < hi; r += tr {
			rows := min(tr, hi-r)
			tile(n, w[r*rb:], rb, rows, x, xrb, 1, k.out[r:], k.outStride)
		}
		return
	}
	group := max(tc, groupBytes/max(xrb, 1)/tc*tc)
	for t0 := 0; t0 < k.nTok; t0 += group {
		t1 := min(k.nTok, t0+group)
		for r := lo; r < hi; r += tr {
			rows := min(tr, hi-r)
			wr := w[r*rb:]
			for t := t0; t < t1; t += tc {
				cols := min(tc, t1-t)
				tile(n, wr, rb, rows, k.xq[t*xrb:], xrb, cols, k.out[t*k.outStride+r:], k.outStride)
			}
		}
	}
}

// Exec runs operations on a Pool with scratch task state of its own. Each
// session owns one Exec; its methods allocate nothing.
type Exec struct {
	pool *Pool
	mm   matmulTask
	qt   quantTask
}

// NewExec returns an Exec that runs on p.
func NewExec(p *Pool) *Exec { return &Exec{pool: p} }

// Pool is the pool the Exec runs on.
func (e *Exec) Pool() *Pool { return e.pool }

// MatMul computes, for each of nTok tokens, out[t*outStride+r] = row r of m
// · activation row t, where xq holds nTok activation rows of m.XRowBytes
// bytes in m.VecType (see Quantize).
func (e *Exec) MatMul(m *Matrix, xq []byte, nTok int, out []float32, outStride int) {
	e.mm = matmulTask{m: m, xq: xq, nTok: nTok, out: out, outStride: outStride}
	e.pool.For(m.Rows, m.tileRows, &e.mm)
	e.mm = matmulTask{}
}

type quantTask struct {
	vt   quant.Type
	x    []float32
	cols int
	dst  []byte
	drb  int
}

func (k *quantTask) Do(_, lo, hi int) {
	for t := lo; t < hi; t++ {
		// Lengths are checked by Quantize, so QuantizeRow cannot fail here.
		_ = quant.QuantizeRow(k.vt, k.dst[t*k.drb:(t+1)*k.drb], k.x[t*k.cols:(t+1)*k.cols])
	}
}

// Quantize converts nTok rows of cols floats in x to type vt in dst, one
// row after the other, and returns the bytes written.
func (e *Exec) Quantize(vt quant.Type, x []float32, cols, nTok int, dst []byte) ([]byte, error) {
	rb, err := vt.RowBytes(int64(cols))
	if err != nil {
		return nil, err
	}
	n := int(rb) * nTok
	if len(dst) < n || len(x) < cols*nTok {
		return nil, fmt.Errorf("ops: quantize %d×%d to %v: buffers too small", nTok, cols, vt)
	}
	e.qt = quantTask{vt: vt, x: x, cols: cols, dst: dst, drb: int(rb)}
	if nTok == 1 {
		e.qt.Do(0, 0, 1)
	} else {
		e.pool.For(nTok, 1, &e.qt)
	}
	e.qt = quantTask{}
	return dst[:n], nil
}
