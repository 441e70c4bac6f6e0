package expertcache

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/model"
)

// fetchEvent is one Fetch of a routing trace.
type fetchEvent struct {
	il  int32
	ids []int32
}

// recorder is an ExpertSource that records every Fetch and passes the calls
// on to src.
type recorder struct {
	model.ExpertSource
	mu    sync.Mutex
	trace []fetchEvent
}

func (r *recorder) Fetch(il int, ids []int32) {
	r.mu.Lock()
	r.trace = append(r.trace, fetchEvent{int32(il), slices.Clone(ids)})
	r.mu.Unlock()
	r.ExpertSource.Fetch(il, ids)
}

// simResult is what a policy made of a trace.
type simResult struct {
	requests, hits int64
	// predictable is the misses of a one-token Fetch whose expert the
	// previous token's Fetch of the same block used too: the misses a
	// prefetch of the previous token's experts would have hidden.
	predictable int64
}

func (r simResult) hitRate() float64 { return float64(r.hits) / float64(max(r.requests, 1)) }

// simulate runs trace through the cache's bookkeeping alone (reads are
// instant) with the slots sz gives. The first skip events warm the cache
// and are not counted.
func simulate(l Layout, sz Sizing, p Policy, k int, trace []fetchEvent, skip int) simResult {
	cs, blockClass := classes(l, true)
	t := newTable(l, cs, blockClass, sz, p, k)
	prev := make([][]int32, len(l.Experts))
	var r simResult
	var pinned []int32
	for n, ev := range trace {
		il := int(ev.il)
		t.clock++
		counted := n >= skip
		pinned = pinned[:0]
		var missed []int32
		for _, e := range ev.ids {
			t.count(il, int(e))
			if s := t.find(il, int(e)); s >= 0 {
				t.slots[s].pins++
				t.hit(s)
				pinned = append(pinned, s)
				if counted {
					r.hits++
				}
			} else {
				missed = append(missed, e)
			}
		}
		for _, e := range missed {
			if counted && len(ev.ids) <= 8 && slices.Contains(prev[il], e) {
				r.predictable++
			}
			if s, win := t.victim(blockClass[il], il, int(e)); s >= 0 {
				t.place(s, il, int(e), win)
				t.slots[s].state = ready
				t.slots[s].pins++
				pinned = append(pinned, s)
			}
		}
		t.observe(blockClass[il], len(missed))
		if counted {
			r.requests += int64(len(ev.ids))
		}
		for _, s := range pinned {
			t.slots[s].pins--
		}
		prev[il] = ev.ids
	}
	return r
}

// overlap is the mean share of a one-token Fetch's experts that the
// previous one-token Fetch of the same block used too.
func overlap(trace []fetchEvent, blocks, k int) float64 {
	prev := make([][]int32, blocks)
	var same, total int
	for _, ev := range trace {
		if len(ev.ids) != k {
			prev[ev.il] = nil
			continue
		}
		if p := prev[ev.il]; p != nil {
			for _, e := range ev.ids {
				if slices.Contains(p, e) {
					same++
				}
			}
			total += k
		}
		prev[ev.il] = ev.ids
	}
	return float64(same) / float64(max(total, 1))
}

// hitRateTable simulates both policies over the given budgets and
// formats the hit rates.
func hitRateTable(l Layout, k int, trace []fetchEvent, skip int, budgets []int64, names []string) (string, map[Policy][]simResult) {
	var b strings.Builder
	res := map[Policy][]simResult{}
	fmt.Fprintf(&b, "%-10s %6s %8s", "budget", "slots", "uniform")
	for _, p := range []Policy{LFU, LRU} {
		fmt.Fprintf(&b, " %8v", p)
	}
	fmt.Fprintf(&b, " %12s\n", "lru-prevtok")
	for i, budget := range budgets {
		sz, err := Size(l, budget)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "%-10s %6d %8.3f", names[i], sz.Slots, sz.HitRateBound())
		for _, p := range []Policy{LFU, LRU} {
			r := simulate(l, sz, p, k, trace, skip)
			res[p] = append(res[p], r)
			fmt.Fprintf(&b, " %8.3f", r.hitRate())
		}
		r := res[LRU][len(res[LRU])-1]
		fmt.Fprintf(&b, " %12.3f\n", float64(r.predictable)/float64(max(r.requests-r.hits, 1)))
	}
	return b.String(), res
}

