package model

import (
	"cmp"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/quant"
)

// x8Block names the block matrices the forward pass multiplies whole (or,
// phi3's fused ffn_up, in two halves of FFN rows): the ones that may be
// held in the X8 layout. The router is not (its rows, the experts, are few).
var x8Block = map[string]bool{
	"attn_q.weight": true, "attn_k.weight": true, "attn_v.weight": true, "attn_qkv.weight": true,
	"attn_output.weight": true, "ffn_gate.weight": true, "ffn_up.weight": true, "ffn_down.weight": true,
	"shortconv.in_proj.weight": true, "shortconv.out_proj.weight": true, // lfm2
	"ssm_in.weight": true, "ssm_out.weight": true, // granitehybrid
	"attn_gate.weight": true, "ssm_beta.weight": true, "ssm_alpha.weight": true, "ssm_ba.weight": true, // qwen35, qwen3next
	"ffn_gate_shexp.weight": true, "ffn_up_shexp.weight": true, "ffn_down_shexp.weight": true, // shared experts
}

// x8Experts names the 3-D expert tensors that may be held in the X8
// layout, each expert's rows a whole number of groups of 8: a resident
// model multiplies each expert's slice as it would a block matrix (an
// expert cache reads experts from the file instead, in their row layout,
// and a plan with one never repacks).
var x8Experts = map[string]bool{"ffn_gate_exps.weight": true, "ffn_up_exps.weight": true, "ffn_down_exps.weight": true,
	"ffn_gate_up_exps.weight": true} // fused gate and up (Qwen 3.5 MoE, Gemma 4): two bands an expert

// RepackableTensor reports whether the tensor name of type t and ggml dims
// (dims[0] the row length) may be held in the X8 layout (quant.RepackX8)
// by a model of configuration c whose weights stay resident: a matrix of
// a type with an X8 layout (Q4_0, Q8_0, Q5_0, Q4_K, Q5_K, Q6_K, IQ4_XS,
// Q3_K, Q2_K, IQ4_NL, MXFP4, IQ3_S and the lattice types) of a block, a block's 3-D expert tensor
// (gpt-oss's MXFP4 experts among them), or the
// output matrix when it is not the embedding, whose rows (each expert's)
// and the bands of them the forward pass reads are whole groups of 8, for
// which this CPU has X8 kernels. Only on Linux, where the mapped rows can
// be given back once repacked (mem.Mapping.Release): the layout must never
// make two copies. The memory plan (from the header) and the repacking at
// load (from the model) decide with it alike.
func RepackableTensor(c *Config, name string, t quant.Type, dims []int64) bool {
	if runtime.GOOS != "linux" || quant.X8BlockBytes(t) == 0 || len(dims) < 2 || len(dims) > 3 || dims[1]%8 != 0 || dims[0] > 1<<30 {
		return false
	}
	if name != "output.weight" {
		rest, ok := strings.CutPrefix(name, "blk.")
		if !ok {
			return false
		}
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			rest = rest[i+1:]
		}
		switch {
		case len(dims) == 3:
			if !x8Experts[rest] || dims[2] <= 0 || rest == "ffn_gate_up_exps.weight" && dims[1]%16 != 0 {
				return false
			}
		case !x8Block[rest] || rest == "ffn_up.weight" && c.FFN%8 != 0:
			return false
		}
	} else if len(dims) != 2 {
		return false
	}
	_, ok := quant.X8(t, int(dims[0]))
	return ok
}

// RepackedTensorBytes is the size in the X8 layout of a tensor that
// RepackableTensor allows: every row of it (every expert's) in groups of 8.
func RepackedTensorBytes(t quant.Type, dims []int64) int64 {
	rows := dims[1]
	if len(dims) == 3 {
		rows *= dims[2]
	}
	return int64(quant.X8Bytes(t, int(rows), int(dims[0])))
}

// RepackUnit is one matrix that Repack may hold in the X8 layout: a block
// matrix, the output matrix, or a block's whole 3-D expert tensor, whose
// experts' matrices (Experts, the ones the forward pass multiplies, in
// the tensor's order: of a fused gate and up each expert's gate, then
// its up) then each take their slice of the repacked rows.
type RepackUnit struct {
	*ops.Matrix
	Experts []*ops.Matrix
}

