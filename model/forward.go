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
	errs    []error     // attention errors, one per worker
	// rope rotates the full-attention layers, ropeSWA the windowed ones
	// (the same unless the architecture gives them their own base).
	rope, ropeSWA ops.Rope
	twoRopes      bool
	attn          attnTask
	// run is which run of a looped stack (Config.Loops) the pass is in,
	// which picks its blocks' cache layers.
	run int
	// act writes act(g)·u into g: the feed-forward activation (SwiGLU or
	// GeGLU), element by element, so that it can run in the pieces the
	// gate/up product's work items compute.
	act func(g, u []float32)

	// Per pass: the quantized-activation buffers and the expert source.
	gen uint64 // the last generation handed to an acts value
	q   [2]qslot
	qLR int // index of the slot used least recently
	xs  ExpertSource
	moe moeScratch
	mla mlaScratch

	// texts, during a pass of several texts (HiddenPacked), holds the span
	// of the pass's tokens each token's text takes (nil otherwise); textBuf
	// keeps its memory from one such pass to the next.
	texts, textBuf []textSpan
	// wholeStarts, in a non-causal pass, holds the first token of each block
	// of tokens that attend together, then the pass's length.
	wholeStarts []int32

	// conv is the recurrent layers' state (lfm2's short convolutions,
	// granitehybrid's Mamba-2 layers) and its checkpoints
	// (empty without conv layers); ct the task that convolves a pass.
	conv recurrent
	ct   convTask
	// gp holds the projections one mulShared dispatch runs (a block's Q,
	// K and V; a sparse feed-forward's gate and up), a field so that the
	// slice of it does not escape.
	gp [maxShared]projection
	// sc and ss convolve and scan a Mamba-2 layer's pass (granitehybrid).
	sc ssmConvTask
	ss ssmScanTask
	// s1 scans a Mamba-1 layer's pass (jamba).
	s1 mamba1ScanTask
	// dn runs a gated delta-net layer's recurrence (qwen35).
	dn deltaTask
	// wkv runs an RWKV layer's state update.
	wkv wkvTask
	// lora is the scratch of the adapters' products (empty without
	// adapters).
	lora ops.LoRAScratch
	// loraScales, when not nil, are the state's own adapter scales
	// (SetLoRAScales), in loraBuf; nil takes the adapters' own.
	loraScales, loraBuf []float32
}

// StateOptions size a State.
type StateOptions struct {
	Batch int     // most tokens per Forward call (prefill chunk)
	Cache kv.Type // KV cache element type
	Cells int     // KV capacity in tokens: the session's context
	// Initial is how many cells the cache allocates at first (0 = Cells);
	// Grow enlarges it.
	Initial int
	// NoRecent: an Int4 cache keeps no F16 copies of its newest positions
	// (kv.Config.Recent 0 instead of KVConfig's kv.DefaultRecent).
	NoRecent bool
}

// allocAlign is the alignment the arena gives every allocation; ScratchBytes
// counts it so the arena never overflows.
const allocAlign = arena.Align

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
// quantized activation row (of any matrix, experts included) takes
// maxXRowBytes, at batch tokens per step: exactly what Forward takes from
// the arena for a full batch. It needs no weights, so a memory plan can
// use it before loading.
func ScratchBytes(c *Config, maxXRowBytes, batch int) int {
	f := func(n int) int { return roundUp(4*n, allocAlign) }
	b := func(n int) int { return roundUp(n, allocAlign) }
	n := 0
	n += 3 * f(batch*c.Embd)        // x, xn, tmp
	n += f(batch * qkvWidth(c))     // q, k, v (a conv layer's B, C, x)
	n += f(batch * attnOutWidth(c)) // attention output (a conv layer's y)
	if w := guWidth(c); w > 0 {
		n += f(batch * w) // gate, up
	}
	n += 2 * b(batch*maxXRowBytes) // quantized activations
	n += ropeTables(c) * f(batch*c.ropeStride())
	if c.Experts > 0 {
		n += moeScratchBytes(c, maxXRowBytes, batch)
	}
	if c.AltUp > 0 || c.PerLayerEmbd > 0 {
		n += altupScratchBytes(c, batch)
	}
	if c.mla() {
		n += mlaScratchBytes(c, batch)
	}
	if c.DeltaBlocks {
		n += f(c.deltaInProj()) // deltaUngroup's row
	}
	if c.EmbedSkip {
		n += f(batch * c.Embd) // the normalised embeddings every block adds
	}
	return n
}

// guWidth is the floats a token's gate and up outputs take in a pass: the
// dense feed-forward's or the shared expert's, whichever is wider; 0 when
// there are neither.
func guWidth(c *Config) int {
	w := c.SharedFFN
	if c.denseLayers() {
		w = max(w, c.FFN)
	}
	if c.AttnGate {
		w = max(w, (gatedQKVWidth(c)+1)/2) // attn_q's queries and gates, the keys and values
	}
	if c.KDA {
		w = max(w, (c.SSMState+1)/2) // a low-rank pair's first product (kdaInputs)
	}
	return 2 * w
}

// qkvWidth is the floats a token's q, k and v take in a pass, or a conv
// layer's B, C and x (a Mamba-2 layer's z, x, B, C and dt) when wider.
func qkvWidth(c *Config) int {
	w := qkvStride(c)
	switch {
	case c.rwkv():
		w = max(w, rwkvSlots*c.Embd)
	case c.DeltaNet:
		w = max(w, c.deltaInProj())
	case c.mamba():
		w = max(w, c.ssmInProj())
	case c.ConvLayers != nil:
		w = max(w, 3*c.Embd)
	}
	return w
}

// qkvStride is the floats of one token's row of the attention's
// projections: its q, k and v side by side, and after them afmoe's output
// gate (Config.AttnOutGate). Each part is as wide as the widest layer's:
// a layer of fewer query heads (Config.LayerQHeads) leaves the end of its
// query's part unused, so the keys, values and gate are where every
// layer's are.
func qkvStride(c *Config) int {
	w := gateOffset(c)
	if c.AttnOutGate {
		w += c.Heads * c.HeadDimV
	}
	return w
}

// gateOffset is where the output gate starts in a token's row of the
// attention's projections: after its q, k and v.
func gateOffset(c *Config) int {
	return c.Heads*c.HeadDimK + c.HeadsKV*c.HeadDimK + c.HeadsKV*c.HeadDimV
}

// attnOutWidth is the floats a token's attention output takes in a pass,
// or a recurrent layer's output (Embd; a Mamba-2 layer's SSMInner) when
// wider.
func attnOutWidth(c *Config) int {
	w := c.Heads * c.HeadDimV
	switch {
	case c.mamba():
		w = max(w, c.SSMInner)
	case c.RWKV6:
		w = max(w, c.Embd, 5*c.LoRAMix) // the data-dependent mix's tanh rows
	case c.ConvLayers != nil:
		w = max(w, c.Embd)
	}
	return w
}

