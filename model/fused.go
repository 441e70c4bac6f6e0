package model

import (
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/quant"
)

// A projection is one matrix (or a band of its rows) among several that
// read the same activation: rows [row0, row0+rows) of w (rows 0: to the
// end) land at column off of each token's output row. The matrices a
// block's architecture gives it (model/arch.go: QKVLayout, FFNLayout) map
// to projections here, and the forward pass runs every projection of one
// input in one dispatch of the thread pool.
type projection struct {
	w          *ops.Matrix
	row0, rows int
	off        int
	// scale, when not nil, is a one-element .scale multiplying the
	// product (bitnet): before the adapters' corrections are added, as
	// llama.cpp's build_lora_mm applies it, or after them with late, as
	// its build_ffn scales ffn_gate and ffn_up.
	scale []float32
	late  bool
}

// maxShared is the most projections one input feeds: Q, K and V; a
// gated delta-net layer's qkv, z, β and α.
const maxShared = 4

// qkvInputs lists the projections of the attention input: the fused
// attn_qkv (query, key and value rows in one matrix), or attn_q, attn_k
// and attn_v side by side in a token's q|k|v row; an afmoe layer's
// attn_gate after them (qkvStride), listed second so that the query's
// projections are the first queryInputs.
func (L *Layer) qkvInputs(c *Config, il int, dst *[maxShared]projection) []projection {
	qDim, kDim, vDim := c.Heads*c.HeadDimK, c.HeadsKV*c.HeadDimK, c.HeadsKV*c.HeadDimV
	ps := dst[:0]
	if L.Wqkv != nil && (c.LayerQHeads != nil || c.LayerKVHeads != nil) {
		// openelm: the layer's heads fewer than the widest's, its query,
		// key and value rows go each to its part of the row.
		q, k := c.LayerHeads(il)*c.HeadDimK, c.LayerHeadsKV(il)*c.HeadDimK
		v := c.LayerHeadsKV(il) * c.HeadDimV
		return append(ps, projection{w: L.Wqkv, rows: q}, projection{w: L.Wqkv, row0: q, rows: k, off: qDim},
			projection{w: L.Wqkv, row0: q + k, rows: v, off: qDim + kDim})
	}
	if L.Wqkv != nil {
		ps = append(ps, projection{w: L.Wqkv})
	} else {
		ps = append(ps, projection{w: L.Wq, scale: L.ScaleQ})
	}
	if L.WOutGate != nil {
		ps = append(ps, projection{w: L.WOutGate, off: qDim + kDim + vDim})
	}
	if L.Wqkv != nil {
		return ps
	}
	return append(ps, projection{w: L.Wk, off: qDim, scale: L.ScaleK}, projection{w: L.Wv, off: qDim + kDim, scale: L.ScaleV})
}

// queryInputs is how many of qkvInputs' projections a layer that keeps
// no keys or values of its own computes: the query, and its output gate.
func (L *Layer) queryInputs() int {
	if L.WOutGate != nil {
		return 2
	}
	return 1
}

// gateUpInputs returns a gated feed-forward block's gate and up
// projections, whose outputs go side by side in a row of 2×FFN floats:
// ffn_gate and ffn_up, or the two halves of phi3's fused ffn_up.
func (L *Layer) gateUpInputs(c *Config) (gate, up projection) {
	F := c.FFN
	if L.GateUp != nil {
		return projection{w: L.GateUp, rows: F}, projection{w: L.GateUp, row0: F, rows: F, off: F}
	}
	return projection{w: L.Gate, scale: L.ScaleGate, late: true}, projection{w: L.Up, off: L.Gate.Rows, scale: L.ScaleUp, late: true}
}

// finish completes p's products of a's n rows in out (rows of stride
// floats from p's column): its scale, and the adapters' corrections in
// the order the scale says.
func (s *State) finish(p projection, a acts, out []float32, stride int) {
	if !p.late {
		p.scaleRows(out, a.n, stride)
	}
	s.addLoRA(p.w, p.row0, p.rows, a, out[p.off:], stride)
	if p.late {
		p.scaleRows(out, a.n, stride)
	}
}