// Repackable lists the matrices of m that RepackableTensor allows, blocks first
// in order, then the output matrix, and none already in the X8 layout.
func (m *Model) Repackable() []RepackUnit {
	var us []RepackUnit
	add := func(w *ops.Matrix, dims []int64, experts []*ops.Matrix) {
		if !w.X8() && RepackableTensor(&m.Config, w.T.Name, w.T.Type, dims) {
			us = append(us, RepackUnit{w, experts})
		}
	}
	for i := range m.Blocks {
		L := &m.Blocks[i]
		for _, w := range L.matrices() {
			if *w != nil {
				add(*w, []int64{int64((*w).Cols), int64((*w).Rows)}, nil) // the router is no x8Block matrix
			}
		}
		n := len(L.Experts)
		for k, w := range L.expertStacks {
			if w == nil || n == 0 {
				continue
			}
			var parts []*ops.Matrix
			for e := range L.Experts {
				x := &L.Experts[e]
				parts = append(parts, [3]*ops.Matrix{x.Gate, x.Up, x.Down}[k])
				if k == 0 && x.Up.T.Name == w.T.Name {
					parts = append(parts, x.Up) // the same tensor's second band
				}
			}
			add(w, []int64{int64(w.Cols), int64(w.Rows / n), int64(n)}, parts)
		}
	}
	if !m.Tied && m.Output != nil {
		add(m.Output, []int64{int64(m.Output.Cols), int64(m.Output.Rows)}, nil)
	}
	return us
}

// RepackedBytes is the size of w, one of m.Repackable(), in the X8 layout
// (Q4_K, Q5_K: 32 bytes a group's super-block more than in place).
func RepackedBytes(w *ops.Matrix) int { return quant.X8Bytes(w.T.Type, w.Rows, w.Cols) }

// Repack holds u, one of Model.Repackable(), in the X8 layout in dst
// (exactly RepackedBytes(u.Matrix) bytes; each of u.Experts takes its
// slice of it): the rows are repacked into dst, about chunk
// bytes of them at a time (whole groups of 8 rows), by the threads of pool
// (nil: the calling goroutine alone), and done, when not nil, is told
// after each piece the range of the matrix's bytes (offset from the
// tensor's start, length) that will not be read again, so the caller may
// release those mapped pages while the rest is still to come; with a pool
// it is called from several goroutines at once. Products read only dst
// from then on. It is meant for load time, before any forward pass.
func (u RepackUnit) Repack(dst []byte, chunk int, pool *ops.Pool, done func(off, n int64)) error {
	w := u.Matrix
	if err := repack(w, dst, chunk, pool, done); err != nil {
		return err
	}
	if len(u.Experts) == 0 {
		return nil
	}
	k8, _ := quant.X8(w.T.Type, w.Cols)
	per := len(dst) / len(u.Experts)
	for e, part := range u.Experts {
		if err := part.UseX8(dst[e*per:(e+1)*per], k8); err != nil {
			return err
		}
	}
	return nil
}

// repack is Repack of one matrix.
func repack(w *ops.Matrix, dst []byte, chunk int, pool *ops.Pool, done func(off, n int64)) error {
	k, ok := quant.X8(w.T.Type, w.Cols)
	if !ok {
		return fmt.Errorf("model: tensor %q: no X8 kernels for %v rows of %d", w.T.Name, w.T.Type, w.Cols)
	}
	groups := w.Rows / 8
	if w.Rows%8 != 0 || len(dst) != RepackedBytes(w) || len(w.T.Data) < w.Rows*w.T.RowBytes() {
		return fmt.Errorf("model: tensor %q: %d rows and %d bytes to repack into %d", w.T.Name, w.Rows, len(w.T.Data), len(dst))
	}
	t := &repackTask{w: w, dst: dst, done: done, groups: groups, src: 8 * w.T.RowBytes(), x8: len(dst) / max(groups, 1)}
	t.step = max(1, chunk/t.src)
	if pool != nil {
		// Pieces enough for every thread, even of a matrix smaller than
		// chunk (TinyLlama's are 2–7 MB).
		t.step = max(1, min(t.step, groups/(4*pool.Threads())))
	}
	if pool == nil || groups <= t.step {
		t.Do(0, 0, 1)
	} else {
		// One range a thread: each takes the next piece in the file's
		// order until none is left, so the pieces in flight are
		// neighbours and the file is still read as one stream.
		pool.For(pool.Threads(), 1, t)
	}
	if err := t.err; err != nil {
		return fmt.Errorf("model: tensor %q: %w", w.T.Name, err)
	}
	return w.UseX8(dst, k)
}

// repackTask is Repack's work: pieces of step groups of 8 rows, taken in
// order from next by every thread that runs Do.
type repackTask struct {
	w                     *ops.Matrix
	dst                   []byte
	done                  func(off, n int64)
	groups, step, src, x8 int
	next                  atomic.Int64
	mu                    sync.Mutex
	err                   error // the first piece's error
}

func (t *repackTask) Do(_, _, _ int) {
	for {
		g0 := int(t.next.Add(int64(t.step))) - t.step
		if g0 >= t.groups {
			return
		}
		g1 := min(t.groups, g0+t.step)
		if err := quant.RepackX8(t.w.T.Type, t.dst[g0*t.x8:g1*t.x8], t.w.T.Data[g0*t.src:g1*t.src], 8*(g1-g0), t.w.Cols); err != nil {
			t.mu.Lock()
			t.err = cmp.Or(t.err, err)
			t.mu.Unlock()
			return
		}
		if t.done != nil {
			t.done(int64(g0*t.src), int64((g1-g0)*t.src))
		}
	}
}
