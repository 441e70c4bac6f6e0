package kv

import (
	"fmt"
	"os"
	"runtime/debug"
)

// releaseBytes is the size of old layer storage from which Grow hands the
// memory back to the operating system before enlarging the next layer.
// Below it the old storage is left to the garbage collector: forcing a
// collection costs more than the memory is worth.
const releaseBytes = 4 << 20

// Grow enlarges the cache so that positions up to cells-1 can be stored,
// keeping every stored key and value. cells is at most MaxCells(); a
// smaller or equal value than Cells() does nothing. Windowed layers grow
// only up to their ring.
//
// Layers are enlarged one at a time: a layer's new storage is allocated,
// its stored rows are copied, and its old storage is dropped before the
// next layer is touched, so a resize needs the new cache plus one old
// layer, never two whole caches. When an old layer is large (4 MiB or
// more) its memory is returned to the operating system before the next
// layer is allocated, so the process's resident size follows the same
// bound.
//
// Grow allocates; Store and Attend stay allocation-free between resizes.
func (c *Cache) Grow(cells int) error {
	if cells > c.cfg.Cells {
		return fmt.Errorf("kv: grow to %d cells: the cache holds at most %d: %w", cells, c.cfg.Cells, ErrFull)
	}
	if cells <= c.cells {
		return nil
	}
	for i := range c.layers {
		l := &c.layers[i]
		nc := min(cells, l.ring)
		if nc <= l.cells {
			continue
		}
		old := *l
		c.alloc(l, nc)
		if old.hi >= old.lo {
			c.copyRows(l, &old, old.lo, old.lo, old.hi-old.lo+1)
		}
		c.bytes += c.cfg.layerBytes(i, nc) - c.cfg.layerBytes(i, old.cells)
		oldBytes := c.cfg.layerBytes(i, old.cells)
		old = layer{}
		if oldBytes >= releaseBytes {
			debug.FreeOSMemory()
		}
	}
	c.cells = cells
	return nil
}

// GrowBytes returns the bytes Grow(cells) would add to Bytes(), and the
// largest single layer's old storage it holds while copying, i.e. the
// transient extra memory on top of the grown cache.
func (c *Cache) GrowBytes(cells int) (added, transient int64) {
	return GrowBytes(c.cfg, c.cells, cells)
}

// Touch empties the cache (as Truncate(0) does) and writes zeros through
// all of its storage, one element per page, so that the operating system
// backs every page with memory now, and the resident size shows it, rather
// than on first use, when a shortage could no longer be reported.
func (c *Cache) Touch() {
	c.Truncate(0)
	page := os.Getpagesize()
	for i := range c.layers {
		l := &c.layers[i]
		zeroPages(l.k16, page/2)
		zeroPages(l.v16, page/2)
		zeroPages(l.k8, page)
		zeroPages(l.v8, page)
		zeroPages(l.ks, page/4)
		zeroPages(l.vs, page/4)
		zeroPages(l.k4, page)
		zeroPages(l.v4, page)
		zeroPages(l.rec.rk, page/2)
		zeroPages(l.rec.rv, page/2)
	}
}

// zeroPages zeroes one element every step elements, and the last one, so
// that a write lands on each page of s.
func zeroPages[T uint16 | int8 | byte | float32](s []T, step int) {
	step = max(step, 1)
	for i := 0; i < len(s); i += step {
		s[i] = 0
	}
	if n := len(s); n > 0 {
		s[n-1] = 0
	}
}

// copyRows copies the rows of n consecutive positions, from..from+n-1 of
// src, to positions to..to+n-1 of dst (both layers of c, possibly the
// same one), for every KV head: keys, values and scales. Positions are
// copied in ascending order in runs that wrap neither ring, so moving a
// layer's positions down within itself (to < from) is safe as long as the
// positions involved map to distinct cells.
func (c *Cache) copyRows(dst, src *layer, from, to, n int) {
	dk, dv := src.dk, src.dv
	kb, vb := q4RowBytes(dk), q4RowBytes(dv)
	for n > 0 {
		sc, dc := src.cell(from), dst.cell(to)
		run := min(n, src.cells-sc, dst.cells-dc)
		for h := range src.nh {
			s, d := h*src.cells+sc, h*dst.cells+dc
			switch c.cfg.Type {
			case F16:
				copy(dst.k16[d*dk:(d+run)*dk], src.k16[s*dk:(s+run)*dk])
				copy(dst.v16[d*dv:(d+run)*dv], src.v16[s*dv:(s+run)*dv])
			case Int4:
				copy(dst.k4[d*kb:(d+run)*kb], src.k4[s*kb:(s+run)*kb])
				copy(dst.v4[d*vb:(d+run)*vb], src.v4[s*vb:(s+run)*vb])
			default:
				copy(dst.k8[d*dk:(d+run)*dk], src.k8[s*dk:(s+run)*dk])
				copy(dst.v8[d*dv:(d+run)*dv], src.v8[s*dv:(s+run)*dv])
				copy(dst.ks[d:d+run], src.ks[s:s+run])
				copy(dst.vs[d:d+run], src.vs[s:s+run])
			}
		}
		from, to, n = from+run, to+run, n-run
	}
}
