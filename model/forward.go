package model

import (
	"errors"
	"fmt"

	"github.com/lowmem/llm/arena"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/quant"
)

// ErrTokenOutOfRange is returned when a token id is not in the vocabulary.
var ErrTokenOutOfRange = errors.New("token id out of range")

// State is one sequence's mutable state: its KV cache, its scratch arena and
// the task structs the thread pool runs. It is used by one goroutine at a
// time.
type State struct {
	m       *Model
	e       *ops.Exec
	cache   *kv.Cache
	ar      *arena.Arena
	batch   int
	scratch [][]float32 // attention scores, one per worker
	rope    ops.Rope
	attn    attnTask
}

// StateOptions size a State.
type StateOptions struct {
	Batch int     // most tokens per Forward call (prefill chunk)
	Cache kv.Type // KV cache element type
	Cells int     // KV capacity in tokens
	// Initial is how many cells the cache allocates at first (0 = Cells);
	// Grow enlarges it.
	Initial int
}

// KVConfig is the cache configuration a State of this model uses.
func (m *Model) KVConfig(t kv.Type, cells int) kv.Config {
	c := kv.Config{
		Layers: m.Config.Layers, KVHeads: m.HeadsKV, HeadDimK: m.HeadDimK, HeadDimV: m.HeadDimV,
		Cells: cells, Type: t,
	}
	if m.Window > 0 {
		c.Windows = make([]int, m.Config.Layers)
		for il := range c.Windows {
			if m.WindowedLayer(il) {
				c.Windows[il] = m.Window
			}
		}
	}
	return c
}

// allocAlign is the alignment the arena gives every allocation; ScratchBytes
// counts it so the arena never overflows.
const allocAlign = 64

func roundUp(n, a int) int { return (n + a - 1) / a * a }

// ScratchBytes is the arena size a State needs for batches of up to batch
// tokens: every activation buffer of one Forward call.
func (m *Model) ScratchBytes(batch int) int {
	return ScratchBytes(&m.Config, m.maxXRowBytes(), batch)
}

// maxXRowBytes is the widest quantized activation row any matrix takes,
// computed once by New.
func (m *Model) maxXRowBytes() int { return m.maxX }

// ScratchBytes is the arena size for a model of config c whose widest
// quantized activation row takes maxXRowBytes, at batch tokens per step.
// It needs no weights, so a memory plan can use it before loading.
func ScratchBytes(c *Config, maxXRowBytes, batch int) int {
	f := func(n int) int { return roundUp(4*n, allocAlign) }
	qDim, kDim, vDim := c.Heads*c.HeadDimK, c.HeadsKV*c.HeadDimK, c.HeadsKV*c.HeadDimV
	n := 0
	n += 3 * f(batch*c.Embd) // x, xn, tmp
	n += f(batch * qDim)
	n += f(batch * kDim)
	n += f(batch * vDim)
	n += f(batch * c.Heads * c.HeadDimV)         // attention output
	n += 2 * f(batch*c.FFN)                      // gate, up
	n += roundUp(batch*maxXRowBytes, allocAlign) // quantized activations
	n += f(batch * c.RopeDim)                    // rope angles
	return n
}

// NewState makes a State with its own KV cache and arena, running on e.
func (m *Model) NewState(e *ops.Exec, o StateOptions) (*State, error) {
	if o.Batch < 1 {
		o.Batch = 1
	}
	kc := m.KVConfig(o.Cache, o.Cells)
	kc.Initial = o.Initial
	cache, err := kv.New(kc)
	if err != nil {
		return nil, err
	}
	s := &State{
		m: m, e: e, cache: cache, batch: o.Batch,
		ar: arena.New(m.ScratchBytes(o.Batch)),
		rope: ops.Rope{Dim: m.RopeDim, Neox: m.RopeNeox, Base: m.RopeBase,
			FreqScale: 1 / m.RopeScale, Factors: m.RopeFreqs},
	}
	s.scratch = make([][]float32, e.Pool().Threads())
	s.fitScratch()
	return s, nil
}

// Cache is the state's KV cache.
func (s *State) Cache() *kv.Cache { return s.cache }

// Arena is the state's scratch arena.
func (s *State) Arena() *arena.Arena { return s.ar }

// Batch is the most tokens one Forward call accepts.
func (s *State) Batch() int { return s.batch }

type attnTask struct {
	s       *State
	layer   int
	pos0    int
	tokens  int // tokens of this call; unit u is token u%tokens
	q, out  []float32
	qDim    int
	oDim    int
	p       kv.AttnParams
	group   int // query heads per KV head
	parts   int // each KV head's query heads go in this many units
	err     error
	errOnce bool
}

// setUnits prepares the task for n tokens and returns its unit count: one
// unit per token and KV head, or per token and part of a KV head's query
// heads when there would otherwise be fewer units than threads.
func (k *attnTask) setUnits(n, kvHeads, threads int) int {
	k.tokens, k.parts = n, 1
	if u := n * kvHeads; u < threads {
		k.parts = min(k.group, (threads+u-1)/u)
	}
	return n * kvHeads * k.parts
}