// ropeTables is how many RoPE angle tables a pass computes: two when the
// windowed layers rotate differently from the others.
func ropeTables(c *Config) int {
	if c.HeadDimSWA > 0 {
		return 2 // Gemma 4: rope_freqs' factors on the global layers only
	}
	if c.Window > 0 && (c.RopeBaseSWA != c.RopeBase || c.RopeScaleSWA != c.RopeScale || c.RopeDimSWA > 0 && c.RopeDimSWA != c.RopeDim) && c.anyWindowed() {
		return 2
	}
	return 1
}

// NewState makes a State with its own KV cache and arena, running on e.
func (m *Model) NewState(e *ops.Exec, o StateOptions) (*State, error) {
	if o.Batch < 1 {
		o.Batch = 1
	}
	cache, err := kv.New(m.StateKVConfig(o))
	if err != nil {
		return nil, err
	}
	// The RoPE frequency factors: Llama 3.1's rope_freqs, or LongRoPE's
	// long factors when the context exceeds the original one, else its
	// short ones, as llama.cpp's get_rope_factors chooses (once for the
	// session, so every cached key was rotated alike).
	factors := m.RopeFreqs
	if factors == nil {
		factors = m.RopeShort
		if o.Cells > m.RopeOrigContext {
			factors = m.RopeLong
		}
	}
	s := &State{
		m: m, e: e, cache: cache, batch: o.Batch,
		ar: arena.New(m.ScratchBytes(o.Batch)),
		rope: ops.Rope{Dim: m.RopeDim, Neox: m.RopeNeox, Base: m.RopeBase,
			FreqScale: 1 / m.RopeScale, Factors: factors, MScale: m.RopeMScale(),
			Sections: m.RopeSections, Interleaved: m.RopeInterleaved},
		twoRopes: ropeTables(&m.Config) == 2,
		conv:     newRecurrent(&m.Config),
	}
	s.act = ops.SiLUMulFast
	switch {
	case m.GELU:
		s.act = ops.GELUMul
	case m.SwiGLUOAI:
		s.act = ops.SwiGLUOAIMul
	case m.ReGLU:
		s.act = ops.ReGLUMul
	case m.GatedReLU2:
		s.act = ops.ReLU2Mul
	}
	if m.YarnExt != 0 {
		s.rope.Ext = m.YarnExt
		s.rope.Corr = ops.YarnCorrDims(m.RopeDim, m.RopeOrigContext, m.RopeBase, m.YarnBetaFast, m.YarnBetaSlow)
	}
	s.ropeSWA = s.rope
	s.ropeSWA.Base, s.ropeSWA.FreqScale = m.RopeBaseSWA, 1/m.RopeScaleSWA
	if m.YarnExt != 0 {
		// Windowed layers rotate without YaRN (OLMo 3, as llama.cpp's
		// olmo2 graph passes them no scaling).
		s.ropeSWA.Ext, s.ropeSWA.MScale = 0, 1
	}
	if m.RopeDimSWA > 0 {
		// Gemma 4's and Laguna's windowed layers rotate their own
		// dimensions, without the global layers' factors.
		s.ropeSWA.Dim, s.ropeSWA.Factors = m.RopeDimSWA, nil
	}
	if m.NonCausal {
		s.wholeStarts = make([]int32, 0, o.Batch+1)
	}
	s.scratch = make([][]float32, e.Pool().Threads())
	s.errs = make([]error, e.Pool().Threads())
	s.moe.held = make([]*Expert, m.ExpertsUsed)
	if m.LoRARank > 0 {
		s.lora = ops.NewLoRAScratch(o.Batch, m.LoRARank, m.loraXRow, m.loraURow)
	}
	s.loraBuf = make([]float32, m.Adapters)
	s.fitScratch()
	return s, nil
}

// Cache is the state's KV cache.
func (s *State) Cache() *kv.Cache { return s.cache }

// Arena is the state's scratch arena.
func (s *State) Arena() *arena.Arena { return s.ar }

// Batch is the most tokens one Forward call accepts.
func (s *State) Batch() int { return s.batch }

// acts is a batch of activation rows, the input of matrix products. An acts
// value is made (State.acts) once its floats are final and they are never
// changed afterwards; code that computes new activations makes a new value.
// Each value has its own generation number, and a quantized copy of it is
// reused only from a buffer last filled from that generation and for the
// same type — so a product can never read another batch's or an earlier
// content's quantization, and there is nothing to invalidate.
type acts struct {
	rows []float32 // n rows of cols floats
	cols int
	n    int
	gen  uint64
}

// qslot is a buffer of quantized activations and what it holds.
type qslot struct {
	buf  []byte     // n × widest row bytes, from the arena
	gen  uint64     // generation of the acts value quantized into it; 0 = none
	typ  quant.Type // its type
	data []byte     // the quantized rows
}

// acts wraps n rows of cols floats as a new activation batch.
func (s *State) acts(rows []float32, cols, n int) acts {
	s.gen++
	return acts{rows: rows[:n*cols], cols: cols, n: n, gen: s.gen}
}

// quantized returns a's rows converted to vt, converting them into the
// least recently used buffer unless a buffer holds them already.
func (s *State) quantized(a acts, vt quant.Type) ([]byte, error) {
	for i := range s.q {
		if q := &s.q[i]; q.gen == a.gen && q.typ == vt {
			s.qLR = 1 - i
			return q.data, nil
		}
	}
	q := &s.q[s.qLR]
	ph := s.e.CurrentPhase()
	s.e.Phase(phQuantize)
	data, err := s.e.Quantize(vt, a.rows, a.cols, a.n, q.buf)
	if ph != nil {
		s.e.Phase(ph)
	}
	if err != nil {
		return nil, fmt.Errorf("model: quantize activations: %w", err)
	}
	q.gen, q.typ, q.data = a.gen, vt, data
	s.qLR = 1 - s.qLR
	return data, nil
}

// mul computes out[t*stride+r] = row r of w · row t of a.
func (s *State) mul(w *ops.Matrix, a acts, out []float32, stride int) error {
	return s.mulScaled(projection{w: w}, a, out, stride)
}

// mulScaled is mul of projection p's whole matrix, times its scale when
// it has one (projection.finish).
func (s *State) mulScaled(p projection, a acts, out []float32, stride int) error {
	xq, err := s.quantized(a, p.w.VecType)
	if err != nil {
		return err
	}
	s.e.MatMul(p.w, xq, a.n, out, stride)
	s.finish(p, a, out, stride)
	return nil
}

// addLoRA adds w's adapter corrections (if any) of rows [row0,
// row0+rows) (rows 0: to the end) of a's products, already in out.
func (s *State) addLoRA(w *ops.Matrix, row0, rows int, a acts, out []float32, stride int) {
	if w.LoRA == nil {
		return
	}
	if rows == 0 {
		rows = w.Rows - row0
	}
	in := ops.LoRAInput{F: a.rows, N: a.n, Gen: a.gen}
	for i := range s.q {
		// The base product's conversion, which a lora_a of its type takes.
		if q := &s.q[i]; q.gen == a.gen && q.typ == w.VecType {
			in.Q, in.QType = q.data, q.typ
		}
	}
	s.e.AddLoRA(w, row0, rows, in, out, stride, &s.lora, s.loraScales)
}