// Hit rates of the policies on the routing trace of the synthetic model
// (a prompt, then one token at a time), for the record: random weights
// route with little structure, so these say how the policies rank, not
// what a real model reaches. Exact checks: a cache of every expert misses
// each expert once, and no policy beats it.
func TestPolicyHitRates(t *testing.T) {
	pool := newPool(t, 2)
	path, m, _ := writeModel(t, moeSpec())
	l := LayoutOf(m)
	c := newCache(t, m, path, budgetFor(t, l, 48))
	rec := &recorder{ExpertSource: c}
	m.ExpertSource = rec
	toks := tokens(300)
	runAll(t, m, pool, toks[:32], 32)
	st, err := m.NewState(ops.NewExec(pool), model.StateOptions{Batch: 1, Cells: 512})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, m.Vocab)
	tok := toks[0]
	for pos := range 300 { // greedy decoding
		if err := st.Forward([]int32{tok}, pos, out); err != nil {
			t.Fatal(err)
		}
		tok = int32(slices.Index(out, slices.Max(out)))
	}
	var budgets []int64
	var names []string
	for _, n := range []int{4, 8, 12, 16, 24, 32, 48} {
		budgets = append(budgets, budgetFor(t, l, n))
		names = append(names, fmt.Sprintf("%d slots", n))
	}
	table, res := hitRateTable(l, m.ExpertsUsed, rec.trace, 0, budgets, names)
	t.Logf("synthetic qwen3moe, 3 blocks × 16 experts, 4 per token; %d fetches; previous token's experts predict %.3f of a block's\n%s",
		len(rec.trace), overlap(rec.trace, m.Layers, m.ExpertsUsed), table)
	distinct := map[[2]int32]bool{}
	var requests int64
	for _, ev := range rec.trace {
		for _, e := range ev.ids {
			distinct[[2]int32{ev.il, e}] = true
		}
		requests += int64(len(ev.ids))
	}
	for _, p := range []Policy{LFU, LRU} {
		all := res[p][len(res[p])-1]
		if all.requests != requests || all.hits != requests-int64(len(distinct)) {
			t.Errorf("%v with every expert cached: %d hits of %d, want %d", p, all.hits, all.requests, requests-int64(len(distinct)))
		}
		for i := 1; i < len(res[p]); i++ {
			if res[p][i].hits > all.hits {
				t.Errorf("%v: %d hits with %s, more than with every expert", p, res[p][i].hits, names[i])
			}
		}
	}
}

// zipfTrace is a model of decode routing, for ranking policies where no
// real model's trace is at hand: in each of blocks blocks, experts of
// Zipf(s) popularity (a random order per block), k distinct per token;
// each of a token's k picks repeats one of the previous token's experts
// with probability rho (temporal locality), else draws by popularity.
func zipfTrace(blocks, experts, k, tokens int, s, rho float64, seed uint64) []fetchEvent {
	r := rand.New(rand.NewPCG(seed, 1))
	cum := make([][]float64, blocks)
	perm := make([][]int, blocks)
	for il := range blocks {
		perm[il] = r.Perm(experts)
		cum[il] = make([]float64, experts)
		var sum float64
		for i := range experts {
			sum += 1 / math.Pow(float64(i+1), s)
			cum[il][i] = sum
		}
	}
	prev := make([][]int32, blocks)
	var tr []fetchEvent
	for range tokens {
		for il := range blocks {
			ids := make([]int32, 0, k)
			for len(ids) < k {
				var e int32
				if p := prev[il]; p != nil && r.Float64() < rho {
					e = p[r.IntN(len(p))]
				} else {
					c := cum[il]
					i, _ := slices.BinarySearch(c, r.Float64()*c[len(c)-1])
					e = int32(perm[il][min(i, experts-1)])
				}
				if !slices.Contains(ids, e) {
					ids = append(ids, e)
				}
			}
			slices.Sort(ids)
			prev[il] = ids
			tr = append(tr, fetchEvent{int32(il), ids})
		}
	}
	return tr
}

// uniformLayout is a layout of blocks×experts experts of one size.
func uniformLayout(blocks, experts int) Layout {
	l := Layout{Experts: make([][][3]model.Range, blocks)}
	off := int64(1 << 20)
	for il := range l.Experts {
		l.Experts[il] = make([][3]model.Range, experts)
		for e := range l.Experts[il] {
			for k := range 3 {
				l.Experts[il][e][k] = model.Range{Off: off, Len: 900_000}
				off += 900_000
			}
		}
	}
	return l
}

// Hit rates on modelled routing in the qwen3-30b-a3b shape (48 blocks of
// 128 experts, 8 per token), for the record. Exact check: LFU is never
// much worse than LRU on them.
func TestPolicyHitRatesZipf(t *testing.T) {
	const blocks, experts, k = 48, 128, 8
	l := uniformLayout(blocks, experts)
	cs, _ := classes(l, true)
	var budgets []int64
	var names []string
	shares := []float64{0.05, 0.1, 0.2, 0.3}
	models := []struct{ s, rho float64 }{{0.6, 0.2}, {1.0, 0.2}, {1.0, 0.4}, {1.2, 0.1}}
	tokens, skip := 300, 60
	if raceEnabled || testing.Short() { // the race detector makes it minutes
		shares, models, tokens, skip = shares[1:3], models[2:3], 150, 30
	}
	for _, f := range shares {
		n := int(f * blocks * experts)
		budgets = append(budgets, int64(n)*cs[0].size+tableBytes(n, blocks*experts))
		names = append(names, fmt.Sprintf("%.0f%%", 100*f))
	}
	for _, m := range models {
		tr := zipfTrace(blocks, experts, k, tokens, m.s, m.rho, 1)
		table, res := hitRateTable(l, k, tr, skip*blocks, budgets, names)
		t.Logf("zipf s=%.1f, repeat %.1f: previous token predicts %.3f\n%s", m.s, m.rho, overlap(tr, blocks, k), table)
		for i := range budgets {
			if lfu, lru := res[LFU][i].hitRate(), res[LRU][i].hitRate(); lfu < lru-0.02 {
				t.Errorf("s=%.1f rho=%.1f %s: LFU %.3f, LRU %.3f", m.s, m.rho, names[i], lfu, lru)
			}
		}
	}
}