// Do attends units [lo,hi). A unit is a range of query heads sharing one
// KV head, which Attend serves in one pass over that head's keys and
// values (the scratch holds a whole group's weights). Units go KV head by
// KV head, all tokens of one before the next, so each thread reads whole
// KV heads and finds them in cache from one token to the next.
func (k *attnTask) Do(w, lo, hi int) {
	sc := k.s.scratch[w]
	for u := lo; u < hi; u++ {
		t, gp := u%k.tokens, u/k.tokens
		g, part := gp/k.parts, gp%k.parts
		h0 := g*k.group + part*k.group/k.parts
		h1 := g*k.group + (part+1)*k.group/k.parts
		err := k.s.cache.Attend(k.layer, k.pos0+t, k.q[t*k.qDim:(t+1)*k.qDim], k.out[t*k.oDim:(t+1)*k.oDim], k.p, h0, h1, sc)
		if err != nil && w == 0 && !k.errOnce {
			k.err, k.errOnce = err, true
		}
	}
}

// Forward runs tokens at positions pos0, pos0+1, … through the model,
// appending their keys and values to the cache, and writes logits to out:
// the last token's (len(out) == Vocab) or every token's, row after row
// (len(out) == len(tokens)×Vocab). len(tokens) must be between 1 and Batch.
func (s *State) Forward(tokens []int32, pos0 int, out []float32) error {
	m := s.m
	c := &m.Config
	n := len(tokens)
	if n == 0 || n > s.batch {
		return fmt.Errorf("model: forward of %d tokens (batch limit %d)", n, s.batch)
	}
	all := len(out) == n*m.Vocab && n > 1
	if !all && len(out) != m.Vocab {
		return fmt.Errorf("model: logits buffer of %d floats for %d tokens of vocabulary %d", len(out), n, m.Vocab)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= m.Vocab {
			return fmt.Errorf("model: token %d not in vocabulary of %d: %w", t, m.Vocab, ErrTokenOutOfRange)
		}
	}
	ar := s.ar
	ar.Reset()
	qDim, kDim, vDim := c.Heads*c.HeadDimK, c.HeadsKV*c.HeadDimK, c.HeadsKV*c.HeadDimV
	oDim := c.Heads * c.HeadDimV
	x := ar.Float32s(n * c.Embd)
	xn := ar.Float32s(n * c.Embd)
	tmp := ar.Float32s(n * c.Embd)
	q := ar.Float32s(n * qDim)
	k := ar.Float32s(n * kDim)
	v := ar.Float32s(n * vDim)
	att := ar.Float32s(n * oDim)
	gate := ar.Float32s(n * c.FFN)
	up := ar.Float32s(n * c.FFN)
	cs := ar.Float32s(n * c.RopeDim)
	xqBuf := ar.Bytes(n * m.maxXRowBytes())

	er := m.Embed
	for t, tok := range tokens {
		if err := quant.Dequantize(er.Type, x[t*c.Embd:(t+1)*c.Embd], er.Row(int(tok))); err != nil {
			return fmt.Errorf("model: embedding of token %d: %w", tok, err)
		}
	}
	if c.EmbedScale != 0 {
		ops.Scale(x, c.EmbedScale)
	}
	for t := 0; t < n; t++ {
		s.rope.Angles(pos0+t, cs[t*c.RopeDim:(t+1)*c.RopeDim])
	}

	e := s.e
	// quantize converts the n rows of src (cols wide) for matrix w, reusing
	// the previous conversion when the same source and type come again.
	var lastSrc *float32
	var lastType quant.Type
	var xq []byte
	quantize := func(w *ops.Matrix, src []float32, cols int) []byte {
		if lastSrc == &src[0] && lastType == w.VecType && xq != nil {
			return xq
		}
		var err error
		xq, err = e.Quantize(w.VecType, src, cols, n, xqBuf)
		if err != nil {
			panic(err) // sizes come from the model itself; unreachable
		}
		lastSrc, lastType = &src[0], w.VecType
		return xq
	}
	invalidate := func() { lastSrc = nil }
	matmul := func(w *ops.Matrix, src []float32, cols int, out []float32, outStride int) {
		e.MatMul(w, quantize(w, src, cols), n, out, outStride)
	}

	lsrc := m.Source // read once: the whole pass uses one source
	if lsrc != nil {
		lsrc.Begin()
		defer lsrc.End()
	}
	for il := range m.Blocks {
		L := &m.Blocks[il]
		if lsrc != nil {
			L = lsrc.Layer(il)
		}
		for t := 0; t < n; t++ {
			ops.RMSNorm(xn[t*c.Embd:(t+1)*c.Embd], x[t*c.Embd:(t+1)*c.Embd], L.AttnNorm, c.RMSEps)
		}
		invalidate()
		matmul(L.Wq, xn, c.Embd, q, qDim)
		matmul(L.Wk, xn, c.Embd, k, kDim)
		matmul(L.Wv, xn, c.Embd, v, vDim)
		for t := 0; t < n; t++ {
			qt, kt, vt := q[t*qDim:(t+1)*qDim], k[t*kDim:(t+1)*kDim], v[t*vDim:(t+1)*vDim]
			if L.Bq != nil {
				ops.Add(qt, L.Bq)
				ops.Add(kt, L.Bk)
				ops.Add(vt, L.Bv)
			}
			ang := cs[t*c.RopeDim : (t+1)*c.RopeDim]
			s.rope.Apply(qt, c.Heads, c.HeadDimK, ang)
			s.rope.Apply(kt, c.HeadsKV, c.HeadDimK, ang)
			if c.QueryScale != 0 {
				ops.Scale(qt, c.QueryScale)
			}
		}
		if err := s.attention(il, pos0, n, q, k, v, att); err != nil {
			return err
		}
		invalidate()
		matmul(L.Wo, att, oDim, tmp, c.Embd)
		if L.PostAttnNorm != nil {
			for t := 0; t < n; t++ {
				r := tmp[t*c.Embd : (t+1)*c.Embd]
				ops.RMSNorm(r, r, L.PostAttnNorm, c.RMSEps)
			}
		}
		ops.Add(x, tmp)

		for t := 0; t < n; t++ {
			ops.RMSNorm(xn[t*c.Embd:(t+1)*c.Embd], x[t*c.Embd:(t+1)*c.Embd], L.FFNNorm, c.RMSEps)
		}
		invalidate()
		matmul(L.Gate, xn, c.Embd, gate, c.FFN)
		matmul(L.Up, xn, c.Embd, up, c.FFN)
		if c.GELU {
			ops.GELUMul(gate, up)
		} else {
			ops.SiLUMul(gate, up)
		}
		invalidate()
		matmul(L.Down, gate, c.FFN, tmp, c.Embd)
		if L.PostFFNNorm != nil {
			for t := 0; t < n; t++ {
				r := tmp[t*c.Embd : (t+1)*c.Embd]
				ops.RMSNorm(r, r, L.PostFFNNorm, c.RMSEps)
			}
		}
		ops.Add(x, tmp)
		if lsrc != nil {
			lsrc.Done(il)
		}
	}

	first := 0
	if !all {
		first = n - 1
	}
	rows := n - first
	src := x[first*c.Embd:]
	for t := 0; t < rows; t++ {
		ops.RMSNorm(xn[t*c.Embd:(t+1)*c.Embd], src[t*c.Embd:(t+1)*c.Embd], m.OutNorm, c.RMSEps)
	}
	xq2, err := e.Quantize(m.Output.VecType, xn, c.Embd, rows, xqBuf)
	if err != nil {
		return err
	}
	e.MatMul(m.Output, xq2, rows, out, m.Vocab)
	if c.FinalSoftcap != 0 {
		ops.Softcap(out, c.FinalSoftcap)
	}
	return nil
}

