package ops

import (
	"fmt"
	"sync/atomic"

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

	// Kernel names the tile variant chosen for the weight type
	// (quant.TileChoice), e.g. "avx512vnni-row-nta".
	Kernel string

	// tile multiplies up to tileRows weight rows by up to tileCols
	// activation rows at once.
	tile               quant.TileFunc
	tileRows, tileCols int
	// gemm, when the type has one, multiplies batches (gemm.go).
	gemm *quant.GemmKernel
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
	k, _ := quant.TileChoice(t.Type)
	tile, tr, tc := k.Tile, k.Rows, k.Cols
	if tile == nil {
		return nil, fmt.Errorf("ops: tensor %q: no tile kernel for %v: %w", t.Name, t.Type, quant.ErrUnsupportedType)
	}
	vt := t.Type.VecDotType()
	xrb, err := vt.RowBytes(int64(t.Cols()))
	if err != nil {
		return nil, fmt.Errorf("ops: tensor %q: %w", t.Name, err)
	}
	mat := &Matrix{T: t, Dot: dot, VecType: vt, Cols: t.Cols(), Rows: t.Rows(), XRowBytes: int(xrb),
		Kernel: k.Name, tile: tile, tileRows: tr, tileCols: tc}
	if g, ok := quant.Gemm(t.Type); ok {
		mat.gemm = &g
	}
	return mat, nil
}

// groupBytes bounds the activations of one group of tokens in a batch
// product: each tile of weight rows, read from memory once per group, is
// multiplied by every token of the group while the group's activations
// stay in the core's L2 cache.
const groupBytes = 256 << 10

// Work is handed out in chunks of rows (times a group of tokens) from a
// shared counter rather than split in equal parts up front, so that a
// worker that starts late or is descheduled by the OS does not leave the
// others idle at the end of every product. The first worker takes chunks
// from the front, the others from the back, so that each streams through
// adjacent rows, as the kernels' prefetching expects. chunksPerThread
// chunks a thread keep the imbalance at the end small; chunk bounds keep
// the counter's cost and the prefetchers' stream lengths reasonable.
const (
	chunksPerThread = 8
	minChunkRows    = 16
	maxChunkRows    = 128
)

type matmulTask struct {
	m         *Matrix
	xq        []byte
	nTok      int
	out       []float32
	outStride int

	chunkRows int // rows per work item, a multiple of the tile height
	nChunks   int // row chunks per token group
	group     int // tokens per group
	nItems    int // work items: groups × row chunks
	// taken counts the items taken from the front (low 32 bits) and from
	// the back (high 32 bits).
	taken atomic.Uint64
}

// plan sets up the work items of a product on threads threads.
func (k *matmulTask) plan(threads int) {
	m := k.m
	tr := m.tileRows
	c := m.Rows / (threads * chunksPerThread)
	c = min(max(c, minChunkRows), maxChunkRows)
	c = max(tr, (c+tr-1)/tr*tr)
	k.chunkRows = c
	k.nChunks = (m.Rows + c - 1) / c
	k.group = k.nTok
	if k.nTok > 1 {
		// Groups of equal size, in whole tiles, of at most groupBytes.
		tc := m.tileCols
		most := max(tc, groupBytes/max(m.XRowBytes, 1)/tc*tc)
		groups := (k.nTok + most - 1) / most
		k.group = ((k.nTok+groups-1)/groups + tc - 1) / tc * tc
	}
	k.nItems = (k.nTok + k.group - 1) / k.group * k.nChunks
	k.taken.Store(0)
}

// take returns the next work item for worker w, or false when none is
// left.
func (k *matmulTask) take(w int) (int, bool) {
	for {
		v := k.taken.Load()
		front, back := int(v&0xFFFFFFFF), int(v>>32)
		if front+back >= k.nItems {
			return 0, false
		}
		if w == 0 {
			if k.taken.CompareAndSwap(v, v+1) {
				return front, true
			}
		} else if k.taken.CompareAndSwap(v, v+1<<32) {
			return k.nItems - 1 - back, true
		}
	}
}

// Do takes work items until none are left; the range it is given only
// says how many threads share the work.
func (k *matmulTask) Do(w, _, _ int) {
	for {
		i, ok := k.take(w)
		if !ok {
			return
		}
		g, c := i/k.nChunks, i%k.nChunks
		r0 := c * k.chunkRows
		t0 := g * k.group
		k.run(r0, min(k.m.Rows, r0+k.chunkRows), t0, min(k.nTok, t0+k.group))
	}
}

// run multiplies rows [r0, r1) by tokens [t0, t1): tile by tile of rows,
// each times every token, so that a tile's weights stay in the L1 cache
// while the tokens pass over them.
func (k *matmulTask) run(r0, r1, t0, t1 int) {
	m := k.m
	w := m.T.Data
	rb := m.T.RowBytes()
	xrb := m.XRowBytes
	tile, tr, tc := m.tile, m.tileRows, m.tileCols
	n := m.Cols
	if t1-t0 == 1 {
		x := k.xq[t0*xrb : (t0+1)*xrb]
		out := k.out[t0*k.outStride:]
		for r := r0; r < r1; r += tr {
			tile(n, w[r*rb:], rb, min(tr, r1-r), x, xrb, 1, out[r:], k.outStride)
		}
		return
	}
	for r := r0; r < r1; r += tr {
		rows := min(tr, r1-r)
		wr := w[r*rb:]
		for t := t0; t < t1; t += tc {
			cols := min(tc, t1-t)
			tile(n, wr, rb, rows, k.xq[t*xrb:], xrb, cols, k.out[t*k.outStride+r:], k.outStride)
		}
	}
}

// Exec runs operations on a Pool with scratch task state of its own. Each
// session owns one Exec; its methods allocate nothing.
type Exec struct {
	pool *Pool
	mm   matmulTask
	qt   quantTask
	// GEMM: packed panels (grown once), and the tasks (gemm.go).
	pack []byte
	pk   packTask
	gt   gemmTask
}

// NewExec returns an Exec that runs on p.
func NewExec(p *Pool) *Exec { return &Exec{pool: p} }

// Pool is the pool the Exec runs on.
func (e *Exec) Pool() *Pool { return e.pool }

// MatMul computes, for each of nTok tokens, out[t*outStride+r] = row r of m
// · activation row t, where xq holds nTok activation rows of m.XRowBytes
// bytes in m.VecType (see Quantize).
func (e *Exec) MatMul(m *Matrix, xq []byte, nTok int, out []float32, outStride int) {
	if nTok >= gemmMinTokens && m.gemm != nil {
		e.matmulGemm(m, xq, nTok, out, outStride)
		return
	}
	k := &e.mm
	k.m, k.xq, k.nTok, k.out, k.outStride = m, xq, nTok, out, outStride
	k.plan(e.pool.Threads())
	e.pool.For(min(e.pool.Threads(), k.nItems), 1, k)
	k.m, k.xq, k.out = nil, nil, nil
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