type attnTask struct {
	s       *State
	layer   int
	pos0    int // the pass's first position
	first   int // the pass's token that is this call's token 0
	tokens  int // tokens of this call; unit u is token u%tokens
	q, out  []float32
	qStride int // floats from one token's query to the next
	oDim    int
	p       kv.AttnParams
	group   int // query heads per KV head
	parts   int // each KV head's query heads go in this many units
	// half, when positive, is a non-causal layer's symmetric window: a
	// token sees the positions of its text at most half away.
	half int
	// whole: every token attends to the call's last position, so to every
	// token of the batch, not only those before it (non-causal attention;
	// the batch is then the whole text). A unit is then one query head of
	// up to blockQueries tokens (blocks of them per head), which share each
	// pass over the KV head's keys and values.
	whole  bool
	blocks int
	// rows: a whole pass attends over its own float32 keys and values,
	// kOff and vOff floats into each token's row of q, not over the cache
	// (kv.AttendRows; jina-bert-v2).
	rows       bool
	kOff, vOff int
}

// setUnits prepares the task for n tokens and returns its unit count: one
// unit per token and KV head, or per token and part of a KV head's query
// heads when there would otherwise be fewer units than threads.
func (k *attnTask) setUnits(n, kvHeads, threads int) int {
	k.tokens, k.parts = n, 1
	if k.whole {
		k.blocks = k.s.wholeBlocks(n, k.blockQueries())
		return k.blocks * k.p.Heads
	}
	if u := n * kvHeads; u < threads {
		k.parts = min(k.group, (threads+u-1)/u)
	}
	return n * kvHeads * k.parts
}

// Do attends units [lo,hi). A unit is a range of query heads sharing one
// KV head, which Attend serves in one pass over that head's keys and
// values (the scratch holds a whole group's weights). Units go KV head by
// KV head, all tokens of one before the next, so each thread reads whole
// KV heads and finds them in cache from one token to the next. A worker
// keeps its first error in its own slot, so no error is lost and no two
// workers write the same memory.
func (k *attnTask) Do(w, lo, hi int) {
	if k.whole {
		k.doWhole(w, lo, hi)
		return
	}
	sc := k.s.scratch[w]
	qDim := k.p.Heads * k.s.m.HeadDimK
	p := k.p
	for u := lo; u < hi; u++ {
		t, gp := u%k.tokens, u/k.tokens
		g, part := gp/k.parts, gp%k.parts
		h0 := g*k.group + part*k.group/k.parts
		h1 := g*k.group + (part+1)*k.group/k.parts
		q := k.q[t*k.qStride : t*k.qStride+qDim]
		var pos int
		if k.half > 0 {
			p.From, pos = k.s.seesWithin(k.pos0, k.tokens, t, k.half)
		} else {
			p.From, pos = k.s.sees(k.pos0, k.first+t)
		}
		p.Query = k.pos0 + k.first + t
		err := k.s.cache.Attend(k.layer, pos, q, k.out[t*k.oDim:(t+1)*k.oDim], p, h0, h1, sc)
		if err != nil && k.s.errs[w] == nil {
			k.s.errs[w] = err
		}
	}
}

// doWhole attends units [lo,hi) of a non-causal pass: unit u is query
// head u/blocks of the tokens of block u%blocks, whose queries are
// gathered next to each other for kv.(*Cache).AttendQueries (or, with
// rows, kv.AttendRows over the pass's own keys and values) and whose
// outputs are put back in their rows — the same bits as each token's
// Attend, with each key and value row read once for the block.
func (k *attnTask) doWhole(w, lo, hi int) {
	m := k.s.m
	dk, dv := m.HeadDimK, m.HeadDimV
	sc := k.s.scratch[w]
	bq := k.blockQueries()
	qb := sc[len(sc)-bq*(dk+dv) : len(sc)-bq*dv]
	ob := sc[len(sc)-bq*dv:]
	sc = sc[:len(sc)-bq*(dk+dv)]
	p := k.p
	for u := lo; u < hi; u++ {
		h, b := u/k.blocks, u%k.blocks
		t0, t1 := int(k.s.wholeStarts[b]), int(k.s.wholeStarts[b+1])
		for t := t0; t < t1; t++ {
			copy(qb[(t-t0)*dk:(t-t0+1)*dk], k.q[t*k.qStride+h*dk:])
		}
		nq := t1 - t0
		var pos int
		p.From, pos = k.s.seesWhole(k.pos0, k.tokens, t0)
		p.Query, p.Head = k.pos0+t0, h
		var err error
		if g := h / k.group; k.rows {
			at := (p.From - k.pos0) * k.qStride
			r := kv.Rows{K: k.q[at+k.kOff+g*dk:], V: k.q[at+k.vOff+g*dv:], Stride: k.qStride, N: pos - p.From + 1, HeadDimK: dk, HeadDimV: dv}
			err = kv.AttendRows(r, qb[:nq*dk], ob[:nq*dv], p, sc)
		} else {
			err = k.s.cache.AttendQueries(k.layer, pos, g, qb[:nq*dk], ob[:nq*dv], p, sc)
		}
		if err != nil {
			if k.s.errs[w] == nil {
				k.s.errs[w] = err
			}
			continue
		}
		for t := t0; t < t1; t++ {
			copy(k.out[t*k.oDim+h*dv:t*k.oDim+(h+1)*dv], ob[(t-t0)*dv:])
		}
	}
}

// blockQueries is the most tokens of a non-causal pass that attend
// together: wholeQueries, or rowsQueries over the pass's own rows.
func (k *attnTask) blockQueries() int {
	if k.rows {
		return rowsQueries
	}
	return wholeQueries
}

// workerErr collects the errors the workers kept during one parallel
// attention: nil, the one error, or all of them joined. It allocates only
// when several workers failed.
func (s *State) workerErr() error {
	var first error
	n := 0
	for _, err := range s.errs {
		if err != nil {
			if first == nil {
				first = err
			}
			n++
		}
	}
	if n <= 1 {
		return first
	}
	return errors.Join(s.errs...)
}

// Forward runs tokens at positions pos0, pos0+1, … through the model,
// appending their keys and values to the cache, and writes logits to out:
// the last token's (len(out) == Vocab) or every token's, row after row
// (len(out) == len(tokens)×Vocab). len(tokens) must be between 1 and Batch.
// An encoder has no output head: its Forward fails (Generative).
func (s *State) Forward(tokens []int32, pos0 int, out []float32) error {
	m := s.m
	n := len(tokens)
	all := len(out) == n*m.Vocab && n > 1
	if !all && len(out) != m.Vocab {
		return fmt.Errorf("model: logits buffer of %d floats for %d tokens of vocabulary %d", len(out), n, m.Vocab)
	}
	_, err := s.forward(tokens, pos0, out, all)
	return err
}

// ForwardRows is Forward writing every token's logits, row after row, to
// the arena after the pass's scratch instead of a buffer of the caller's:
// what a speculative verification pass needs, inside the memory the plan
// counts for the batch's activations (RowsFit says for how many tokens).
// The rows are valid until the next pass.
func (s *State) ForwardRows(tokens []int32, pos0 int) ([]float32, error) {
	return s.forward(tokens, pos0, nil, true)
}

