package ops

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/tensor"
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
// Scale·Factor·B·(A·x). A holds Rank rows of the matrix's Cols elements
// (the file's lora_a), B the matrix's Rows rows of Rank elements (lora_b),
// each in the type LoRAType gives for its file's (NewLoRAFactor). Next is
// the following adapter's correction of the same matrix: corrections add
// up, as in llama.cpp's build_lora_mm.
//
// token_embd's correction (AddEmbedLoRA) holds its factors the file's
// way round: A a row of Rank elements per token, B one per embedding
// element.
type LoRA struct {
	A, B   *Matrix
	Rank   int
	Factor float32 // alpha/rank, or 1 when the adapter gives no alpha
	Scale  *LoRAScale
	ID     int // the adapter's index among the model's, in a session's own scales
	Next   *LoRA
}

// LoRAType is the type a LoRA factor stored as t is held and multiplied
// in: t itself where quant multiplies rows of t (F32, F16, BF16, Q8_0 and
// the other quantized types), so that an adapter takes in memory what it
// takes in its file and its products read no more; F32, widened at load,
// for the rest.
func LoRAType(t quant.Type) quant.Type {
	if f, _, _ := quant.Tile(t); f != nil {
		return t
	}
	return quant.F32
}

// NewLoRAFactor prepares a LoRA factor named name: rows rows of cols
// elements of type t in data, which must hold exactly them, held as
// LoRAType(t) (data itself when that is t). It refuses a factor with an
// element that is not finite, which would make every product it touches
// NaN.
func NewLoRAFactor(name string, t quant.Type, cols, rows int, data []byte) (*Matrix, error) {
	rb, err := t.RowBytes(int64(cols))
	if err != nil || int64(len(data)) != rb*int64(rows) {
		return nil, fmt.Errorf("ops: LoRA factor %q: %d rows of %d %v elements in %d bytes (%v)", name, rows, cols, t, len(data), err)
	}
	ht := LoRAType(t)
	held := data
	if ht != t {
		held = make([]byte, 4*cols*rows)
	}
	row := make([]float32, cols)
	for r := range rows {
		if err := quant.Dequantize(t, row, data[r*int(rb):(r+1)*int(rb)]); err != nil {
			return nil, fmt.Errorf("ops: LoRA factor %q: %w", name, err)
		}
		for _, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("ops: LoRA factor %q holds a value that is not finite", name)
			}
		}
		if ht != t {
			_ = quant.QuantizeRow(quant.F32, held[r*4*cols:(r+1)*4*cols], row) // sized above: it cannot fail
		}
	}
	tt, err := tensor.View(name, ht, []int{cols, rows}, held)
	if err != nil {
		return nil, fmt.Errorf("ops: LoRA factor %q: %w", name, err)
	}
	return NewMatrix(tt)
}

// scale is l's factor times its scale: scales[l.ID] when a session has
// scales of its own (scales not nil), else the adapter's.
func (l *LoRA) scale(scales []float32) float32 {
	if scales != nil {
		return scales[l.ID] * l.Factor
	}
	return l.Scale.Load() * l.Factor
}

// LoRARank is the widest rank of m's corrections (0 without any).
func (m *Matrix) LoRARank() int {
	r := 0
	for l := m.LoRA; l != nil; l = l.Next {
		r = max(r, l.Rank)
	}
	return r
}

// LoRAScratch is a session's scratch for its adapters' products: the
// rank-wide products u = A·x, u converted to lora_b's activation type,
// and the activations converted to lora_a's, loraChunk tokens at a time
// (a batch's whole would take more than the factors save: 14 MB for 512
// tokens of Llama-3.1-8B's feed-forward width in F16), kept for the next
// matrix of the same input when they are all of it (q, k and v then take
// one conversion).
type LoRAScratch struct {
	u  []float32
	uq []byte
	x  []byte
	// xGen and xType say what x holds (LoRAInput.Gen; 0: nothing that
	// can be reused), xq the bytes of it taken.
	xGen  uint64
	xType quant.Type
	xq    []byte
}

// loraChunk is the most tokens whose activations a LoRAScratch holds
// converted at once.
const loraChunk = 64

// NewLoRAScratch returns the scratch of batch tokens for corrections of rank
// at most rank whose lora_a and lora_b take activation rows of at most
// xRow and uRow bytes (their Matrix.XRowBytes): LoRAScratchBytes of them.
func NewLoRAScratch(batch, rank, xRow, uRow int) LoRAScratch {
	return LoRAScratch{u: make([]float32, batch*rank), uq: make([]byte, batch*uRow), x: make([]byte, min(batch, loraChunk)*xRow)}
}

