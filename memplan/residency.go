package memplan

import (
	"fmt"
	"slices"

	"github.com/lowmem/llm/kv"
)

// Residency is how the blocks of a model and the KV caches of its
// sessions share memory: one pool, the plan's limit minus every component
// that does not change while the model runs. While the caches are small
// every block that fits stays resident (mapped); as they grow, blocks
// leave memory one by one, in Order, and are read from disk on every
// pass into the read buffers; when the caches shrink they come back in
// reverse order. The same arithmetic decides at run time (package
// residency) and in the plan, so the plan predicts which blocks are read
// from disk at every context length.
type Residency struct {
	// Pool is the bytes the resident blocks, the read buffers and the KV
	// caches share.
	Pool int64
	// Buffers is the read buffers' memory, held while any block is read
	// from disk.
	Buffers int64
	// Blocks is each block's memory when resident (Shape.BlockMemory).
	Blocks []int64
	// Order is the order in which blocks leave memory (DiskOrder).
	Order []int
	// KV is a session's cache at the full context (kv.Config.Cells), the
	// schedule's subject.
	KV kv.Config
	// Batch is the prompt tokens per forward pass: how far a cache grows
	// ahead at once.
	Batch int
	// Experts is the budget of a mixture-of-experts model's expert cache
	// when its experts are read from disk (then no block moves, and Pool
	// is what the KV caches may hold), 0 otherwise.
	Experts int64
}

// Weights is the memory the blocks and the read buffers hold when the
// first n blocks of Order are read from disk.
func (r *Residency) Weights(n int) int64 {
	var b int64
	for _, il := range r.Order[n:] {
		b += r.Blocks[il]
	}
	if n > 0 {
		b += r.Buffers
	}
	return b
}

// OnDisk is the fewest blocks (the first of Order) that must be read
// from disk so that KV caches of kv bytes fit in the pool beside the
// rest, and false when even reading every block from disk leaves too
// little.
func (r *Residency) OnDisk(kv int64) (int, bool) {
	for n := 0; n <= len(r.Order); n++ {
		if r.Weights(n)+kv <= r.Pool {
			return n, true
		}
	}
	return len(r.Order), false
}

// MaxKV is the most the KV caches may hold: the pool with every block
// read from disk.
func (r *Residency) MaxKV() int64 {
	if len(r.Order) == 0 {
		return r.Pool
	}
	return r.Pool - r.Weights(len(r.Order))
}

// Clone returns a copy that shares no slices with r.
func (r Residency) Clone() Residency {
	r.Blocks = slices.Clone(r.Blocks)
	r.Order = slices.Clone(r.Order)
	if r.KV.Windows != nil {
		r.KV.Windows = slices.Clone(r.KV.Windows)
	}
	return r
}

// DiskOrder is the order in which n blocks leave memory: each prefix is
// spread evenly around the pass (which is a cycle: the reads for the first
// blocks of a pass overlap the last blocks of the one before), so that
// every block read from disk is read while resident blocks compute. The
// first is the middle block; each next one is the block farthest from
// those chosen (cyclic distance, ties to the lower index), so growing the
// set never moves a block that already left.
func DiskOrder(n int) []int {
	if n <= 0 {
		return nil
	}
	order := make([]int, 0, n)
	chosen := make([]bool, n)
	dist := func(a, b int) int {
		d := a - b
		if d < 0 {
			d = -d
		}
		return min(d, n-d)
	}
	for len(order) < n {
		best, bestD := -1, -1
		for i := range n {
			if chosen[i] {
				continue
			}
			d := n // nothing chosen yet: the middle wins below
			for _, j := range order {
				d = min(d, dist(i, j))
			}
			if len(order) == 0 {
				d = n - dist(i, n/2)
			}
			if d > bestD {
				best, bestD = i, d
			}
		}
		chosen[best] = true
		order = append(order, best)
	}
	return order
}

// GrowTarget is the cells a cache of c holding cur cells grows to so that
// need fit, when left bytes of memory are free for it without moving
// weights out of memory: the growth schedule (NextCells) with steps of
// StepBytes, or of what is left when that is less.
func GrowTarget(c kv.Config, cur, need int, left int64) int {
	step := StepCells(c, StepBytes)
	if left < StepBytes {
		step = StepCells(c, max(left, 0))
	}
	return NextCells(cur, need, c.Cells, step)
}