// RowsFit is the most tokens whose ForwardRows fits in the arena the
// state was made with (ScratchBytes of its batch, what memplan counts as
// its activations): the pass's scratch and a row of logits a token. It is
// at most Batch, and 0 when not even one token's fits.
func (s *State) RowsFit() int {
	return rowsFit(s.m.ScratchBytes(s.batch), s.batch, func(n int) int {
		return s.m.ScratchBytes(n) + roundUp(4*n*s.m.Vocab, allocAlign)
	})
}

// rowsFit is the largest n ≤ batch with need(n) ≤ room, need growing
// with n; 0 when there is none.
func rowsFit(room, batch int, need func(int) int) int {
	n := 0
	for n < batch && need(n+1) <= room {
		n++
	}
	return n
}

// forward runs a pass and writes its logits to out, every token's when
// all, the last one's otherwise; a nil out takes all rows from the arena
// (ForwardRows) and returns them.
func (s *State) forward(tokens []int32, pos0 int, out []float32, all bool) ([]float32, error) {
	m := s.m
	if err := m.Generative(); err != nil {
		return nil, err
	}
	n := len(tokens)
	defer s.e.EndPhases()
	x, xn, err := s.blocks(tokens, pos0)
	if err != nil {
		return nil, err
	}
	E := m.Embd
	first := 0
	if !all {
		first = n - 1
	}
	rows := n - first
	if out == nil {
		out = s.ar.Float32s(rows * m.Vocab)
	}
	s.e.Phase(phOutput)
	s.normB(xn, x[first*E:], m.OutNorm, m.OutNormB, rows)
	if err := s.head(s.acts(xn, E, rows), out); err != nil {
		return nil, err
	}
	return out, nil
}

// head writes the logits of the final norm's rows a into out: the output
// matrix's product, output.bias added (phi2, qwen2), then finishLogits.
func (s *State) head(a acts, out []float32) error {
	m := s.m
	if err := s.mul(m.Output, a, out, m.Vocab); err != nil {
		return err
	}
	addRows(out, m.OutB, a.n)
	m.finishLogits(out)
	return nil
}

// finishLogits applies what the architecture does to the output matrix's
// product: granite's division by logit_scale (a multiplication by its
// float32 reciprocal, as ggml_scale by 1/f_logit_scale), cohere2's
// multiplication by it, gemma's soft cap.
func (m *Model) finishLogits(out []float32) {
	if m.LogitScale != 0 {
		ops.Scale(out, 1/m.LogitScale)
	}
	if m.LogitMul != 0 {
		ops.Scale(out, m.LogitMul)
	}
	if m.FinalSoftcap != 0 {
		ops.Softcap(out, m.FinalSoftcap)
	}
}

// Generative is nil for a model that computes logits, and for an encoder
// (embeddings only) an error wrapping ErrUnsupportedArch that says so.
func (m *Model) Generative() error {
	if m.EmbeddingOnly() {
		return fmt.Errorf("model: %s is an embedding model (no output head, no logits, no generation): use Embed: %w", m.Arch, ErrUnsupportedArch)
	}
	return nil
}

// Hidden is Forward writing, instead of logits, every token's hidden state
// after the final norm — what the output matrix would multiply, and what
// embeddings are pooled from: len(out) == len(tokens)×Embd, row after row.
// An encoder's hidden states are its last block's output (it has no final
// norm); when its attention is not causal (NonCausal) the text must come
// whole, in one call from position 0.
func (s *State) Hidden(tokens []int32, pos0 int, out []float32) error {
	m := s.m
	n := len(tokens)
	if len(out) != n*m.Embd {
		return fmt.Errorf("model: hidden-state buffer of %d floats for %d tokens of width %d", len(out), n, m.Embd)
	}
	defer s.e.EndPhases()
	if m.Encoder {
		x, err := s.encode(tokens, pos0)
		if err != nil {
			return err
		}
		copy(out, x)
		return nil
	}
	x, _, err := s.blocks(tokens, pos0)
	if err != nil {
		return err
	}
	s.e.Phase(phOutput)
	s.normB(out, x, m.OutNorm, m.OutNormB, n)
	return nil
}

// pass holds the arena buffers of one forward pass of n tokens: what
// ScratchBytes counts, taken in the same order by the decoder's blocks
// and the encoder's encode.
type pass struct {
	n, pos0              int
	x, xn, tmp, qkv, att []float32
	gu                   []float32 // dense feed-forward: gate then up, 2×FFN a token
	cs, csSWA            []float32 // RoPE angles of the full and windowed layers
	alt                  altupPass // Gemma 3n's streams and per-layer inputs
	row                  []float32 // one token's delta-net input products, for deltaUngroup (qwen3next)
	skip                 []float32 // the normalised embeddings every block adds (Config.EmbedSkip)
}

// begin checks tokens, resets the arena and takes a pass's buffers, and
// writes the tokens' embeddings into x (scaled as the architecture says)
// and their RoPE angles into cs and csSWA.
func (s *State) begin(tokens []int32, pos0 int) (pass, error) {
	m := s.m
	c := &m.Config
	n := len(tokens)
	if n == 0 || n > s.batch {
		return pass{}, fmt.Errorf("model: forward of %d tokens (batch limit %d)", n, s.batch)
	}
	for _, t := range tokens {
		if t < 0 || int(t) >= m.Vocab {
			return pass{}, fmt.Errorf("model: token %d not in vocabulary of %d: %w", t, m.Vocab, ErrTokenOutOfRange)
		}
	}
	ar := s.ar
	ar.Reset()
	E := c.Embd
	p := pass{n: n, pos0: pos0, x: ar.Float32s(n * E), xn: ar.Float32s(n * E), tmp: ar.Float32s(n * E),
		qkv: ar.Float32s(n * qkvWidth(c)), att: ar.Float32s(n * attnOutWidth(c))}
	if w := guWidth(c); w > 0 {
		p.gu = ar.Float32s(n * w)
	}
	for i := range s.q {
		s.q[i] = qslot{buf: ar.Bytes(n * m.maxXRowBytes())}
	}
	p.cs = ar.Float32s(n * c.ropeStride())
	p.csSWA = p.cs
	if s.twoRopes {
		p.csSWA = ar.Float32s(n * c.ropeStride())
	}
	if c.Experts > 0 {
		s.moe.take(ar, c, m.maxXRowBytes(), n)
	}
	if c.AltUp > 0 || c.PerLayerEmbd > 0 {
		p.alt = takeAltup(ar, c, n)
	}
	if c.mla() {
		s.mla.take(ar, c, n)
	}
	if c.DeltaBlocks {
		p.row = ar.Float32s(c.deltaInProj())
	}
	if c.EmbedSkip {
		p.skip = ar.Float32s(n * c.Embd)
	}

	s.e.Phase(phEmbed)
	er := m.Embed
	for t, tok := range tokens {
		if err := quant.Dequantize(er.Type, p.x[t*E:(t+1)*E], er.Row(int(tok))); err != nil {
			return pass{}, fmt.Errorf("model: embedding of token %d: %w", tok, err)
		}
	}
	ops.AddEmbedLoRA(m.EmbedLoRA, p.x, tokens, E, s.loraScales, &s.lora)
	if c.EmbedScale != 0 {
		ops.Scale(p.x, c.EmbedScale)
	}
	if !c.Encoder {
		// A decoder's learned positions (gpt2); an encoder's come after
		// its type row (encode).
		if err := s.addPositions(&p); err != nil {
			return pass{}, err
		}
	}
	if m.EmbedNorm != nil && !c.Encoder {
		// The embeddings' LayerNorm: modern-bert's without bias, RWKV's
		// with (an encoder's comes after its type and position rows:
		// encode).
		s.layerNorm(p.x, p.x, m.EmbedNorm, m.EmbedNormB, n)
	}
	if c.EmbedSkip {
		// talkie: the blocks read the embeddings RMS-normalised, and each
		// adds them again after its feed-forward.
		for t := range n {
			ops.RMSNorm(p.x[t*E:(t+1)*E], p.x[t*E:(t+1)*E], nil, c.RMSEps)
		}
		copy(p.skip, p.x[:n*E])
	}
	s.angles(&s.rope, p.cs, pos0, n)
	if s.twoRopes {
		s.angles(&s.ropeSWA, p.csSWA, pos0, n)
	}
	return p, nil
}