// LoRAScratchBytes is the memory NewLoRAScratch takes for these sizes.
func LoRAScratchBytes(batch, rank, xRow, uRow int) int {
	return batch*(4*rank+uRow) + min(batch, loraChunk)*xRow
}

// LoRAInput is the activations a correction multiplies: N rows of the
// matrix's Cols floats in F. Gen, when not 0, names their content (a
// value no other content had): their conversion for a lora_a stays in the
// LoRAScratch for the next product of the same Gen. Q, when not nil, is them
// converted to QType already (the base product's), taken when a lora_a
// multiplies that type.
type LoRAInput struct {
	F     []float32
	N     int
	Gen   uint64
	Q     []byte
	QType quant.Type
}

// nativeF32 is whether float32 slices lie in memory as F32 rows do
// (little-endian), so that F32 factors multiply the activations in place.
var nativeF32 = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// f32Rows is x's memory as F32 rows (nativeF32): F32 factors multiply
// the floats in place, with no copy and no scratch.
func f32Rows(x []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 4*len(x))
}

// LoRARowBytes is the scratch a row of n activations takes converted
// for a LoRA factor stored as t (NewLoRAScratch's xRow and uRow), 0 where
// the factor multiplies the floats in place, or for a size t cannot hold
// (which NewLoRAFactor refuses).
func LoRARowBytes(t quant.Type, n int64) int {
	vt := LoRAType(t).VecDotType()
	rb, err := vt.RowBytes(n)
	if err != nil || vt == quant.F32 && nativeF32 {
		return 0
	}
	return int(rb)
}

