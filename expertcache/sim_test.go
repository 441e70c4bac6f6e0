package expertcache

import (
	"fmt"
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
func simulate(l Layout, sz Sizing, p Policy, trace []fetchEvent, skip int) simResult {
	cs, blockClass := classes(l)
	t := newTable(l, cs, blockClass, sz, p)
	prev := make([][]int32, len(l))
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
				t.slots[s].last = t.clock
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
			if s := t.victim(blockClass[il]); s >= 0 {
				t.place(s, il, int(e))
				t.slots[s].state = ready
				t.slots[s].pins++
				pinned = append(pinned, s)
			}
		}
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
func hitRateTable(l Layout, trace []fetchEvent, skip int, budgets []int64, names []string) (string, map[Policy][]simResult) {
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
			r := simulate(l, sz, p, trace, skip)
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
	pool := ops.NewPool(2)
	defer pool.Close()
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
	table, res := hitRateTable(l, rec.trace, 0, budgets, names)
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