// Point is the memory at one step of a session's growth: the KV cache
// holding Cells cells and the blocks read from disk beside it.
type Point struct {
	Tokens   int   // the tokens that made the cache grow here
	Cells    int   // cells the cache holds
	KV       int64 // its bytes
	OnDisk   []int // blocks read from disk, ascending
	Resident int   // blocks resident
	// DiskBytes is what a pass reads from disk: the streamed blocks.
	DiskBytes int64
	// Total is the predicted memory of the model and the session at the
	// peak of this step (the growth's transient included): every other
	// component plus the blocks, buffers and KV cache.
	Total int64
}

// Schedule lists, for one session filling its context from empty in
// prompts of Batch tokens, every step at which its KV cache grows, with
// the blocks read from disk from then on: a prediction of what package
// residency will do (the growth steps are internal/seq's: GrowTarget with
// the room the resident blocks leave, or just what the tokens need when
// that does not fit). other is the memory of every component outside the
// pool. The list ends early where the cache cannot grow at all.
func (r *Residency) Schedule(other int64, upTo int) []Point {
	c := r.KV
	if upTo <= 0 || upTo > c.Cells {
		upTo = c.Cells
	}
	cells := InitialCells(c.Cells, false)
	streamed := 0
	var pts []Point
	// reserve is a KV budget's Reserve of kvb bytes: the blocks that must
	// leave do, or it fails.
	reserve := func(kvb int64) bool {
		n, ok := r.OnDisk(kvb)
		if ok {
			streamed = max(streamed, n)
		}
		return ok
	}
	c.Initial = cells
	reserve(kv.Bytes(c))
	pts = append(pts, r.point(other, 0, cells, kv.Bytes(c), 0, streamed))
	batch := max(r.Batch, 1)
	for tokens := min(batch, upTo); ; tokens = min(tokens+batch, upTo) {
		if tokens > cells {
			c.Initial = cells
			kvb := kv.Bytes(c)
			_, holds := kv.GrowBytes(c, cells, cells+1)
			left := r.Pool - r.Weights(streamed) - kvb - holds
			next := GrowTarget(c, cells, tokens, left)
			added, transient := kv.GrowBytes(c, cells, next)
			if !reserve(kvb + added + transient) {
				next = tokens
				added, transient = kv.GrowBytes(c, cells, next)
				if !reserve(kvb + added + transient) {
					break
				}
			}
			cells = next
			pts = append(pts, r.point(other, tokens, cells, kvb+added, transient, streamed))
		}
		if tokens >= upTo {
			break
		}
	}
	return pts
}

func (r *Residency) point(other int64, tokens, cells int, kvb, transient int64, n int) Point {
	p := Point{Tokens: tokens, Cells: cells, KV: kvb, Resident: len(r.Order) - n,
		OnDisk: slices.Sorted(slices.Values(r.Order[:n]))}
	for _, il := range p.OnDisk {
		p.DiskBytes += r.Blocks[il]
	}
	p.Total = other + r.Weights(n) + kvb + transient
	return p
}

// PeakAt is the predicted peak memory of the model and one session that
// held up to tokens tokens: the largest Total of the schedule up to there.
func (r *Residency) PeakAt(other int64, tokens int) int64 {
	var peak int64
	for _, p := range r.Schedule(other, tokens) {
		peak = max(peak, p.Total)
	}
	return peak
}

// String describes the residency for people: blocks, pool, buffers.
func (r *Residency) String() string {
	if r.Experts > 0 {
		return fmt.Sprintf("experts read from disk into a cache of %s; %s for the KV caches", FormatBytes(r.Experts), FormatBytes(r.Pool))
	}
	if len(r.Order) == 0 {
		return "no blocks"
	}
	return fmt.Sprintf("%d blocks of %s share %s with the KV caches; %s of read buffers while any is read from disk",
		len(r.Order), FormatBytes(r.Blocks[r.Order[0]]), FormatBytes(r.Pool), FormatBytes(r.Buffers))
}
