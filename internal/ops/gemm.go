package ops

import (
	"sync/atomic"

	"github.com/lowmem/llm/quant"
)

// Prefill products of types with a GEMM kernel (quant.Gemm) pack the
// quantized activations of a group of tokens into panels of
// quant.GemmCols columns, once per group, then multiply every row by
// every panel: four rows at a time, so their weights stay in the L1 cache
// while the group's panels, which fit in the L2 cache, pass over them.

// gemmFrom returns the smallest batch that m multiplies with its GEMM
// kernel (e.gemmMin instead when set). The kernel computes a panel of 4,
// 8, 16 or 32 columns, the narrowest that holds the tokens, so its cost
// grows in steps while the tiles' (the X8 decode kernel's, token by token)
// grows with every token. The thresholds are where the GEMM was ahead
// both in BenchmarkSmallBatch (one matrix) and in examples/bench's prompt
// test on TinyLlama (every product of a forward pass) on a Zen 4 with
// AVX-512 VNNI, two threads: Q4_0 and Q8_0 from 12 tokens; the k-quants,
// whose GEMM unpacks and broadcasts a row's sub-block scales per block
// whatever the columns, from 16, as before (Q4_K's row layout was ahead at
// 12 in the one but far behind in the other).
//
// An X8 matrix whose kernel takes several tokens at once (MatVecN) is
// cheaper below the GEMM than the tiles are, so its thresholds are higher
// (examples/bench -p P -n 0 on TinyLlama, the GEMM forced on and off, at
// 05064d7): Q4_0's GEMM was level at 24 tokens and ahead from 32, Q8_0's
// level from 16 to 32. The k-quants' X8 GEMM computes eight rows per
// vector, eight columns a pass, in the decode kernels' order (a column's
// results are MatVec's bit for bit); on one thread (quant's
// BenchmarkX8Prefill, CPU time, a shared Zen 4) Q4_K's ran level with
// its four-token MatVecN at 8 to 128 tokens (both about 125 GMAC/s, what
// VPDPBUSD's throughput leaves), Q5_K's at 1.25-1.4x and Q6_K's at
// 1.1x their two-token MatVecN from 8 tokens; in the forward pass
// (examples/bench -profile, matmul CPU time) the GEMM took 0.89 s
// against 1.02 s on Q4_K_M at 32 tokens and 15.6 against 16.7 at 512,
// and on Q5_K_M 0.57 against 0.69 at 16, 1.00 against 1.41 at 32. Q4_K
// takes it from 32, Q5_K and Q6_K from 8 (below, a pass's eight columns
// are mostly empty).
//
// The ternary types (no X8 layout; below the GEMM, the row dot product
// token by token) take it from 8 tokens (TQ2_0) and 4 (TQ1_0, whose dot
// product decodes its base-3 codes per token): in BenchmarkSmallBatch
// TQ2_0's GEMM was level at 6 tokens and 1.4× at 8, TQ1_0's 1.1× at 3 and
// 1.45× at 4; on BitNet b1.58 2B (examples/bench, the threshold at 2
// against off, an AVX-512 VNNI EPYC, two threads) TQ2_0's was level at 6
// (64 against 60 tok/s) and ahead at 8 (84 against 66), TQ1_0's level at
// 3 (30 against 29) and ahead at 4 (41 against 30). Their AVX2 GEMMs
// (LLM_CPU=avx2) were ahead at the same counts: BenchmarkSmallBatch 1.1×
// (TQ2_0, 8 tokens) and 1.3× (TQ1_0, 4), examples/bench 64 against 56 and
// 33 against 26 tok/s.
func (e *Exec) gemmFrom(m *Matrix) int {
	if e.gemmMin != 0 {
		return e.gemmMin
	}
	multi := m.X8() && m.x8.MatVecN != nil
	switch m.T.Type {
	case quant.Q4_0:
		if multi {
			return 24
		}
		return 12
	case quant.Q8_0:
		if multi {
			return 16
		}
		return 12
	case quant.Q4_K:
		if multi {
			return 32
		}
	case quant.Q5_K, quant.Q6_K:
		if multi {
			return 8
		}
	case quant.TQ2_0:
		return 8
	case quant.TQ1_0:
		return 4
	}
	return 16
}

// gemmRows is the rows of one kernel call.
const gemmRows = 4

