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
	// x8, when its MatVec is set, holds the rows repacked in the X8
	// layout (x8.go): products read x8Data and never T.Data. A value, not
	// a pointer, so that UseX8 allocates nothing.
	x8     quant.X8Kernel
	x8Data []byte
	// x8RowBytes is a row's share of a group's bytes in the X8 layout
	// (Q4_K's is 4 bytes a super-block more than in place).
	x8RowBytes int

	// LoRA lists the adapters' corrections of the matrix (nil: none).
	// Products do not add them themselves: they take the activations
	// as floats (Exec.AddLoRA), which the model's forward pass holds.
	LoRA *LoRA
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

// MaxParts is the most matrices one fused product takes: Q, K and V; gate
// and up; a token's experts' gate-and-up pairs (MatMulGatedParts, half as
// many pairs) or down projections.
const MaxParts = 16

// A Part is one matrix's share of a fused product (Exec.MatMulParts): rows
// [Row0, Row0+Rows) of M times each of the product's tokens, whose
// activation rows (M.XRowBytes bytes each, in M.VecType) X holds one after
// the other. Row r of token t lands in Out[t*Stride + r-Row0]. Rows 0 means
// every row from Row0 on.
type Part struct {
	M          *Matrix
	Row0, Rows int
	X          []byte
	Out        []float32
	Stride     int
}

// mmPart is a Part with its work items laid out.
type mmPart struct {
	Part
	chunkRows int // rows per work item, a multiple of the tile height
	nChunks   int // row chunks per token group
	group     int // tokens per group
	first     int // index of the part's first work item
	items     int // groups × row chunks
}

// matmulTask is one dispatch of a fused product: work items over the rows
// of every part, each running its own matrix's tile kernel, and an
// optional epilogue each item applies to the outputs it just wrote.
type matmulTask struct {
	parts  [MaxParts]mmPart
	np     int
	nTok   int
	nItems int

	// gated: parts[2i] is a gate and parts[2i+1] an up projection of as
	// many rows, for every pair; an item computes the same rows of a
	// pair's both, then act on them.
	gated bool
	act   func(g, u []float32)
	// acc, when set, receives the product: acc[t*accStride+r] += out (a
	// residual connection), after each item's rows are computed.
	acc       []float32
	accStride int

	// taken counts the items taken from the front (low 32 bits) and from
	// the back (high 32 bits).
	taken atomic.Uint64
}

// plan lays out the work items of the product on threads threads.
func (k *matmulTask) plan(threads int) {
	total := 0
	for i := range k.np {
		pt := &k.parts[i]
		if pt.Rows == 0 {
			pt.Rows = pt.M.Rows - pt.Row0
		}
		total += pt.Rows
	}
	// Rows per chunk: about chunksPerThread items per thread over all the
	// rows (a gated item covers its rows in both halves).
	per := threads * chunksPerThread
	if k.gated {
		per *= 2
	}
	c := min(max(total/per, minChunkRows), maxChunkRows)
	k.nItems = 0
	if k.gated {
		// A pair's halves split at the same rows, whole tiles of either;
		// the gate's items stand for both.
		for i := 0; i < k.np; i += 2 {
			gt, up := &k.parts[i], &k.parts[i+1]
			tr := lcm(gt.M.tileRows, up.M.tileRows)
			gt.chunkRows = max(tr, (c+tr-1)/tr*tr)
			up.chunkRows = gt.chunkRows
			gt.plan(k.nTok, gt.M.XRowBytes, k.nItems)
			up.group = gt.group
			k.nItems += gt.items
		}
		return
	}
	for i := range k.np {
		pt := &k.parts[i]
		tr := pt.M.tileRows
		pt.chunkRows = max(tr, (c+tr-1)/tr*tr)
		pt.plan(k.nTok, pt.M.XRowBytes, k.nItems)
		k.nItems += pt.items
	}
}

