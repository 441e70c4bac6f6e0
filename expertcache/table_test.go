package expertcache

import (
	"errors"
	"slices"
	"testing"

	"github.com/lowmem/llm/model"
)

// testTable is a table of one block of n equal experts and the given
// number of slots.
func testTable(t *testing.T, p Policy, n, slots, k int) *table {
	t.Helper()
	l := uniformLayout(1, n)
	cs, bc := classes(l, true)
	budget := int64(slots)*cs[0].size + tableBytes(slots, n)
	sz, err := Size(l, budget)
	if err != nil || sz.Slots != slots {
		t.Fatalf("sizing for %d slots: %+v, %v", slots, sz, err)
	}
	tb := newTable(l, cs, bc, sz, p, k)
	return &tb
}

// use runs one Fetch of the experts ids through the table as the cache
// does (reads instant) and returns how many were cached.
func use(t *table, ids ...int) (hits int) {
	t.clock++
	var pinned []int32
	var missed []int
	for _, e := range ids {
		t.count(0, e)
		if s := t.find(0, e); s >= 0 {
			t.hit(s)
			t.slots[s].pins++
			pinned = append(pinned, s)
			hits++
		} else {
			missed = append(missed, e)
		}
	}
	for _, e := range missed {
		if s, w := t.victim(0, 0, e); s >= 0 {
			t.place(s, 0, e, w)
			t.slots[s].state = ready
			t.slots[s].pins++
			pinned = append(pinned, s)
		}
	}
	t.observe(0, len(missed))
	for _, s := range pinned {
		t.slots[s].pins--
	}
	return hits
}

func cached(t *table, e int) bool { return t.find(0, e) >= 0 }

// LRU evicts the least recently used expert, never one in use or being
// read, and fills empty slots first.
func TestLRUEvictsLeastRecent(t *testing.T) {
	tb := testTable(t, LRU, 10, 3, 1)
	use(tb, 0)
	use(tb, 1)
	use(tb, 2)
	use(tb, 0) // 1 is now the least recent
	use(tb, 3)
	if cached(tb, 1) || !cached(tb, 0) || !cached(tb, 2) || !cached(tb, 3) {
		t.Fatalf("after 0 1 2 0 3: 1 should be gone, 0 2 3 cached")
	}
	// The least recent (2) in use, the next (0) being read: 3 goes.
	tb.slots[tb.find(0, 2)].pins++
	tb.slots[tb.find(0, 0)].state = loading
	if s, _ := tb.victim(0, 0, 5); s != tb.find(0, 3) {
		t.Fatalf("victim slot %d, want 3's slot %d", s, tb.find(0, 3))
	}
	tb.slots[tb.find(0, 3)].pins++
	if s, _ := tb.victim(0, 0, 5); s != -1 {
		t.Fatalf("victim %d with every slot in use or loading, want -1", s)
	}
}

// LFU keeps experts used often through a run of experts used once, where
// LRU loses them all.
func TestLFUResistsScans(t *testing.T) {
	for _, p := range []Policy{LFU, LRU} {
		tb := testTable(t, p, 200, 20, 1)
		for range 10 {
			for e := range 4 {
				use(tb, e)
			}
		}
		for e := 100; e < 160; e++ { // one-offs
			use(tb, e)
		}
		hot := 0
		for e := range 4 {
			if cached(tb, e) {
				hot++
			}
		}
		if want := map[Policy]int{LFU: 4, LRU: 0}[p]; hot != want {
			t.Errorf("%v: %d of the 4 hot experts cached after a scan, want %d", p, hot, want)
		}
	}
}

// When a block cycles through more experts than the cache holds, LRU
// evicts each just before its reuse and never hits; LFU keeps part of the
// cycle.
func TestLFUKeepsPartOfACycle(t *testing.T) {
	for _, p := range []Policy{LFU, LRU} {
		tb := testTable(t, p, 64, 16, 2)
		hits := 0
		for round := range 50 {
			for e := 0; e < 24; e += 2 {
				h := use(tb, e, e+1)
				if round >= 10 {
					hits += h
				}
			}
		}
		if p == LRU && hits != 0 || p == LFU && hits < 40*24/3 {
			t.Errorf("%v: %d hits of %d over a cycle of 24 in 16 slots", p, hits, 40*24)
		}
	}
}

// An expert read for one token is still cached for the next, under LFU as
// under LRU, in a cache full of experts used more often.
func TestLFUWindowKeepsRecent(t *testing.T) {
	tb := testTable(t, LFU, 100, 30, 2)
	for range 20 {
		for e := 0; e < 28; e += 2 {
			use(tb, e, e+1)
		}
	}
	for e := int(50); e < 70; e += 2 {
		use(tb, e, e+1)
		if use(tb, e, e+1) != 2 {
			t.Fatalf("newcomers %d and %d were evicted before their reuse by the next token", e, e+1)
		}
	}
	// …without displacing the hot ones.
	for e := range 28 {
		if !cached(tb, e) {
			t.Errorf("hot expert %d evicted by newcomers", e)
		}
	}
}

// LFU's counts halve every agePeriod uses.
func TestLFUAging(t *testing.T) {
	tb := testTable(t, LFU, 10, 2, 1)
	for range 6 {
		tb.count(0, 3)
	}
	if tb.freq[3] != 6 {
		t.Fatalf("count %d, want 6", tb.freq[3])
	}
	for tb.uses != 0 {
		tb.count(0, 4)
	}
	if tb.freq[3] != 3 {
		t.Errorf("count %d after a period, want 3", tb.freq[3])
	}
	if tb.agePeriod != ageSlots*2 {
		t.Errorf("age period %d, want %d", tb.agePeriod, ageSlots*2)
	}
}