// angles writes the RoPE cos/sin pairs of the n tokens of a pass from
// pos0 into cs, each at its position in its text (State.position).
func (s *State) angles(r *ops.Rope, cs []float32, pos0, n int) {
	c := &s.m.Config
	for t := 0; t < n; t++ {
		r.Angles(s.position(pos0, t), c.angles(cs, t))
	}
}

// blocks runs tokens through the embedding and every block, appending
// their keys and values to the cache, and returns the residual stream
// (len(tokens) rows of Embd) and a scratch buffer of the same size, both
// in the arena.
func (s *State) blocks(tokens []int32, pos0 int) (x, xn []float32, err error) {
	m := s.m
	c := &m.Config
	if c.NonCausal && pos0 != 0 {
		return nil, nil, fmt.Errorf("model: %s attends over the whole text, which must come in one pass from position 0 (not from %d): %w", m.Arch, pos0, kv.ErrInvalid)
	}
	if err := s.checkPositions(pos0, len(tokens)); err != nil {
		return nil, nil, err
	}
	if s.conv.on() && pos0 != s.conv.at {
		return nil, nil, fmt.Errorf("model: a pass from position %d, but the conv state follows %d tokens (rewind with Truncate): %w", pos0, s.conv.at, kv.ErrInvalid)
	}
	p, err := s.begin(tokens, pos0)
	if err != nil {
		return nil, nil, err
	}
	if c.AltUp > 0 {
		return s.altupBlocks(tokens, &p)
	}
	if c.HeadDimSWA > 0 {
		return s.gemma4Blocks(tokens, &p)
	}
	n := p.n
	if s.conv.on() {
		// Until the pass ends the conv state is neither before nor after
		// it: Truncate restores a checkpoint.
		s.conv.begin()
	}
	layer := func(il int, L *Layer) error { return s.block(il, L, &p) }
	switch {
	case c.rwkv():
		layer = func(il int, L *Layer) error { return s.rwkvLayer(il, L, &p) }
	case c.SingleOp:
		layer = func(il int, L *Layer) error { return s.singleOpLayer(il, L, &p) }
	}
	for run := range c.loops() {
		if run > 0 && c.LoopNorm {
			s.e.Phase(phNorm)
			s.norm(p.x, p.x, m.OutNorm, n)
		}
		s.run = run
		err := s.forLayers(layer)
		s.run = 0
		if err != nil {
			return nil, nil, err
		}
	}
	if c.KVLayers() == 0 {
		// mamba: the cache's placeholder layer takes the pass's
		// positions (zeros), so that it counts them as an attending
		// model's cache does.
		z := p.qkv[:n*2*placeholderHeadDim]
		clear(z)
		if err := s.cache.StoreBatch(0, pos0, n, z, z[placeholderHeadDim:], 2*placeholderHeadDim, nil); err != nil {
			return nil, nil, err
		}
	}
	if s.conv.on() {
		s.conv.end(pos0 + n)
	}
	return p.x, p.xn, nil
}

// normed normalises the pass's residual stream with norm w into p.xn, as
// a block begins, and returns the stream and the normalised rows.
func (s *State) normed(p *pass, w []float32) (x []float32, a acts) {
	E := s.m.Embd
	x = p.x[:p.n*E]
	s.e.Phase(phNorm)
	s.norm(p.xn, x, w, p.n)
	return x, s.acts(p.xn, E, p.n)
}

// block runs block il (attention, a short convolution, Mamba-2 or a gated
// delta net — falcon-h1: attention and Mamba-2 side by side — then the
// feed-forward or the experts) over the pass's residual stream in place.
func (s *State) block(il int, L *Layer, p *pass) error {
	c := &s.m.Config
	if c.droppedLayer(il) {
		return nil // deci: llama.cpp's graph never takes the layer's output
	}
	var in acts // the attention's normalised input
	var normsApart bool
	if !c.attnFree(il) {
		var err error
		if in, normsApart, err = s.attnHalf(il, L, p); err != nil {
			return err
		}
	}
	return s.ffnHalf(il, L, p, in, normsApart)
}

