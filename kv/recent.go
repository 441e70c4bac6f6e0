package kv

import "github.com/lowmem/llm/quant"

// recentSinks is how many of a sequence's first positions an Int4 cache
// with Config.Recent also keeps in F16. Attention heads park much of their
// weight on the first tokens ("attention sinks"), so their keys' rounding
// moves every later softmax. On the golden fixtures' long prompts each
// doubling from 4 to 32 lowered the mean KL by up to 22 % on every file but
// gemma3 (within 3 %), where 32 more newest positions (Recent 160) did less
// than 4 more sinks; 16 costs 12 F16 rows per layer and KV head more than
// 4 (4 MB on Gemma-2-9B). Saved states record it (KVC4).
const recentSinks = 16

// DefaultRecent is the Config.Recent model.KVConfig gives an Int4 cache.
// Against llama.cpp's F16 cache on the golden fixtures (TestGoldenParityInt4)
// (with the recentSinks first positions) it takes the mean KL of the short
// prompts from 0.05–0.41 to 0.001–0.018, and of the 620–690-token ones to
// 0.006–0.016 on tiny-llama and the gemmas (0.056–0.19 on qwen3, phi3 and
// qwen2, from 0.08–0.27), for 144 F16 rows per layer and KV head — 50 MB
// for Gemma-2-9B, whose Int4 cache at 8192 positions is 790 MB.
const DefaultRecent = 128

// recent is an Int4 layer's F16 copy of its newest and first positions:
// slot s of KV head h holds a position's rotated key at
// rk[(h·slots+s)·HeadDimK] and its rotated value likewise in rv, and
// pos[s] says which position that is (-1: none). Positions below
// recentSinks have slots of their own; the others share the next Recent
// slots round-robin, so a slot always holds the newest position that maps
// to it, and a position is read from F16 only while its slot still holds
// it.
type recent struct {
	rk, rv []uint16
	pos    []int32
}

// recentLen is how many of the newest positions a layer of cfg keeps in
// F16: Config.Recent, but at most an eighth of Cells, so that the F16 rows
// never cost more than half of what 4 bits save (a cache of fewer than 8
// cells keeps none, and no sinks either).
func (cfg *Config) recentLen() int {
	if cfg.Type != Int4 {
		return 0
	}
	return min(cfg.Recent, cfg.Cells/8)
}

// recentSlots is the number of F16 slots of a layer of cfg.
func (cfg *Config) recentSlots() int {
	if cfg.recentLen() <= 0 {
		return 0
	}
	return recentSinks + cfg.recentLen()
}

// recentBytes is the storage of layer i's recent slots.
func (cfg *Config) recentBytes(i int) int64 {
	s, g := int64(cfg.recentSlots()), cfg.geometry(i)
	return s*int64(g.KVHeads)*2*int64(g.HeadDimK+g.HeadDimV) + 4*s
}

// allocRecent gives l its recent slots, all empty.
func (c *Cache) allocRecent(l *layer) {
	s := c.cfg.recentSlots()
	if s == 0 {
		return
	}
	l.rec = recent{
		rk:  make([]uint16, s*l.nh*l.dk),
		rv:  make([]uint16, s*l.nh*l.dv),
		pos: make([]int32, s),
	}
	l.rec.forget(0)
}

// slot is the slot position pos maps to.
func (c *Cache) slot(pos int) int {
	if pos < recentSinks {
		return pos
	}
	return recentSinks + (pos-recentSinks)%c.recent
}

// forget empties every slot holding position from or later.
func (r *recent) forget(from int) {
	for s, p := range r.pos {
		if int(p) >= from {
			r.pos[s] = -1
		}
	}
}

// storeRecent keeps head h's rotated key kr and value vr of position pos
// in F16, in the slot's rows; the slot's tag is Store's to set (stored),
// once for all heads.
func (c *Cache) storeRecent(l *layer, h, pos int, kr, vr []float32) {
	dk, dv, s := l.dk, l.dv, c.slot(pos)
	row := h*len(l.rec.pos) + s
	for i, x := range kr {
		l.rec.rk[row*dk+i] = quant.FP32ToFP16(x)
	}
	for i, x := range vr {
		l.rec.rv[row*dv+i] = quant.FP32ToFP16(x)
	}
}

// int4Parts splits the positions lo..pos an Int4 layer's query sees into
// the sinks held in F16 (lo..a-1), the q4_0 rows (a..b-1) and the newest
// positions held in F16 (b..pos).
func (c *Cache) int4Parts(l *layer, lo, pos int) (a, b int) {
	a, b = lo, pos+1
	if len(l.rec.pos) == 0 {
		return a, b
	}
	for a <= pos && a < recentSinks && int(l.rec.pos[a]) == a {
		a++
	}
	for b > a && b > pos+1-c.recent && int(l.rec.pos[c.slot(b-1)]) == b-1 {
		b--
	}
	return a, b
}

// recentRuns calls f for the runs of slots holding positions p0..p1-1, in
// position order: f(off, slot, run) covers run consecutive slots from slot,
// for the positions off..off+run-1 after p0.
func (c *Cache) recentRuns(p0, p1 int, f func(off, slot, run int)) {
	for p := p0; p < p1; {
		s := c.slot(p)
		run := p1 - p
		if p < recentSinks {
			run = min(run, recentSinks-p)
		} else {
			run = min(run, recentSinks+c.recent-s)
		}
		f(p-p0, s, run)
		p += run
	}
}
