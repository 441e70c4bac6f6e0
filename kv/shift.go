package kv

import (
	"fmt"

	"github.com/lowmem/llm/quant"
)

// RotateFunc re-rotates keys that Shift moved by delta positions (delta is
// negative: keys move towards the start). rows holds whole key heads,
// the layer's HeadDimK floats each, all to be rotated by the same delta; the
// function rotates them in place. For RoPE models it applies the rotary
// embedding of position delta, which turns a key rotated for position p
// into the key for position p+delta.
type RotateFunc func(rows []float32, delta int)

// LayerRotateFunc is a RotateFunc that also gets the layer, for models
// whose layers rotate differently (Gemma 3's local layers have a RoPE base
// of their own).
type LayerRotateFunc func(layer int, rows []float32, delta int)

// shiftChunk is how many rows Shift converts to float32 per RotateFunc call.
const shiftChunk = 256

// Shift makes room in a full context: it forgets positions keep..keep+drop-1
// and renumbers every later position p as p-drop, so that the cache then
// holds Len()-drop positions and the next Store is at position Len()-drop.
//
// In every layer that still holds all of its positions from 0 (every
// full-attention layer, and a windowed layer whose ring has not wrapped)
// the rows of positions keep+drop and later are moved down by drop within
// each KV head, and their keys are passed to rotate with delta -drop; the
// first keep positions stay as they are. A windowed layer whose ring has
// already overwritten its oldest positions keeps its ring as it is: all of
// its positions are renumbered by -drop (those that would become negative
// are forgotten) and every key is re-rotated, so the window keeps seeing
// the most recent tokens at their true distances.
//
// F16 keys are widened to float32 for rotate and rounded back; Int8 keys are
// dequantized and quantized again with a new scale; Int4 keys are
// dequantized, rotated back from the Hadamard domain, given to rotate,
// rotated forward and quantized again. Values are only moved.
// rotate may be nil for a model without positional rotation. Shift
// allocates a small buffer; it is not meant for every step.
func (c *Cache) Shift(keep, drop int, rotate RotateFunc) error {
	var lr LayerRotateFunc
	if rotate != nil {
		lr = func(_ int, rows []float32, delta int) { rotate(rows, delta) }
	}
	return c.ShiftLayers(keep, drop, lr)
}

// ShiftLayers is Shift with the rotation chosen per layer.
func (c *Cache) ShiftLayers(keep, drop int, rotateLayer LayerRotateFunc) error {
	n := c.Len()
	switch {
	case keep < 0 || drop < 0:
		return fmt.Errorf("kv: shift: keep %d and drop %d must not be negative: %w", keep, drop, ErrInvalid)
	case keep+drop > n:
		return fmt.Errorf("kv: shift: keep %d + drop %d exceeds the %d positions stored: %w", keep, drop, n, ErrInvalid)
	case drop == 0:
		return nil
	}
	for i := range c.layers {
		if l := &c.layers[i]; l.hi != n-1 {
			return fmt.Errorf("kv: shift: layer %d holds positions up to %d, others up to %d (shift between forward passes): %w", i, l.hi, n-1, ErrInvalid)
		}
	}
	buf := make([]float32, shiftChunk*c.maxHeadDimK())
	for i := range c.layers {
		l := &c.layers[i]
		var rotate RotateFunc
		if rotateLayer != nil {
			rotate = func(rows []float32, delta int) { rotateLayer(i, rows, delta) }
		}
		// The F16 copies of moved positions are not re-rotated: attention
		// reads those positions from their q4_0 rows until they are
		// stored again.
		if l.lo == 0 {
			l.rec.forget(keep)
			moved := l.hi - (keep + drop) + 1
			if moved > 0 {
				c.copyRows(l, l, keep+drop, keep, moved)
				c.rotateRows(l, keep, moved, -drop, rotate, buf)
			}
			l.hi -= drop
			continue
		}
		// A wrapped ring: renumber in place by moving the cell origin.
		l.rec.forget(0)
		lo := max(l.lo-drop, 0)
		l.off = (l.off + drop) % l.cells
		l.lo, l.hi = lo, l.hi-drop
		if l.hi >= l.lo {
			c.rotateRows(l, l.lo, l.hi-l.lo+1, -drop, rotate, buf)
		}
	}
	return nil
}

// rotateRows applies rotate to the keys of positions pos..pos+n-1 of l, in
// every KV head, through buf (a whole number of key rows).
func (c *Cache) rotateRows(l *layer, pos, n, delta int, rotate RotateFunc, buf []float32) {
	if rotate == nil || n <= 0 {
		return
	}
	dk := l.dk
	maxRows := len(buf) / dk
	for n > 0 {
		cell := l.cell(pos)
		run := min(n, l.cells-cell, maxRows)
		for h := range l.nh {
			row := h*l.cells + cell
			f := buf[:run*dk]
			switch c.cfg.Type {
			case F16:
				k := l.k16[row*dk : (row+run)*dk]
				for i, x := range k {
					f[i] = f16(x)
				}
				rotate(f, delta)
				for i, x := range f {
					k[i] = quant.FP32ToFP16(x)
				}
				continue
			case Int4:
				// RoPE acts on the keys as the model made them: undo the
				// Hadamard rotation, apply RoPE, rotate and quantize again,
				// as llama.cpp's K-shift does for a rotated cache.
				rb := q4RowBytes(dk)
				k := l.k4[row*rb : (row+run)*rb]
				for r := range run {
					dequantizeQ4(f[r*dk:(r+1)*dk], k[r*rb:(r+1)*rb])
				}
				hadamard(f, l.rotK)
				rotate(f, delta)
				hadamard(f, l.rotK)
				for r := range run {
					quantizeQ4(k[r*rb:(r+1)*rb], f[r*dk:(r+1)*dk])
				}
				continue
			}
			for r := range run {
				s := l.ks[row+r]
				for i, x := range l.k8[(row+r)*dk : (row+r+1)*dk] {
					f[r*dk+i] = float32(x) * s
				}
			}
			rotate(f, delta)
			for r := range run {
				l.ks[row+r] = quantizeI8(l.k8[(row+r)*dk:(row+r+1)*dk], f[r*dk:(r+1)*dk])
			}
		}
		pos, n = pos+run, n-run
	}
}