// attnHalf runs the first half of block il: the attention (or the mixer
// in its place) of the normalised stream, joined to the stream. It
// returns the normalised input, and whether the feed-forward's norm was
// taken of the block's input beside it (into p.xn).
func (s *State) attnHalf(il int, L *Layer, p *pass) (in acts, normsApart bool, err error) {
	c := &s.m.Config
	n, x, xn, pos0 := p.n, p.x, p.xn, p.pos0
	stride := qkvStride(c) // one token's q, k and v side by side (and afmoe's gate)
	oDim := c.LayerHeads(il) * c.HeadDimV
	E := c.Embd
	s.e.Phase(phNorm)
	if c.RouterPreAttn && L.Router != nil {
		copy(s.moe.rin, x[:n*E]) // read by the router after attention
	}
	s.normB(xn, x, L.AttnNorm, L.AttnNormB, n)
	in = s.acts(xn, E, n)
	wo, oCols, bo := L.Wo, oDim, L.Bo
	var ao acts // the attention's output, when not p.att's oCols a token
	switch {
	case c.outputOnly(il):
		// deci's "linear attention": attn_output of the normalised
		// input, without its bias, as llama.cpp's graph has it.
		ao, bo = in, nil
	case c.ConvLayer(il) && c.DeltaNet:
		if err := s.deltaNet(il, L, in, p); err != nil {
			return in, false, err
		}
		wo, oCols = L.ConvOut, c.SSMInner
	case c.mixerOnly(il) && c.Mamba1:
		if err := s.mamba1(il, L, in, p); err != nil {
			return in, false, err
		}
		wo, oCols = L.ConvOut, c.SSMInner
	case c.mixerOnly(il) && c.mamba():
		if err := s.mamba2(il, L, in, p); err != nil {
			return in, false, err
		}
		wo, oCols = L.ConvOut, c.SSMInner
	case c.mixerOnly(il):
		if err := s.shortConv(il, L, in, p); err != nil {
			return in, false, err
		}
		wo, oCols = L.ConvOut, E
	case c.mla():
		if err := s.mlaQKV(il, L, in, p); err != nil {
			return in, false, err
		}
		s.e.Phase(phAttention)
		if err := s.attention(il, pos0, n, p.qkv, stride, p.att, nil); err != nil {
			return in, false, err
		}
		s.e.Phase(phO)
		var err error
		if ao, err = s.mlaOut(L, p.att, n); err != nil {
			return in, false, err
		}
	default:
		if err := s.qkv(il, L, in, p, &s.gp); err != nil {
			return in, false, err
		}
		s.e.Phase(phAttention)
		if err := s.attention(il, pos0, n, p.qkv, stride, p.att, L.Sinks); err != nil {
			return in, false, err
		}
		if c.AttnOutScale != 0 {
			ops.Scale(p.att[:n*oDim], c.AttnOutScale)
		}
		if c.AttnGate {
			gateHeads(p.att, p.gu, n, c)
		}
		if c.AttnOutGate {
			gateOutput(p.att, p.qkv, n, stride, gateOffset(c), oDim, L.WOutGate.Rows, c.GateSoftplus)
		}
	}
	if ao.rows == nil {
		if L.AttnSubNorm != nil {
			// bitnet: the attention's output normalised before attn_output.
			s.e.Phase(phNorm)
			headNorm(p.att[:n*oCols], L.AttnSubNorm, oCols, c.RMSEps)
		}
		ao = s.acts(p.att, oCols, n)
	}
	// gptneox, and a falcon block with attn_norm_2 (whose attn_norm is
	// the feed-forward's: FFNNorm): the feed-forward's norm of the
	// block's input, taken before the attention joins the stream, into xn
	// (the attention's input, spent by now).
	normsApart = c.ParallelNorms || c.Parallel && L.FFNNorm != nil
	if normsApart {
		s.e.Phase(phNorm)
		s.normB(xn, x, L.FFNNorm, L.FFNNormB, n)
	}
	s.e.Phase(phO)
	if err := s.residualScaled(projection{w: wo, scale: L.ScaleO}, ao, bo, p.tmp, x, L.PostAttnNorm); err != nil {
		return in, false, err
	}
	if c.ParallelSSM {
		// falcon-h1: the Mamba-2 mixer of the same normalised input joins
		// the stream beside the attention.
		if err := s.mamba2(il, L, s.acts(xn, E, n), p); err != nil {
			return in, false, err
		}
		s.e.Phase(phO)
		if err := s.residual(L.ConvOut, s.acts(p.att, c.SSMInner, n), nil, p.tmp, x, nil); err != nil {
			return in, false, err
		}
	}
	return in, normsApart, nil
}

// ffnHalf runs the second half of block il: the feed-forward (or the
// experts) of the stream normalised, or of in (Parallel), or of p.xn
// (normsApart), joined to the stream; nothing in a layer without one.
func (s *State) ffnHalf(il int, L *Layer, p *pass, in acts, normsApart bool) error {
	c := &s.m.Config
	n, x, xn, E := p.n, p.x, p.xn, c.Embd
	if c.ffnFree(il) {
		return nil
	}
	// Parallel (cohere2; a stablelm block without ffn_norm): the
	// feed-forward reads the attention's input; normsApart: xn,
	// normalised above.
	a := in
	switch {
	case normsApart:
		a = s.acts(xn, E, n)
	case !c.Parallel && !(c.OptionalFFNNorm && L.FFNNorm == nil):
		s.e.Phase(phNorm)
		s.normB(xn, x, L.FFNNorm, L.FFNNormB, n)
		a = s.acts(xn, E, n)
	}
	if L.Router != nil {
		ra := a
		if c.RouterPreAttn {
			ra = s.acts(s.moe.rin, E, n)
		}
		s.e.Phase(phMoE)
		if err := s.experts(il, L, a, ra, p.tmp); err != nil {
			return err
		}
		if L.ChDown != nil {
			if err := s.adjugateExperts(L, p.tmp, n); err != nil {
				return err
			}
		}
		if L.ShDown != nil {
			s.e.Phase(phGateUp)
			if err := s.sharedExpert(L, a, p.gu, p.tmp); err != nil {
				return err
			}
			if sc := c.SharedSumScale; sc != 0 {
				ops.Scale(p.tmp[:n*E], sc)
			}
		}
		s.e.Phase(phNorm)
		s.addNormed(x, p.tmp, L.PostFFNNorm, n)
	} else if err := s.ffn(L, a, p.gu, p.tmp, x, false); err != nil {
		return err
	}
	if L.SkipScale != nil {
		// As ggml_mul then ggml_add: the product rounded before the sum.
		g := L.SkipScale[0]
		for i, v := range p.skip[:n*E] {
			x[i] += float32(v * g)
		}
	}
	return nil
}

// qkv computes block il's queries, keys and values of a into p.qkv (one
// token's q, k and v side by side) and prepares them for attention: the
// biases, per-head norms, RoPE (none with learned positions) and the
// query scale the architecture has.
func (s *State) qkv(il int, L *Layer, a acts, p *pass, shared *[maxShared]projection) error {
	c := &s.m.Config
	heads, hkv := c.LayerHeads(il), c.LayerHeadsKV(il)
	qDim, kDim := c.Heads*c.HeadDimK, c.HeadsKV*c.HeadDimK // where the keys and values start
	stride := qkvStride(c)
	s.e.Phase(phQKV)
	own := c.OwnsKV(il)
	ps := L.qkvInputs(c, il, shared)
	if !own {
		ps = ps[:L.queryInputs()] // the keys and values are another layer's
	}
	if c.AttnGate {
		if err := s.gatedQKV(ps, a, p, stride); err != nil {
			return err
		}
	} else if err := s.mulShared(a, ps, p.qkv, stride); err != nil {
		return err
	}
	s.e.Phase(phRope)
	rope, ang := &s.rope, p.cs
	if s.twoRopes && c.WindowedLayer(il) {
		rope, ang = &s.ropeSWA, p.csSWA
	}
	for t := 0; t < p.n; t++ {
		row := p.qkv[t*stride : (t+1)*stride]
		qt, kt, vt := row[:heads*c.HeadDimK], row[qDim:qDim+hkv*c.HeadDimK], row[qDim+kDim:qDim+kDim+hkv*c.HeadDimV]
		if L.Bqkv != nil {
			ops.Add(row, L.Bqkv)
		}
		if L.Bq != nil {
			ops.Add(qt, L.Bq)
		}
		if L.Bk != nil {
			ops.Add(kt, L.Bk)
		}
		if L.Bv != nil {
			ops.Add(vt, L.Bv)
		}
		if c.ClampKQV > 0 {
			ops.Clamp(row[:qDim+kDim+len(vt)], c.ClampKQV)
		}
		if !c.QKNormAfterRope {
			qkNorm(c, L, qt, kt, own)
		}
		if c.VNorm && own {
			headNorm(vt, nil, c.HeadDimV, c.RMSEps)
		}
		if c.RopeLayer(il) {
			at := c.angles(ang, t)
			rope.Apply(qt, heads, c.HeadDimK, at)
			if own {
				rope.Apply(kt, hkv, c.HeadDimK, at)
			}
		}
		if c.QKNormAfterRope {
			qkNorm(c, L, qt, kt, own)
		}
		if c.QKUnitNorm && c.RopeLayer(il) {
			headNorm(qt, nil, c.HeadDimK, c.RMSEps)
			if own {
				headNorm(kt, nil, c.HeadDimK, c.RMSEps)
			}
		}
		for h, g := range L.QGain {
			ops.Scale(qt[h*c.HeadDimK:(h+1)*c.HeadDimK], g)
		}
		if c.AttnTempLayer(il) {
			ops.Scale(qt, c.AttnTemp(s.position(p.pos0, t)))
		}
		if c.QueryScale != 0 {
			ops.Scale(qt, c.QueryScale)
		}
	}
	return nil
}