type gemmTask struct {
	m         *Matrix
	w         []byte // the weights from the part's first row
	rows      int
	out       []float32
	outStride int
	// The group: its first token, token count, panels and their bytes.
	t0, nTok int
	p        []byte
	pb       int

	chunkRows, nChunks int
	taken              atomic.Uint64
}

// Do takes row chunks, front to back for worker 0 and back to front for
// the others, as matmulTask does.
func (k *gemmTask) Do(w, _, _ int) {
	m := k.m
	rb := m.T.RowBytes()
	panels := (k.nTok + quant.GemmCols - 1) / quant.GemmCols
	for {
		v := k.taken.Load()
		front, back := int(v&0xFFFFFFFF), int(v>>32)
		if front+back >= k.nChunks {
			return
		}
		var i int
		if w == 0 {
			if !k.taken.CompareAndSwap(v, v+1) {
				continue
			}
			i = front
		} else {
			if !k.taken.CompareAndSwap(v, v+1<<32) {
				continue
			}
			i = k.nChunks - 1 - back
		}
		r1 := min(k.rows, (i+1)*k.chunkRows)
		if m.X8() {
			k.mulX8(i*k.chunkRows, r1, panels)
			continue
		}
		for r := i * k.chunkRows; r < r1; r += gemmRows {
			rows := min(gemmRows, r1-r)
			for j := 0; j < panels; j++ {
				t := k.t0 + j*quant.GemmCols
				cols := min(quant.GemmCols, k.t0+k.nTok-t)
				m.gemm.Mul(m.Cols, k.w[r*rb:], rb, rows, k.p[j*k.pb:(j+1)*k.pb], cols, k.out[t*k.outStride+r:], k.outStride)
			}
		}
	}
}

// packTask packs panel j of the group from the activations xq.
type packTask struct {
	m    *Matrix
	xq   []byte
	t0   int
	nTok int
	p    []byte
	pb   int
}

func (k *packTask) Do(_, lo, hi int) {
	xrb := k.m.XRowBytes
	for j := lo; j < hi; j++ {
		t := k.t0 + j*quant.GemmCols
		cols := min(quant.GemmCols, k.t0+k.nTok-t)
		k.m.gemm.Pack(k.m.Cols, k.xq[t*xrb:], xrb, cols, k.p[j*k.pb:(j+1)*k.pb])
	}
}

// matmulGemm computes a planned part's product (its Rows filled in by
// matmulTask.plan) for nTok tokens with its matrix's GEMM kernel.
func (e *Exec) matmulGemm(pt *Part, nTok int) {
	m, xq, out, outStride := pt.M, pt.X, pt.Out, pt.Stride
	rowsN := pt.Rows
	pb := m.gemm.PanelBytes(m.Cols)
	need := quant.GemmScratchBytes(m.XRowBytes)
	if len(e.pack) < need {
		// Grown once per Exec to the widest matrix; the memory plan
		// counts GemmScratchBytes of the widest activation row.
		e.pack = make([]byte, need)
	}
	perGroup := max(1, len(e.pack)/pb) * quant.GemmCols
	threads := e.pool.Threads()
	chunk := rowsN / (threads * chunksPerThread)
	chunk = min(max(chunk, minChunkRows), maxChunkRows)
	step := gemmRows
	if m.X8() {
		step = 8 // whole groups
	}
	chunk = (chunk + step - 1) / step * step
	for t0 := 0; t0 < nTok; t0 += perGroup {
		n := min(perGroup, nTok-t0)
		panels := (n + quant.GemmCols - 1) / quant.GemmCols
		e.pk = packTask{m: m, xq: xq, t0: t0, nTok: n, p: e.pack, pb: pb}
		e.For(panels, 1, &e.pk)
		e.gt.m, e.gt.out, e.gt.outStride = m, out, outStride
		e.gt.w, e.gt.rows = m.weights()[pt.Row0*m.rowBytes():], rowsN
		e.gt.t0, e.gt.nTok, e.gt.p, e.gt.pb = t0, n, e.pack, pb
		e.gt.chunkRows, e.gt.nChunks = chunk, (rowsN+chunk-1)/chunk
		e.gt.taken.Store(0)
		e.For(min(threads, e.gt.nChunks), 1, &e.gt)
	}
	e.pk = packTask{}
	e.gt.m, e.gt.w, e.gt.out, e.gt.p = nil, nil, nil, nil
}