// Blocks whose experts differ in size get their own slot sizes, and the
// budget is shared in proportion to their experts' bytes.
func TestClassesAndSize(t *testing.T) {
	mk := func(off int64, lens [3]int64, n int) [][3]model.Range {
		xs := make([][3]model.Range, n)
		for e := range xs {
			for k := range 3 {
				xs[e][k] = model.Range{Off: off, Len: lens[k]}
				off += lens[k] + 100
			}
		}
		return xs
	}
	small, big := [3]int64{884736, 884736, 884736}, [3]int64{884736, 884736, 1290240}
	l := Layout{Experts: [][][3]model.Range{mk(1000, small, 8), nil, mk(50_000_000, big, 8), mk(90_000_000, small, 8)}}
	cs, bc := classes(l, true)
	if len(cs) != 2 || bc[0] != 0 || bc[1] != -1 || bc[2] != 1 || bc[3] != 0 || cs[0].blocks != 2 || cs[1].blocks != 1 {
		t.Fatalf("classes %+v, blocks %v", cs, bc)
	}
	for i, c := range cs {
		for k := range 3 {
			if c.parts[k]%4096 != 0 || c.parts[k] < []([3]int64){small, big}[i][k] || c.parts[k] > []([3]int64){small, big}[i][k]+8192 {
				t.Errorf("class %d part %d: %d bytes", i, k, c.parts[k])
			}
		}
	}
	for _, budget := range []int64{60 << 20, 35 << 20, 500 << 20} {
		sz, err := Size(l, budget)
		if err != nil {
			t.Fatal(err)
		}
		if sz.Bytes() > budget || sz.Experts != 24 || sz.Slots != sz.SlotsPerClass[0]+sz.SlotsPerClass[1] ||
			sz.SlotBytes != int64(sz.SlotsPerClass[0])*cs[0].size+int64(sz.SlotsPerClass[1])*cs[1].size {
			t.Errorf("budget %d: %+v", budget, sz)
		}
		if sz.SlotsPerClass[0] > 16 || sz.SlotsPerClass[1] > 8 {
			t.Errorf("budget %d: more slots than experts: %v", budget, sz.SlotsPerClass)
		}
		// Both classes cache about the same share of their experts.
		if a, b := float64(sz.SlotsPerClass[0])/16, float64(sz.SlotsPerClass[1])/8; a-b > 0.15 || b-a > 0.15 {
			t.Errorf("budget %d: shares %.2f and %.2f", budget, a, b)
		}
	}
	sz, err := Size(l, 500<<20)
	if err != nil || sz.Slots != 24 || sz.HitRateBound() != 1 {
		t.Errorf("a budget above every expert: %+v, %v", sz, err)
	}
	// A plan gives a cache that holds every expert just its footprint:
	// the same cache comes back, and a byte less holds fewer.
	if exact, err := Size(l, sz.Bytes()); err != nil || exact.Slots != 24 || exact.Bytes() != sz.Bytes() {
		t.Errorf("a budget of every expert's footprint %d: %+v, %v", sz.Bytes(), exact, err)
	}
	if less, err := Size(l, sz.Bytes()-1); err != nil || less.Slots >= 24 {
		t.Errorf("a byte below every expert's footprint: %+v, %v", less, err)
	}
	min, err := Size(l, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	if sz, err := Size(l, min.MinBudget); err != nil || sz.Slots != 2 {
		t.Errorf("the minimum budget: %+v, %v", sz, err)
	}
	if _, err := Size(l, min.MinBudget-1); !errors.Is(err, ErrBudget) {
		t.Errorf("below the minimum: %v, want ErrBudget", err)
	}
	if _, err := Size(Layout{Experts: make([][][3]model.Range, 2)}, 1<<30); !errors.Is(err, ErrNoExperts) {
		t.Errorf("no experts: %v, want ErrNoExperts", err)
	}

	// Repacking in place takes each repacked part's room in front of the
	// file's bytes, less the window's lead-in, in whole pages; without
	// WithRepack, none.
	l.Repack = [][3]int64{{30_000, 0, 5_000}, {}, {}, {30_000, 0, 5_000}}
	rc, rbc := classes(l, true)
	if len(rc) != 2 || !slices.Equal(rbc, bc) || rc[1].parts != cs[1].parts {
		t.Fatalf("repacking: classes %+v, blocks %v", rc, rbc)
	}
	for k, room := range l.Repack[0] {
		if got, want := rc[0].parts[k], cs[0].parts[k]+room; got%4096 != 0 || got < want-4096 || got > want+4096 {
			t.Errorf("repacking: part %d of %d bytes, want %d within a page", k, got, want)
		}
	}
	if rc, _ := classes(l, false); rc[0].parts != cs[0].parts {
		t.Errorf("not repacking: parts %v, want %v", rc[0].parts, cs[0].parts)
	}
	// Size repacks only when the budget holds every expert so: a cache
	// that misses keeps the file's layout and its slots.
	a, _ := Size(l, 500<<20)
	b, _ := Size(l, 500<<20, WithRepack(false))
	part, _ := Size(l, 60<<20)
	if !a.Repacked || a.Classes[0] != rc[0].size || b.Repacked || b.Classes[0] != cs[0].size ||
		part.Repacked || part.Classes[0] != cs[0].size || part.Slots == part.Experts {
		t.Errorf("Size: repacking %+v; not %+v; a part of them %+v", a, b, part)
	}
}