// qkNorm applies the layer's Q and K norms, if it has them, to a token's
// query and (when the layer stores its own) key: across all heads at once
// (QKNormFull) or head by head (with a weight row a head: QKLayerNorm).
func qkNorm(c *Config, L *Layer, qt, kt []float32, own bool) {
	switch {
	case L.QNormB != nil:
		ops.LayerNorm(qt, qt, L.QNorm, L.QNormB, c.NormEps)
		ops.LayerNorm(kt, kt, L.KNorm, L.KNormB, c.NormEps)
	case L.QNorm != nil && c.QKLayerNorm:
		headLayerNorm(qt, L.QNorm, c.HeadDimK, c.NormEps)
		if own {
			headLayerNorm(kt, L.KNorm, c.HeadDimK, c.NormEps)
		}
	case L.QNorm != nil && c.QKNormFull:
		ops.RMSNorm(qt, qt, L.QNorm, c.RMSEps)
		ops.RMSNorm(kt, kt, L.KNorm, c.RMSEps)
	case L.QNorm != nil:
		headNorm(qt, L.QNorm, c.HeadDimK, c.RMSEps)
		if own {
			headNorm(kt, L.KNorm, c.HeadDimK, c.RMSEps)
		}
	}
}

// headNorm applies RMSNorm with weight w (nil: none) to each head of x
// (headDim floats each), in place; or to each row, headDim the row's
// width (bitnet's sub norms).
func headNorm(x, w []float32, headDim int, eps float32) {
	for h := 0; h+headDim <= len(x); h += headDim {
		v := x[h : h+headDim]
		ops.RMSNorm(v, v, w, eps)
	}
}

// headLayerNorm applies LayerNorm without bias to each head of x
// (headDim floats each), in place, head h weighted by w's row h.
func headLayerNorm(x, w []float32, headDim int, eps float32) {
	for h := 0; h+headDim <= len(x); h += headDim {
		v := x[h : h+headDim]
		ops.LayerNorm(v, v, w[h:h+headDim], nil, eps)
	}
}

// norm writes RMSNorm(src)·w (LayerNorm(src)·w with Config.LayerNorm) of
// rows rows of Embd floats to dst.
func (s *State) norm(dst, src, w []float32, rows int) { s.normB(dst, src, w, nil, rows) }

// normB is norm with a bias b added after the weight (nil: none): a
// LayerNorm's (starcoder2, nemotron, rwkv7), or an RMSNorm's, as
// llama.cpp's build_norm adds it (rwkv6qwen2's optional output_norm.bias;
// phimoe, whose graph runs its LayerNorm checkpoints as RMSNorms with
// their biases).
func (s *State) normB(dst, src, w, b []float32, rows int) {
	E := s.m.Embd
	if w == nil {
		// A block without pre-norms (olmo2) takes the stream as it is.
		copy(dst[:rows*E], src[:rows*E])
		return
	}
	for t := 0; t < rows; t++ {
		if s.m.LayerNorm {
			ops.LayerNorm(dst[t*E:(t+1)*E], src[t*E:(t+1)*E], w, b, s.m.NormEps)
			continue
		}
		ops.RMSNorm(dst[t*E:(t+1)*E], src[t*E:(t+1)*E], w, s.m.RMSEps)
		if b != nil {
			ops.Add(dst[t*E:(t+1)*E], b)
		}
	}
}

// addNormed adds y — normalised by post first, unless post is nil, and
// scaled by the architecture's ResidualScale (granite) — to the residual
// stream x, for rows rows.
func (s *State) addNormed(x, y, post []float32, rows int) {
	if post != nil {
		s.norm(y, y, post, rows)
	}
	E := s.m.Embd
	if rs := s.m.ResidualScale; rs != 0 {
		ops.Scale(y[:rows*E], rs)
	}
	ops.Add(x[:rows*E], y[:rows*E])
}

// residual computes a block's last product w·a into out (Embd floats per
// token), adds its bias (an encoder's, when not nil) and adds it to the
// residual stream x: within the product's own dispatch, or after
// normalising it when the block has a norm there (post, gemma's
// post-attention and post-feed-forward norms).
func (s *State) residual(w *ops.Matrix, a acts, bias, out, x, post []float32) error {
	return s.residualScaled(projection{w: w}, a, bias, out, x, post)
}

// residualScaled is residual of projection p's whole matrix, times its
// scale when it has one (bitnet's attn_output and ffn_down).
func (s *State) residualScaled(p projection, a acts, bias, out, x, post []float32) error {
	E := s.m.Embd
	if post == nil && bias == nil && s.m.ResidualScale == 0 && p.scale == nil {
		return s.mulAdd(p.w, a, out, E, x, E)
	}
	if err := s.mulScaled(p, a, out, E); err != nil {
		return err
	}
	addRows(out, bias, a.n)
	s.e.Phase(phNorm)
	s.addNormed(x, out, post, a.n)
	return nil
}

// addRows adds bias (nil: nothing) to each of the first n rows of x.
func addRows(x, bias []float32, n int) {
	if bias == nil {
		return
	}
	for t := range n {
		ops.Add(x[t*len(bias):(t+1)*len(bias)], bias)
	}
}

// sharedExpert adds the shared expert's down(act(gate·a) ⊙ up·a) to the
// routed experts' sum in out (moe_out + ffn_shexp, as llama.cpp's granite
// graphs add them before the residual scale); gu holds its gate and up
// rows, the expert scratch's y its output.
func (s *State) sharedExpert(L *Layer, a acts, gu, out []float32) error {
	F := s.m.SharedFFN
	if L.ShGate == nil {
		// nemotron_h_moe's: no gate, down(ReLU(up·a)²).
		if err := s.mul(L.ShUp, a, gu, F); err != nil {
			return err
		}
		reluSqr(gu[:a.n*F])
	} else if err := s.gated(a, projection{w: L.ShGate}, projection{w: L.ShUp, off: F}, F, gu, false); err != nil {
		return err
	}
	s.e.Phase(phDown)
	y := s.moe.y
	if err := s.mul(L.ShDown, s.acts(gu, F, a.n), y, s.m.Embd); err != nil {
		return err
	}
	E := s.m.Embd
	if g := L.ShGateInp; g != nil {
		// qwen35moe: the expert's own gate, sigmoid(g·x), scales it.
		for t := range a.n {
			ops.Scale(y[t*E:(t+1)*E], sigmoid(dot32(g, a.rows[t*E:(t+1)*E])))
		}
	}
	ops.Add(out[:a.n*E], y[:a.n*E])
	return nil
}

