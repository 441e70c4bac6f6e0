package sampler

// cand is one candidate token. The logit comes first so the struct packs
// into 8 bytes and sorting moves it with the id.
type cand struct {
	logit float32
	id    int32
}

// better reports whether a ranks before b: higher logit first, ties to the
// lower id. It is a strict total order on distinct ids, so every selection
// and sort below gives the same result regardless of input order.
func better(a, b cand) bool {
	return a.logit > b.logit || (a.logit == b.logit && a.id < b.id)
}

// The heaps below keep the worst candidate at the root, so the root is the
// one to evict when a better candidate arrives.

// siftDown restores the heap property below i.
func siftDown(h []cand, i int) {
	n := len(h)
	for {
		w := 2*i + 1
		if w >= n {
			return
		}
		if r := w + 1; r < n && better(h[w], h[r]) {
			w = r
		}
		if !better(h[i], h[w]) {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

func heapify(h []cand) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
}

// sortHeap turns a heap into a slice ordered best first (heapsort: the
// worst goes to the end, then the next worst, ...). O(m log m), in place.
func sortHeap(h []cand) {
	for end := len(h) - 1; end > 0; end-- {
		h[0], h[end] = h[end], h[0]
		siftDown(h[:end], 0)
	}
}

// selectTop permutes c so that c[:m] holds its m best candidates, best
// first. It costs O(len(c) + r log m) where r, the number of evictions, is
// small unless c is ordered worst first; logits ordered by token id are not.
func selectTop(c []cand, m int) {
	h := c[:m]
	heapify(h)
	for j := m; j < len(c); j++ {
		if better(c[j], h[0]) {
			c[j], h[0] = h[0], c[j]
			siftDown(h, 0)
		}
	}
	sortHeap(h)
}

// topK writes the k best logits into dst[:k], best first, without building
// a candidate per token: most tokens cost one comparison against the worst
// of the current k. NaN logits count as -Inf. Requires 0 < k <= len(logits)
// and len(dst) >= k.
func topK(dst []cand, logits []float32, k int) []cand {
	h := dst[:k]
	for i := range h {
		h[i] = cand{sanitize(logits[i]), int32(i)}
	}
	heapify(h)
	worst := h[0].logit
	for i := k; i < len(logits); i++ {
		// Strictly greater: on equal logits the heap already holds the
		// lower id. NaN compares false and is skipped.
		if l := logits[i]; l > worst {
			h[0] = cand{l, int32(i)}
			siftDown(h, 0)
			worst = h[0].logit
		}
	}
	sortHeap(h)
	return h
}
