package model

import (
	"fmt"

	"github.com/lowmem/llm/kv"
)

// Cells is how many positions the state's KV cache holds before it must
// grow; Forward of positions past it fails with kv.ErrFull.
func (s *State) Cells() int { return s.cache.Cells() }

// Grow enlarges the KV cache to cells positions (kv.Cache.Grow: layer by
// layer, keeping what is stored) and the attention scratch with it.
func (s *State) Grow(cells int) error {
	if err := s.cache.Grow(cells); err != nil {
		return err
	}
	s.fitScratch()
	return nil
}

// fitScratch makes every worker's attention scratch hold what
// AttnScratchFloats says for as many positions as the cache has cells, the
// most one query can see, so that Attend serves a GQA group (or a
// non-causal pass several tokens) in one pass over the KV head.
func (s *State) fitScratch() {
	n := AttnScratchFloats(&s.m.Config, s.cache.Cells())
	for i := range s.scratch {
		if len(s.scratch[i]) < n {
			s.scratch[i] = nil // let the old one go before the new one is made
			s.scratch[i] = make([]float32, n)
		}
	}
}

// wholeQueries is how many tokens of a non-causal pass attend together:
// the most queries the attention kernels take in one pass over a KV head.
const wholeQueries = 4

// rowsQueries is how many tokens of a pass attending over its own rows
// (kv.AttendRows) attend together: as many as make the transposition of
// a KV head's values, once per block, small beside the block's tile
// products, and the block's keys and values read once for all of them
// (a block of 4 read jina-bert-v2's 2048-token pass's rows 512 times a
// head, strided 3·768 floats apart).
const rowsQueries = 64

// AttnScratchFloats is one worker's attention scratch for a cache of cells
// positions: the weights of a GQA group's query heads, or, for non-causal
// attention, of wholeQueries tokens' queries, with room for those queries
// and their outputs; when the pass attends over its own rows (ALiBi:
// jina-bert-v2), of rowsQueries tokens' queries, and room for a KV head's
// values transposed, which kv.AttendRows' weighted sums take as tile
// products. memplan counts it per thread.
func AttnScratchFloats(c *Config, cells int) int {
	if c.NonCausal {
		if c.rowsAttention() {
			return rowsQueries*(cells+c.HeadDimK+c.HeadDimV) + cells*c.HeadDimV
		}
		return wholeQueries * (cells + c.HeadDimK + c.HeadDimV)
	}
	return cells * c.maxGroup()
}

// Shift forgets positions keep..keep+drop-1 of the cache and renumbers the
// later ones (kv.Cache.ShiftLayers), re-rotating their keys with the RoPE
// each layer was rotated with (pair layout, base, frequencies, factors and
// rotated dimensions), so that the next Forward continues at position
// Len()-drop. The conv state carries on (a convolution sees no positions);
// its checkpoints are renumbered. The rotation is exact: LongRoPE's attention factor, which
// scaled the keys once when they were stored, is not applied again.
func (s *State) Shift(keep, drop int) error {
	err := s.cache.ShiftLayers(keep, drop, func(kl int, rows []float32, delta int) {
		il := s.m.modelLayer(kl)
		if !s.m.RopeLayer(il) {
			return // a NoPE layer's keys do not depend on their position
		}
		r := &s.rope
		if s.twoRopes && s.m.WindowedLayer(il) {
			r = &s.ropeSWA
		}
		r.Rotate(rows, s.m.LayerHeadDim(il), delta)
	})
	if err == nil {
		s.conv.shift(keep, drop)
	}
	return err
}

// NewCache makes an empty cache configured like the state's, with cells
// positions allocated, for filling (kv.Cache.ReadFrom) and then SetCache.
func (s *State) NewCache(cells int) (*kv.Cache, error) {
	cfg := s.cache.Config()
	cfg.Initial = max(cells, 1)
	return kv.New(cfg)
}

// SetCache replaces the state's cache with c, which must have the same
// configuration (as NewCache makes), and sizes the attention scratch for it.
// The old cache is dropped.
func (s *State) SetCache(c *kv.Cache) error {
	a, b := s.cache.Config(), c.Config()
	a.Initial, b.Initial = 0, 0
	if fmt.Sprint(a) != fmt.Sprint(b) {
		return fmt.Errorf("model: set cache: configuration %+v differs from the state's %+v: %w", b, a, kv.ErrInvalid)
	}
	s.cache = c
	s.fitScratch()
	return nil
}