// attention stores the chunk's keys and values and computes every token's
// attention output.
func (s *State) attention(il, pos0, n int, q, k, v, out []float32) error {
	c := &s.m.Config
	qDim, kDim, vDim := c.Heads*c.HeadDimK, c.HeadsKV*c.HeadDimK, c.HeadsKV*c.HeadDimV
	oDim := c.Heads * c.HeadDimV
	s.attn = attnTask{s: s, layer: il, q: q, out: out, qDim: qDim, oDim: oDim,
		p:     kv.AttnParams{Heads: c.Heads, Scale: c.KQScale, Softcap: c.AttnSoftcap},
		group: c.Heads / c.HeadsKV}
	threads := s.e.Pool().Threads()
	defer func() { s.attn = attnTask{} }()
	if c.WindowedLayer(il) {
		// A windowed layer keeps only its last Window positions, so a token
		// must attend before later tokens of the chunk overwrite its keys.
		for t := 0; t < n; t++ {
			if err := s.cache.Store(il, pos0+t, k[t*kDim:(t+1)*kDim], v[t*vDim:(t+1)*vDim]); err != nil {
				return err
			}
			s.attn.pos0 = pos0 + t
			s.attn.q, s.attn.out = q[t*qDim:(t+1)*qDim], out[t*oDim:(t+1)*oDim]
			s.e.Pool().For(s.attn.setUnits(1, c.HeadsKV, threads), 1, &s.attn)
			if s.attn.err != nil {
				return s.attn.err
			}
		}
		return nil
	}
	for t := 0; t < n; t++ {
		if err := s.cache.Store(il, pos0+t, k[t*kDim:(t+1)*kDim], v[t*vDim:(t+1)*vDim]); err != nil {
			return err
		}
	}
	s.attn.pos0 = pos0
	s.e.Pool().For(s.attn.setUnits(n, c.HeadsKV, threads), 1, &s.attn)
	return s.attn.err
}