// check panics, on the calling goroutine rather than in a worker, when a
// part's rows or buffers do not fit: a bug in the caller, which holds the
// shapes fixed from load on.
func (k *matmulTask) check() {
	for i := range k.np {
		pt := &k.parts[i]
		m := pt.M
		switch {
		case pt.Row0 < 0 || pt.Rows < 0 || pt.Row0+pt.Rows > m.Rows:
			panic(fmt.Sprintf("ops: product of %q: rows [%d, %d) of %d", m.T.Name, pt.Row0, pt.Row0+pt.Rows, m.Rows))
		case len(pt.X) < k.nTok*m.XRowBytes:
			panic(fmt.Sprintf("ops: product of %q: %d activation bytes for %d tokens of %d", m.T.Name, len(pt.X), k.nTok, m.XRowBytes))
		case k.nTok > 0 && (len(pt.Out) < (k.nTok-1)*pt.Stride+pt.Rows || k.nTok > 1 && pt.Stride < pt.Rows):
			panic(fmt.Sprintf("ops: product of %q: output of %d floats, stride %d, for %d tokens of %d rows", m.T.Name, len(pt.Out), pt.Stride, k.nTok, pt.Rows))
		case m.X8() && (pt.Row0%8 != 0 || pt.Rows%8 != 0):
			panic(fmt.Sprintf("ops: product of %q: rows [%d, %d) of a matrix in the X8 layout, which multiplies whole groups of 8", m.T.Name, pt.Row0, pt.Row0+pt.Rows))
		case k.acc != nil && k.nTok > 0 && (len(k.acc) < (k.nTok-1)*k.accStride+pt.Rows || k.nTok > 1 && k.accStride < pt.Rows):
			panic(fmt.Sprintf("ops: product of %q: residual of %d floats, stride %d, for %d tokens of %d rows", m.T.Name, len(k.acc), k.accStride, k.nTok, pt.Rows))
		}
	}
}

// plan splits the part into groups of tokens whose activations (xrb bytes
// a token) fit in groupBytes, each in chunks of chunkRows, numbered from
// first.
func (pt *mmPart) plan(nTok, xrb, first int) {
	pt.nChunks = (pt.Rows + pt.chunkRows - 1) / pt.chunkRows
	pt.group = nTok
	if nTok > 1 {
		// Groups of equal size, in whole tiles, of at most groupBytes.
		tc := pt.M.tileCols
		most := max(tc, groupBytes/max(xrb, 1)/tc*tc)
		groups := (nTok + most - 1) / most
		pt.group = ((nTok+groups-1)/groups + tc - 1) / tc * tc
	}
	pt.first = first
	pt.items = (nTok + pt.group - 1) / pt.group * pt.nChunks
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
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
		step := 1
		if k.gated {
			step = 2 // a gate stands for its pair
		}
		j := 0
		for j+step < k.np && i >= k.parts[j+step].first {
			j += step
		}
		pt := &k.parts[j]
		i -= pt.first
		g, c := i/pt.nChunks, i%pt.nChunks
		r0 := c * pt.chunkRows
		r1 := min(pt.Rows, r0+pt.chunkRows)
		t0 := g * pt.group
		t1 := min(k.nTok, t0+pt.group)
		if !k.gated {
			k.run(pt, r0, r1, t0, t1)
			finish(&pt.Part, nil, nil, k.acc, k.accStride, r0, r1, t0, t1)
			continue
		}
		gt, up := pt, &k.parts[j+1]
		k.run(gt, r0, r1, t0, t1)
		k.run(up, r0, r1, t0, t1)
		finish(&gt.Part, &up.Part, k.act, nil, 0, r0, r1, t0, t1)
	}
}

// finish applies a fused product's epilogue to rows [r0, r1) of tokens
// [t0, t1), once they are computed: with act, act(gate, up) on them
// (MatMulGated); with acc, gate's rows added to acc (MatMulAdd); with
// neither, nothing.
func finish(gate, up *Part, act func(g, u []float32), acc []float32, accStride, r0, r1, t0, t1 int) {
	for t := t0; t < t1; t++ {
		g := gate.Out[t*gate.Stride+r0 : t*gate.Stride+r1]
		switch {
		case act != nil:
			act(g, up.Out[t*up.Stride+r0:t*up.Stride+r1])
		case acc != nil:
			addTo(acc[t*accStride+r0:t*accStride+r1], g)
		}
	}
}

// addTo adds b to a element-wise: Add, kept here so that the epilogue's
// arithmetic is visibly the same as the unfused residual add.
func addTo(a, b []float32) {
	b = b[:len(a)]
	for i := range a {
		a[i] += b[i]
	}
}

