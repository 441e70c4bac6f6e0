package expertcache

import "time"

// Stats counts a cache's work since New. Per token figures are the bench's
// to derive: BytesRead over the tokens run is the disk traffic per token.
type Stats struct {
	Slots     int   // experts the cache holds at once
	SlotBytes int64 // memory of the slots
	Experts   int   // experts in the model

	Fetches  int64 // expert blocks run (Fetch calls)
	Requests int64 // experts they announced
	Hits     int64 // requests found cached (or being read by Prefetch)
	Misses   int64 // requests read from disk on demand (or served from the model after an error)

	Prefetches   int64 // experts Prefetch started reading
	PrefetchHits int64 // requests that found an expert Prefetch read
	Evictions    int64 // experts evicted to make room

	Reads     int64         // reads done (three per expert: gate, up, down)
	BytesRead int64         // bytes read from the file, alignment included
	Stall     time.Duration // time passes waited in Expert for reads
	Fallbacks int64         // experts served from the model's weights after a read error
	Direct    bool          // reads bypass the page cache (O_DIRECT)
}

// HitRate is the share of requested experts found in the cache.
func (s Stats) HitRate() float64 {
	if s.Requests == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Requests)
}

// Sub is the counts of s since an earlier snapshot old (for one run of a
// bench); the sizes stay s's.
func (s Stats) Sub(old Stats) Stats {
	s.Fetches -= old.Fetches
	s.Requests -= old.Requests
	s.Hits -= old.Hits
	s.Misses -= old.Misses
	s.Prefetches -= old.Prefetches
	s.PrefetchHits -= old.PrefetchHits
	s.Evictions -= old.Evictions
	s.Reads -= old.Reads
	s.BytesRead -= old.BytesRead
	s.Stall -= old.Stall
	s.Fallbacks -= old.Fallbacks
	return s
}