// gated computes act(gate·a) ⊙ up·a into the first n×F floats of gu (F
// a token), gate and up and the activation in one dispatch (with sparse,
// Gemma 3n's cut gate: gatedProducts).
func (s *State) gated(a acts, gate, up projection, F int, gu []float32, sparse bool) error {
	if err := s.gatedProducts(a, gate, up, gu, 2*F, sparse); err != nil {
		return err
	}
	// Pack the activated rows into the first n×F floats: row t goes to
	// [t·F, (t+1)·F), which is never past its own gate half.
	for t := 1; t < a.n; t++ {
		copy(gu[t*F:(t+1)*F], gu[2*t*F:2*t*F+F])
	}
	return nil
}

// ffn is the dense feed-forward block: down(act(gate·a) ⊙ up·a) into out,
// then added to the residual stream x. gu holds n rows of gate then up
// (2×FFN floats each); gate, up and the activation take one dispatch, the
// down projection and the residual add another. A block without a gate
// (FFNSequential, bert) computes down(GELU(up·a + b_up)) + b_down, or
// with ReLU2 (nemotron_h, arcee) down(ReLU(up·a + b_up)²) + b_down, or
// with the layer's XIELU (apertus) down(xIELU(up·a)). With
// sparse (Gemma 3n's first layers) the gate is cut first (sparsify).
func (s *State) ffn(L *Layer, a acts, gu, out, x []float32, sparse bool) error {
	c := &s.m.Config
	F, n := c.FFN, a.n
	switch {
	case L.Gate != nil:
		F = L.Gate.Rows // Gemma 4's widths differ between layers
	case L.Up != nil:
		F = L.Up.Rows // and nemotron_h's
	}
	s.e.Phase(phGateUp)
	if L.Gate == nil && L.GateUp == nil {
		// The bias comes before the activation, so the two cannot run in
		// the product's dispatch as the gated activations do.
		if err := s.mul(L.Up, a, gu, F); err != nil {
			return err
		}
		addRows(gu, L.BUp, n)
		switch {
		case L.XIELU != nil:
			L.XIELU.Apply(gu[:n*F])
		case c.ReLU2:
			reluSqr(gu[:n*F])
		default:
			ops.GELU(gu[:n*F])
		}
	} else {
		gate, up := L.gateUpInputs(c)
		if err := s.gated(a, gate, up, F, gu, sparse); err != nil {
			return err
		}
		if L.FFNSubNorm != nil {
			// bitnet: the activation normalised before ffn_down.
			headNorm(gu[:n*F], L.FFNSubNorm, F, c.RMSEps)
		}
	}
	s.e.Phase(phDown)
	return s.residualScaled(projection{w: L.Down, scale: L.ScaleDown}, s.acts(gu, F, n), L.BDown, out, x, L.PostFFNNorm)
}

// attention stores the chunk's keys and values (in qkv, stride floats per
// token: query, key, value) and computes every token's attention output,
// with the layer's attention sinks when it has them (nil: none).
func (s *State) attention(il, pos0, n int, qkv []float32, stride int, out, sinks []float32) error {
	c := &s.m.Config
	qDim, kDim := c.Heads*c.HeadDimK, c.HeadsKV*c.HeadDimK // where the keys and values start
	heads := c.LayerHeads(il)
	oDim := heads * c.HeadDimV
	// A Gemma 4 layer narrower than the widest keeps its own head size and
	// KV heads, its keys and values at the start of their parts of the row.
	g := c.layerGeometry(il)
	hkv, dk, dv := g.KVHeads, g.HeadDimK, g.HeadDimV
	// The cache holds the attention layers that own keys and values only,
	// a looped stack's once for each run.
	kl := c.KVLayer(il)
	if s.run > 0 {
		kl += s.run * c.runKVLayers()
	}
	s.attn = attnTask{s: s, layer: kl, q: qkv, qStride: stride, out: out, oDim: oDim,
		p:     kv.AttnParams{Heads: heads, Scale: c.KQScale, Softcap: c.AttnSoftcap, Sinks: sinks, ALiBi: c.ALiBi},
		group: heads / hkv, whole: c.NonCausal}
	threads := s.e.Pool().Threads()
	defer func() { s.attn = attnTask{} }()
	store := func(t int) error {
		row := qkv[t*stride : (t+1)*stride]
		return s.cache.Store(kl, pos0+t, row[qDim:qDim+hkv*dk], row[qDim+kDim:qDim+kDim+hkv*dv])
	}
	run := func(units int) error {
		clear(s.errs)
		s.e.For(units, 1, &s.attn)
		return s.workerErr()
	}
	if c.rowsAttention() {
		// jina-bert-v2 attends over the pass's float32 projections, as
		// llama.cpp's encoder does without a cache (the cache's F16 rows
		// would move its states by their rounding), and stores nothing:
		// no later pass reads them.
		s.attn.rows, s.attn.kOff, s.attn.vOff = true, qDim, qDim+kDim
		s.attn.pos0 = pos0
		return run(s.attn.setUnits(n, hkv, threads))
	}
	if !c.OwnsKV(il) {
		// Another layer stored this pass's keys and values already.
		s.attn.pos0 = pos0
		return run(s.attn.setUnits(n, hkv, threads))
	}
	if c.WindowedLayer(il) && !c.NonCausal && c.KVFrom == 0 {
		// A windowed layer keeps only its last Window positions, so a token
		// must attend before later tokens of the chunk overwrite its keys.
		for t := 0; t < n; t++ {
			if err := store(t); err != nil {
				return err
			}
			s.attn.pos0, s.attn.first = pos0, t
			s.attn.q, s.attn.out = qkv[t*stride:], out[t*oDim:(t+1)*oDim]
			if err := run(s.attn.setUnits(1, hkv, threads)); err != nil {
				return err
			}
		}
		return nil
	}
	// The other layers store the whole chunk first (a windowed layer whose
	// cache a later layer shares keeps room for it: StateKVConfig), KV heads in parallel
	// once the chunk is long enough to pay for waking the pool (an Int4
	// key and value take about 11 ns an element to quantize).
	var par kv.Runner
	if n >= storeParallelMin {
		par = poolRunner{s.e}
	}
	if err := s.cache.StoreBatch(kl, pos0, n, qkv[qDim:], qkv[qDim+kDim:], stride, par); err != nil {
		return err
	}
	s.attn.pos0 = pos0
	if c.NonCausal && c.WindowedLayer(il) {
		// A symmetric window: each token sees its own stretch of the text,
		// so tokens attend one by one, not in blocks sharing a span.
		s.attn.whole, s.attn.half = false, c.Window/2
	}
	return run(s.attn.setUnits(n, hkv, threads))
}

// storeParallelMin is the shortest chunk whose keys and values are stored
// by the thread pool rather than the calling thread.
const storeParallelMin = 8

// poolRunner runs kv's StoreBatch heads on the state's thread pool.
type poolRunner struct{ e *ops.Exec }

func (r poolRunner) Run(n int, t kv.RangeTask) { r.e.For(n, 1, t) }