// run multiplies rows [r0, r1) of the part (counted from its Row0) by
// tokens [t0, t1): tile by tile of rows, each times every token, so that a
// tile's weights stay in the L1 cache while the tokens pass over them.
func (k *matmulTask) run(pt *mmPart, r0, r1, t0, t1 int) {
	m := pt.M
	if m.X8() {
		runX8(pt, r0, r1, t0, t1)
		return
	}
	rb := m.T.RowBytes()
	w := m.T.Data[pt.Row0*rb:]
	xrb := m.XRowBytes
	tile, tr, tc := m.tile, m.tileRows, m.tileCols
	n := m.Cols
	if t1-t0 == 1 {
		x := pt.X[t0*xrb : (t0+1)*xrb]
		out := pt.Out[t0*pt.Stride:]
		for r := r0; r < r1; r += tr {
			tile(n, w[r*rb:], rb, min(tr, r1-r), x, xrb, 1, out[r:], pt.Stride)
		}
		return
	}
	for r := r0; r < r1; r += tr {
		rows := min(tr, r1-r)
		wr := w[r*rb:]
		for t := t0; t < t1; t += tc {
			cols := min(tc, t1-t)
			tile(n, wr, rb, rows, pt.X[t*xrb:], xrb, cols, pt.Out[t*pt.Stride+r:], pt.Stride)
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
	ep   epilogueTask
	lt   loraTask
	// loraTiles: each worker's tile of a LoRA correction (loraTask).
	loraTiles []float32
	// gemmMin, when not 0, replaces the batch size from which products
	// take the GEMM (gemmFrom): benchmarks compare the two paths with it.
	gemmMin int

	labels   bool   // label goroutines with the current phase (see Phase)
	phase    *Phase // the current phase, nil while labels are off
	products uint64 // products dispatched, whether or not the pool ran them
}

// NewExec returns an Exec that runs on p. Its phase labels are on when the
// environment says so (ProfileLabelsEnv).
func NewExec(p *Pool) *Exec {
	return &Exec{pool: p, labels: labelsFromEnv(), loraTiles: make([]float32, p.Threads()*loraTileRows*loraTileCols)}
}

// For runs t over [0, n) on the pool like Pool.For, its workers labelled
// with the current phase.
func (e *Exec) For(n, grain int, t Task) { e.pool.run(e.phase, n, grain, t) }

// Products is how many products (MatMul, MatMulAdd, MatMulParts,
// MatMulGated) the Exec has dispatched, counting those small enough to run
// on the caller alone: the number of passes over the weights, which does
// not depend on the kernels' tile sizes the way the pool's job count does.
func (e *Exec) Products() uint64 { return e.products }

// Pool is the pool the Exec runs on.
func (e *Exec) Pool() *Pool { return e.pool }

// MatMul computes, for each of nTok tokens, out[t*outStride+r] = row r of m
// · activation row t, where xq holds nTok activation rows of m.XRowBytes
// bytes in m.VecType (see Quantize).
func (e *Exec) MatMul(m *Matrix, xq []byte, nTok int, out []float32, outStride int) {
	k := &e.mm
	k.parts[0] = mmPart{Part: Part{M: m, X: xq, Out: out, Stride: outStride}}
	k.np, k.nTok = 1, nTok
	e.dispatch()
}

// MatMulAdd is MatMul followed by acc[t*accStride+r] += out[t*outStride+r]
// for every output, in the same dispatch: each work item adds the rows it
// computed, so the residual connection after a projection costs no pass
// of its own. The sums are exactly those of MatMul, then Add.
func (e *Exec) MatMulAdd(m *Matrix, xq []byte, nTok int, out []float32, outStride int, acc []float32, accStride int) {
	k := &e.mm
	k.parts[0] = mmPart{Part: Part{M: m, X: xq, Out: out, Stride: outStride}}
	k.np, k.nTok, k.acc, k.accStride = 1, nTok, acc, accStride
	e.dispatch()
}

// MatMulParts computes every part's product (see Part) for nTok tokens in
// one dispatch: one barrier for all of them, and no worker idle at the end
// of a small matrix while another is still busy with a large one. The
// parts may have different weight types, each running its own kernel; a
// part's X must be in its matrix's VecType. At most MaxParts parts.
func (e *Exec) MatMulParts(parts []Part, nTok int) {
	k := &e.mm
	k.set(parts)
	k.np, k.nTok = len(parts), nTok
	e.dispatch()
}

// MatMulGated computes a gated feed-forward layer's two projections and
// its activation in one dispatch: each work item computes the same rows
// of gate and up for its tokens and then calls act(g, u) on those rows,
// which writes act(g)·u into g (SiLUMul, GELUMul). gate and up must have
// the same number of rows; act must work element by element, since it
// sees the rows in pieces.
func (e *Exec) MatMulGated(gate, up Part, nTok int, act func(g, u []float32)) {
	k := &e.mm
	k.parts[0], k.parts[1] = mmPart{Part: gate}, mmPart{Part: up}
	e.dispatchGated(2, nTok, act)
}

// MatMulGatedParts is MatMulGated for several gate-and-up pairs at once (a
// token's experts): parts holds each pair's gate then its up, at most
// MaxParts of them, and every item of the one dispatch computes rows of
// one pair. Each pair's sums are exactly MatMulGated's.
func (e *Exec) MatMulGatedParts(parts []Part, nTok int, act func(g, u []float32)) {
	if len(parts)%2 != 0 {
		panic("ops: MatMulGatedParts takes gate-and-up pairs") // a programming error: callers hold fixed arrays
	}
	e.mm.set(parts)
	e.dispatchGated(len(parts), nTok, act)
}

// set lays out parts as the product's.
func (k *matmulTask) set(parts []Part) {
	if len(parts) > MaxParts {
		panic("ops: a product of more than MaxParts parts") // a programming error: callers hold fixed arrays
	}
	for i, pt := range parts {
		k.parts[i] = mmPart{Part: pt}
	}
}

// dispatchGated runs the np parts set in e.mm as gate-and-up pairs.
func (e *Exec) dispatchGated(np, nTok int, act func(g, u []float32)) {
	k := &e.mm
	k.np = np // for clear
	for i := 0; i < np; i++ {
		if pt := &k.parts[i]; pt.Rows == 0 {
			pt.Rows = pt.M.Rows - pt.Row0
		}
		if i%2 == 1 && k.parts[i].Rows != k.parts[i-1].Rows {
			k.clear()
			panic("ops: MatMulGated: gate and up differ in rows")
		}
	}
	k.np, k.nTok, k.gated, k.act = np, nTok, true, act
	e.dispatch()
}

// dispatch runs the product set up in e.mm and clears it.
func (e *Exec) dispatch() {
	k := &e.mm
	defer k.clear() // also after a bad shape's panic
	e.products++
	k.plan(e.pool.Threads())
	k.check()
	if e.anyGemm() {
		e.dispatchGemm()
		return
	}
	k.taken.Store(0)
	e.For(min(e.pool.Threads(), k.nItems), 1, k)
}

// anyGemm reports whether a part of the product in e.mm takes its
// matrix's GEMM kernel (useGemm).
func (e *Exec) anyGemm() bool {
	k := &e.mm
	for i := range k.np {
		if e.useGemm(k.parts[i].M, k.nTok) {
			return true
		}
	}
	return false
}

// useGemm reports whether m multiplies nTok tokens with its GEMM kernel.
// An X8 matrix whose kernel has no GEMM (AVX2's Q4_K, whose MatVecN beat
// the GEMM at every batch size) takes MatVecN instead.
func (e *Exec) useGemm(m *Matrix, nTok int) bool {
	return m.gemm != nil && (!m.X8() || m.x8.Mul != nil) && nTok > 1 && nTok >= e.gemmFrom(m)
}

// dispatchGemm runs a planned and checked batch product part by part:
// each part with a GEMM kernel through it (gemm.go), the others by tiles,
// then the epilogue (the residual add, or the gated activation) over the
// tokens. A prefill batch has few products per token, so taking them one
// at a time costs nothing the fused dispatch saves for decode; the sums
// are those of MatMul for each part alone.
func (e *Exec) dispatchGemm() {
	k := &e.mm
	parts, np, nTok := k.parts, k.np, k.nTok
	gated, act, acc, accStride := k.gated, k.act, k.acc, k.accStride
	threads := e.pool.Threads()
	for i := range np {
		pt := parts[i].Part
		if e.useGemm(pt.M, nTok) {
			e.matmulGemm(&pt, nTok)
			continue
		}
		k.clear()
		k.parts[0] = mmPart{Part: pt}
		k.np, k.nTok = 1, nTok
		k.plan(threads)
		k.taken.Store(0)
		e.For(min(threads, k.nItems), 1, k)
	}
	k.clear()
	switch {
	case gated:
		for i := 0; i < np; i += 2 {
			e.ep = epilogueTask{gate: parts[i].Part, up: parts[i+1].Part, rows: parts[i].Rows, act: act}
			e.For(nTok, 1, &e.ep)
		}
	case acc != nil:
		e.ep = epilogueTask{gate: parts[0].Part, rows: parts[0].Rows, acc: acc, accStride: accStride}
		e.For(nTok, 1, &e.ep)
	}
	e.ep = epilogueTask{}
}

// epilogueTask runs a batch product's epilogue (finish) over all its rows
// for tokens [lo, hi), after dispatchGemm computed every part.
type epilogueTask struct {
	gate, up  Part
	rows      int
	act       func(g, u []float32)
	acc       []float32
	accStride int
}

func (k *epilogueTask) Do(_, lo, hi int) {
	finish(&k.gate, &k.up, k.act, k.acc, k.accStride, 0, k.rows, lo, hi)
}

// clear drops the product's references to the caller's buffers and its
// epilogue, so that the next product starts from nothing.
func (k *matmulTask) clear() {
	clear(k.parts[:k.np])
	k.np, k.nTok, k.nItems = 0, 0, 0
	k.gated, k.act, k.acc = false, nil, nil
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
		e.For(nTok, 1, &e.qt)
	}
	e.qt = quantTask{}
	return dst[:n], nil
}