// scaleRows multiplies p's outputs in out (n rows of stride floats) by
// its scale, when it has one.
func (p projection) scaleRows(out []float32, n, stride int) {
	if p.scale == nil {
		return
	}
	rows := p.rows
	if rows == 0 {
		rows = p.w.Rows - p.row0
	}
	for t := range n {
		ops.Scale(out[t*stride+p.off:t*stride+p.off+rows], p.scale[0])
	}
}

// part is p as an ops.Part over a's rows quantized in xq, writing rows of
// stride floats in out.
func (p projection) part(xq []byte, out []float32, stride int) ops.Part {
	return ops.Part{M: p.w, Row0: p.row0, Rows: p.rows, X: xq, Out: out[p.off:], Stride: stride}
}

// mulShared computes every projection of a into out (stride floats per
// token) in one dispatch when a's quantized copies for all of them fit in
// the state's buffers together (at most two activation types), else one
// dispatch per type.
func (s *State) mulShared(a acts, ps []projection, out []float32, stride int) error {
	var types [maxShared]quant.Type
	nt := 0
	for _, p := range ps {
		vt := p.w.VecType
		seen := false
		for _, t := range types[:nt] {
			seen = seen || t == vt
		}
		if !seen {
			types[nt] = vt
			nt++
		}
	}
	if nt > len(s.q) {
		for _, p := range ps {
			xq, err := s.quantized(a, p.w.VecType)
			if err != nil {
				return err
			}
			one := [1]ops.Part{p.part(xq, out, stride)}
			s.e.MatMulParts(one[:], a.n)
			s.finish(p, a, out, stride)
		}
		return nil
	}
	// Quantize for every type first: the second conversion goes to the
	// other buffer and leaves the first one's in place.
	for _, t := range types[:nt] {
		if _, err := s.quantized(a, t); err != nil {
			return err
		}
	}
	var parts [maxShared]ops.Part
	for i, p := range ps {
		xq, err := s.quantized(a, p.w.VecType)
		if err != nil {
			return err
		}
		parts[i] = p.part(xq, out, stride)
	}
	s.e.MatMulParts(parts[:len(ps)], a.n)
	for _, p := range ps {
		s.finish(p, a, out, stride)
	}
	return nil
}

// mulGated computes gate and up of a into gu (rows of 2×FFN floats: gate
// half, up half) and the activation act(gate)·up into the gate half, in
// one dispatch.
func (s *State) mulGated(a acts, gate, up projection, gu []float32, stride int) error {
	if _, err := s.quantized(a, gate.w.VecType); err != nil {
		return err
	}
	xu, err := s.quantized(a, up.w.VecType)
	if err != nil {
		return err
	}
	xg, err := s.quantized(a, gate.w.VecType) // still there: a buffer of its own
	if err != nil {
		return err
	}
	if gate.w.LoRA == nil && up.w.LoRA == nil && gate.scale == nil && up.scale == nil {
		s.e.MatMulGated(gate.part(xg, gu, stride), up.part(xu, gu, stride), a.n, s.act)
		return nil
	}
	// The corrections and scales come before the activation: the
	// products, then them, then the activation over each token's row, in
	// three steps.
	parts := [2]ops.Part{gate.part(xg, gu, stride), up.part(xu, gu, stride)}
	s.e.MatMulParts(parts[:], a.n)
	s.finish(gate, a, gu, stride)
	s.finish(up, a, gu, stride)
	F := gate.rows
	if F == 0 {
		F = gate.w.Rows
	}
	for t := range a.n {
		row := gu[t*stride:]
		s.act(row[gate.off:gate.off+F], row[up.off:up.off+F])
	}
	return nil
}

// mulAdd computes w·a into out and adds it to acc (a residual connection)
// in the same dispatch.
func (s *State) mulAdd(w *ops.Matrix, a acts, out []float32, stride int, acc []float32, accStride int) error {
	xq, err := s.quantized(a, w.VecType)
	if err != nil {
		return err
	}
	if w.LoRA == nil {
		s.e.MatMulAdd(w, xq, a.n, out, stride, acc, accStride)
		return nil
	}
	s.e.MatMul(w, xq, a.n, out, stride)
	s.addLoRA(w, 0, 0, a, out, stride)
	for t := range a.n {
		ops.Add(acc[t*accStride:t*accStride+w.Rows], out[t*stride:])
	}
	return nil
}
