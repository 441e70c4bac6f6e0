package ops

import (
	"math"
	"sync/atomic"

	"github.com/lowmem/llm/quant"
)

// LoRAScale is the scale a user gives one adapter. It is read once per
// product by every session and may be changed between passes (a server's
// POST /lora-adapters), hence atomic.
type LoRAScale struct{ bits atomic.Uint32 }

// Load returns the scale.
func (s *LoRAScale) Load() float32 { return math.Float32frombits(s.bits.Load()) }

// Store sets the scale.
func (s *LoRAScale) Store(v float32) { s.bits.Store(math.Float32bits(v)) }

// LoRA is one adapter's low-rank correction of a matrix: its products gain
// Scale·Factor·B·(A·x). A holds Rank rows of the matrix's Cols floats
// (the file's lora_a), B the matrix's Rows rows of Rank floats (lora_b),
// both widened to float32 at load. Next is the following adapter's
// correction of the same matrix: corrections add up, as in llama.cpp's
// build_lora_mm.
type LoRA struct {
	A, B   []float32
	Rank   int
	Factor float32 // alpha/rank, or 1 when the adapter gives no alpha
	Scale  *LoRAScale
	ID     int // the adapter's index among the model's, in a session's own scales
	Next   *LoRA
}

// scale is l's factor times its scale: scales[l.ID] when a session has
// scales of its own (scales not nil), else the adapter's.
func (l *LoRA) scale(scales []float32) float32 {
	if scales != nil {
		return scales[l.ID] * l.Factor
	}
	return l.Scale.Load() * l.Factor
}

// LoRARank is the widest rank of m's corrections (0 without any): the
// floats per token the scratch of AddLoRA takes.
func (m *Matrix) LoRARank() int {
	r := 0
	for l := m.LoRA; l != nil; l = l.Next {
		r = max(r, l.Rank)
	}
	return r
}

// loraWork is the multiply-adds of one work item of a correction's
// steps: below it a step runs on the caller, whose dispatch would cost
// more than the work (a decode step's B·u is rows × rank, 32 K for a
// 2048-row matrix at rank 16).
const loraWork = 1 << 16

// loraFor runs k over n units of per multiply-adds each: on the caller
// when they are few, else in the pool in items of about loraWork.
func (e *Exec) loraFor(k *loraTask, n, per int) {
	if n*per <= loraWork {
		k.Do(0, 0, n)
		return
	}
	e.For(n, max(1, loraWork/max(per, 1)), k)
}

// loraTask runs one correction over a batch in two steps: u = s·A·x for
// every token (units: token × rank row), then out += B·u (units: token ×
// row).
type loraTask struct {
	l          *LoRA
	s          float32
	x          []float32
	xStride    int
	n          int // tokens
	out        []float32
	outStride  int
	row0, rows int
	u          []float32
	second     bool
	// tiles holds each worker's tile of B·u (loraTileRows × loraTileCols
	// floats a worker), added to out from there: the tile kernel sets its
	// results, and out holds the products already.
	tiles []float32
}

// loraTile is the float32 tile product (quant.TileF32), which B·u takes: a call
// a tile of rows and tokens rather than a dot product a row and token,
// whose call cost more than its rank-wide work (a fifth of a prefill's
// CPU with a rank-16 adapter on Llama-3.1-8B's shape, measured).
var loraTile, loraTileRows, loraTileCols = quant.TileF32()

func (k *loraTask) Do(w, lo, hi int) {
	l, R := k.l, k.l.Rank
	if !k.second {
		cols := len(l.A) / R
		for i := lo; i < hi; i++ {
			t, j := i/R, i%R
			x := k.x[t*k.xStride : t*k.xStride+cols]
			k.u[t*R+j] = k.s * quant.DotF32(l.A[j*cols:(j+1)*cols], x)
		}
		return
	}
	// Units are tiles of loraTileRows rows, for every token.
	tr, tc := loraTileRows, loraTileCols
	tile := k.tiles[w*tr*tc : (w+1)*tr*tc]
	for g := lo; g < hi; g++ {
		r0 := g * tr
		nr := min(tr, k.rows-r0)
		b := l.B[(k.row0+r0)*R : (k.row0+r0+nr)*R]
		for t0 := 0; t0 < k.n; t0 += tc {
			nc := min(tc, k.n-t0)
			loraTile(R, b, R, nr, k.u[t0*R:(t0+nc)*R], R, nc, tile, tr)
			for c := range nc {
				o := k.out[(t0+c)*k.outStride+r0:]
				for r, v := range tile[c*tr : c*tr+nr] {
					o[r] += v
				}
			}
		}
	}
}

// AddLoRA adds m's corrections of rows [row0, row0+rows) to the products
// of n tokens already in out: out[t*outStride+r] += Σ s·B_(row0+r)·(A·x_t)
// over m's adapters whose scale is not 0, with x_t the float activations
// at x[t*xStride:]. u is the scratch, at least n × m.LoRARank() floats;
// scales, when not nil, replaces the adapters' scales (by LoRA.ID).
// An adapter of scale 0 adds nothing at all, so the products stay the
// base model's bit for bit.
func (e *Exec) AddLoRA(m *Matrix, row0, rows int, x []float32, xStride, n int, out []float32, outStride int, u, scales []float32) {
	k := &e.lt
	for l := m.LoRA; l != nil; l = l.Next {
		s := l.scale(scales)
		if s == 0 {
			continue
		}
		*k = loraTask{l: l, s: s, x: x, xStride: xStride, n: n, out: out, outStride: outStride, row0: row0, rows: rows, u: u, tiles: e.loraTiles}
		e.loraFor(k, n*l.Rank, len(l.A)/l.Rank)
		k.second = true
		e.loraFor(k, (rows+loraTileRows-1)/loraTileRows, loraTileRows*n*l.Rank)
	}
	*k = loraTask{}
}

// AddEmbedLoRA adds the corrections l (token_embd's, a chain) to the
// embedding rows x (E floats a token) of tokens: row t gains
// s·B·A_tok, where lora_a holds a row of Rank floats per token and lora_b
// a row of Rank floats per embedding element (llama.cpp's build_inp_embd);
// scales as AddLoRA's.
func AddEmbedLoRA(l *LoRA, x []float32, tokens []int32, E int, scales []float32) {
	for ; l != nil; l = l.Next {
		s := l.scale(scales)
		if s == 0 {
			continue
		}
		R := l.Rank
		for t, tok := range tokens {
			a := l.A[int(tok)*R : (int(tok)+1)*R]
			row := x[t*E : (t+1)*E]
			for e := range row {
				row[e] += s * quant.DotF32(l.B[e*R:(e+1)*R], a)
			}
		}
	}
}