// converted returns tokens [t0, t0+n) of in converted to A's activation
// type.
func (e *Exec) converted(in *LoRAInput, A *Matrix, buf *LoRAScratch, t0, n int) []byte {
	rb := A.XRowBytes
	whole := t0 == 0 && n == in.N
	switch {
	case in.Q != nil && in.QType == A.VecType:
		return in.Q[t0*rb : (t0+n)*rb]
	case A.VecType == quant.F32 && nativeF32:
		return f32Rows(in.F[t0*A.Cols : (t0+n)*A.Cols])
	case whole && in.Gen != 0 && buf.xGen == in.Gen && buf.xType == A.VecType:
		return buf.xq
	}
	xq, err := e.Quantize(A.VecType, in.F[t0*A.Cols:], A.Cols, n, buf.x)
	if err != nil {
		panic("ops: AddLoRA: " + err.Error()) // a programming error: NewLoRAScratch sized the scratch
	}
	buf.xGen, buf.xType, buf.xq = 0, A.VecType, xq
	if whole {
		buf.xGen = in.Gen
	}
	return xq
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

// loraTileRows and loraTileCols bound the tile of B·u a worker computes
// at once (its kernel's own bound may be smaller): the size of each
// worker's scratch tile in the Exec.
const loraTileRows, loraTileCols = 64, 8

// loraTask runs one correction over a batch in two steps: u = A·x for
// every token (units: token × rank row, of a chunk of tokens at a time),
// then out += s·B·u (units: tiles of rows, for every token).
type loraTask struct {
	l          *LoRA
	s          float32
	xq         []byte // the first step's activations, in A's activation type
	n          int    // tokens
	out        []float32
	outStride  int
	row0, rows int
	u          []float32
	uq         []byte // u in B's activation type
	tr, tc     int    // the tile of B·u
	second     bool
	// tiles holds each worker's tile of B·u (loraTileRows × loraTileCols
	// floats a worker), added to out from there: the tile kernel sets its
	// results, and out holds the products already.
	tiles []float32
}

// B·u takes B's tile kernel: a call a tile of rows and tokens rather than
// a dot product a row and token, whose call cost more than its rank-wide
// work (a fifth of a prefill's CPU with a rank-16 adapter on
// Llama-3.1-8B's shape, measured with float32 factors).
func (k *loraTask) Do(w, lo, hi int) {
	l, R := k.l, k.l.Rank
	if !k.second {
		A := l.A
		arb, xrb := A.T.RowBytes(), A.XRowBytes
		for i := lo; i < hi; i++ {
			t, j := i/R, i%R
			k.u[i] = A.Dot(A.Cols, A.T.Data[j*arb:(j+1)*arb], k.xq[t*xrb:(t+1)*xrb])
		}
		return
	}
	B := l.B
	brb, urb := B.T.RowBytes(), B.XRowBytes
	tr, tc := k.tr, k.tc
	tile := k.tiles[w*loraTileRows*loraTileCols : (w+1)*loraTileRows*loraTileCols]
	for g := lo; g < hi; g++ {
		r0 := g * tr
		nr := min(tr, k.rows-r0)
		b := B.T.Data[(k.row0+r0)*brb : (k.row0+r0+nr)*brb]
		for t0 := 0; t0 < k.n; t0 += tc {
			nc := min(tc, k.n-t0)
			B.tile(R, b, brb, nr, k.uq[t0*urb:(t0+nc)*urb], urb, nc, tile, tr)
			for c := range nc {
				o := k.out[(t0+c)*k.outStride+r0:]
				for r, v := range tile[c*tr : c*tr+nr] {
					o[r] += k.s * v
				}
			}
		}
	}
}

// AddLoRA adds m's corrections of rows [row0, row0+rows) to the products
// of in's tokens already in out: out[t*outStride+r] += Σ s·B_(row0+r)·(A·x_t)
// over m's adapters whose scale is not 0, s the adapter's scale times its
// factor (scales, when not nil, replaces the adapters' scales, by
// LoRA.ID). buf must be sized for m's corrections and in.N tokens. An
// adapter of scale 0 adds nothing at all, so the products stay the base
// model's bit for bit. As llama.cpp's, the activations are converted to
// lora_a's activation type and A·x to lora_b's (to F16, for F16 factors).
func (e *Exec) AddLoRA(m *Matrix, row0, rows int, in LoRAInput, out []float32, outStride int, buf *LoRAScratch, scales []float32) {
	k := &e.lt
	n := in.N
	for l := m.LoRA; l != nil; l = l.Next {
		s := l.scale(scales)
		if s == 0 {
			continue
		}
		R, B := l.Rank, l.B
		*k = loraTask{l: l, s: s, n: n, out: out, outStride: outStride, row0: row0, rows: rows, tiles: e.loraTiles,
			tr: min(B.tileRows, loraTileRows), tc: min(B.tileCols, loraTileCols)}
		for t0 := 0; t0 < n; t0 += loraChunk {
			nc := min(loraChunk, n-t0)
			k.xq, k.u = e.converted(&in, l.A, buf, t0, nc), buf.u[t0*R:(t0+nc)*R]
			e.loraFor(k, nc*R, l.A.Cols)
		}
		k.u = buf.u[:n*R]
		k.uq = quantizeRows(B.VecType, buf.uq, k.u, R, B.XRowBytes)
		k.second = true
		e.loraFor(k, (rows+k.tr-1)/k.tr, k.tr*n*R)
	}
	*k = loraTask{}
}

// quantizeRows converts the rows of cols floats in x to vt, rb bytes each,
// into dst, on the caller (a batch's rank-wide rows are few floats), and
// returns the bytes written (x's own memory for F32, nativeF32).
func quantizeRows(vt quant.Type, dst []byte, x []float32, cols, rb int) []byte {
	if vt == quant.F32 && nativeF32 {
		return f32Rows(x)
	}
	n := len(x) / cols
	for t := range n {
		// dst is sized by NewLoRAScratch for rows of rb bytes: it cannot fail.
		_ = quant.QuantizeRow(vt, dst[t*rb:(t+1)*rb], x[t*cols:(t+1)*cols])
	}
	return dst[:n*rb]
}

// AddEmbedLoRA adds the corrections l (token_embd's, a chain) to the
// embedding rows x (E floats a token) of tokens: row t gains s·B·A_tok,
// where lora_a holds a row of Rank elements per token and lora_b a row of
// Rank elements per embedding element (llama.cpp's build_inp_embd);
// scales as AddLoRA's, buf sized for the corrections' rank and lora_b.
func AddEmbedLoRA(l *LoRA, x []float32, tokens []int32, E int, scales []float32, buf *LoRAScratch) {
	for ; l != nil; l = l.Next {
		s := l.scale(scales)
		if s == 0 {
			continue
		}
		R, A, B := l.Rank, l.A, l.B
		brb := B.T.RowBytes()
		for t, tok := range tokens {
			a := buf.u[:R]
			// The row's type and length are A's own: it cannot fail.
			_ = quant.Dequantize(A.T.Type, a, A.T.Row(int(tok)))
			aq := quantizeRows(B.VecType, buf.uq, a, R, B.XRowBytes)
			row := x[t*E : (t+1)*E]
			for e := range row {
				row[e] += s * B.Dot(R, B.T.Data[e*brb:(e+1)*brb], aq)
			}
		}
	}
}
