package mem

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Range is a span of bytes of a file: one layer of weights for a RangeReader.
type Range struct {
	Off, Len int64
}

// rangeAlign is the alignment of file offsets, lengths and buffer
// addresses for O_DIRECT reads. 4096 covers every common logical block
// size (512 and 4096 bytes).
const rangeAlign = 4096

// rangeChunk is the size of one read. Large reads keep the device queue
// full; each reader goroutine has one in flight. Tests shrink it to reach
// the chunking logic with small files.
var rangeChunk int64 = 8 << 20

// rangeReaders is how many reads are in flight at once.
const rangeReaders = 2

// ErrReaderClosed is returned by Acquire after Close.
var ErrReaderClosed = errors.New("mem: range reader is closed")

// RangeReader reads byte ranges of a file into a few reusable buffers
// (slots), ahead of their use, in a fixed cyclic order: range 0, 1, …,
// n-1, 0, 1, … It is built for weights that do not fit in memory: every
// forward pass needs the same ranges in the same order, and reading the
// next ones while the current one is computed with hides the disk.
//
// The file is opened with O_DIRECT where the system allows it, so the bytes
// read never enter the page cache (which under a memory cgroup would count
// against the limit and evict the weights that are meant to stay). Where
// O_DIRECT is refused (tmpfs, non-Linux systems) the file is read normally
// and, on Linux, each chunk is dropped from the page cache after it is read
// (POSIX_FADV_DONTNEED).
//
// A consumer calls Acquire(i) for the ranges in cyclic order and Release(i)
// when done with each. Acquire may skip ranges: asking for range i discards
// the ranges queued before it, which lets a consumer recover from a pass
// that stopped halfway. Acquire and Release are safe for concurrent use but
// are meant for one consumer at a time; they allocate nothing.
type RangeReader struct {
	path    string
	ranges  []Range
	spans   []span // aligned read window of each range
	bufs    [][]byte
	release func() error
	file    *rangeFile
	chunk   int64

	mu     sync.Mutex
	cond   sync.Cond
	slots  []slotState
	next   int64 // sequence number the consumer acquires next
	held   int   // slots acquired and not released
	err    error // first read error; readers stop after it
	closed bool
	wg     sync.WaitGroup

	bytesRead atomic.Int64
	stallNS   atomic.Int64
}

// span is the aligned window read for a range: file bytes [start, end),
// with the range beginning skip bytes into it.
type span struct {
	start, end int64
	skip       int
}

// slotState tracks one buffer. Sequence number k (the k-th range of the
// endless cycle, range k mod n) goes to slot k mod slots.
type slotState struct {
	load  int64 // the sequence number readers may load into the slot now
	done  int   // readers finished with load
	ready bool  // load is fully read
	held  bool  // acquired by the consumer
}

// NewRangeReader opens path and starts reading ranges into slots buffers of
// the largest range's size (rounded out to 4096 bytes at both ends), in the
// order ranges are given. slots must be at least 1; 2 overlaps reading one
// range with using the previous one, 3 also absorbs jitter. Ranges must lie
// inside the file and have positive lengths. The buffers are anonymous
// memory: plan for slots times the largest range.
func NewRangeReader(path string, ranges []Range, slots int) (*RangeReader, error) {
	if slots < 1 {
		return nil, fmt.Errorf("mem: read %s: %d slots, need at least 1", path, slots)
	}
	if len(ranges) == 0 {
		return nil, fmt.Errorf("mem: read %s: no ranges", path)
	}
	file, err := openRangeFile(path)
	if err != nil {
		return nil, fmt.Errorf("mem: read: %w", err)
	}
	size, err := file.size()
	if err != nil {
		file.close()
		return nil, fmt.Errorf("mem: read %s: %w", path, err)
	}
	s := &RangeReader{path: path, file: file, chunk: rangeChunk, ranges: append([]Range(nil), ranges...), spans: make([]span, len(ranges))}
	var maxSpan int64
	for i, r := range ranges {
		if r.Off < 0 || r.Len <= 0 || r.Off > size || r.Len > size-r.Off {
			file.close()
			return nil, fmt.Errorf("mem: read %s: range %d [%d, %d+%d) outside file of %d bytes", path, i, r.Off, r.Off, r.Len, size)
		}
		start := r.Off &^ (rangeAlign - 1)
		end := (r.Off + r.Len + rangeAlign - 1) &^ (rangeAlign - 1)
		s.spans[i] = span{start: start, end: end, skip: int(r.Off - start)}
		maxSpan = max(maxSpan, end-start)
	}
	if maxSpan > int64(int(^uint(0)>>1))/int64(slots) {
		file.close()
		return nil, fmt.Errorf("mem: read %s: %d slots of %d bytes do not fit in the address space", path, slots, maxSpan)
	}
	s.bufs, s.release, err = allocSlots(slots, int(maxSpan))
	if err != nil {
		file.close()
		return nil, fmt.Errorf("mem: read %s: %d slots of %d bytes: %w", path, slots, maxSpan, err)
	}
	// Ranges cached before reading began (a previous run, a parser that
	// touched them) would otherwise sit in the page cache for nothing.
	for _, sp := range s.spans {
		file.dropCache(sp.start, sp.end-sp.start)
	}
	s.cond.L = &s.mu
	s.slots = make([]slotState, slots)
	for j := range s.slots {
		s.slots[j].load = int64(j)
	}
	s.wg.Add(rangeReaders)
	for r := range rangeReaders {
		go s.read(r)
	}
	return s, nil
}

// Slots is the number of buffers.
func (s *RangeReader) Slots() int { return len(s.bufs) }

// Ranges is the number of ranges in the cycle.
func (s *RangeReader) Ranges() int { return len(s.ranges) }

// Direct reports whether reads bypass the page cache with O_DIRECT.
func (s *RangeReader) Direct() bool { return s.file.isDirect() }

// View returns where range i lies in slot's buffer: the bytes Acquire(i)
// returns when it hands out that slot. A consumer can build structures over
// every (range, slot) pair once and pick one after each Acquire. The bytes
// are valid only while the range is acquired in that slot, and the slice
// must not be used after Close.
func (s *RangeReader) View(i, slot int) []byte {
	sp := s.spans[i]
	n := int(s.ranges[i].Len)
	return s.bufs[slot][sp.skip : sp.skip+n : sp.skip+n]
}

// Acquire waits until range i is in a slot and returns the slot's number
// and exactly the range's bytes in it (View(i, slot)). The consumer must
// Release(i) before the slot can be reused. Ranges queued before i in the
// cycle are discarded. It fails with the read error if reading failed, with
// ErrReaderClosed after Close, and when every slot is already acquired
// (range i could never arrive).
func (s *RangeReader) Acquire(i int) ([]byte, int, error) {
	if i < 0 || i >= len(s.ranges) {
		return nil, 0, fmt.Errorf("mem: read %s: acquire of range %d, have %d", s.path, i, len(s.ranges))
	}
	n, slots := int64(len(s.ranges)), int64(len(s.slots))
	s.mu.Lock()
	defer s.mu.Unlock()
	var waitStart time.Time
	for {
		if s.closed {
			return nil, 0, fmt.Errorf("mem: read %s: %w", s.path, ErrReaderClosed)
		}
		if s.held == len(s.slots) {
			return nil, 0, fmt.Errorf("mem: read %s: range %d acquired with all %d slots held", s.path, i, len(s.slots))
		}
		k := s.next
		sl := &s.slots[k%slots]
		if sl.load == k && sl.ready {
			if int(k%n) != i {
				// Skip k: the consumer has moved past it.
				s.free(sl, k)
				s.next++
				continue
			}
			sl.held = true
			s.held++
			s.next++
			if !waitStart.IsZero() {
				s.stallNS.Add(int64(time.Since(waitStart)))
			}
			return s.View(i, int(k%slots)), int(k % slots), nil
		}
		if s.err != nil {
			return nil, 0, s.err
		}
		if waitStart.IsZero() {
			waitStart = time.Now()
		}
		s.cond.Wait()
	}
}

// Release gives back the slot holding range i, so the range due next in it
// can be read. Releasing a range that is not acquired does nothing.
func (s *RangeReader) Release(i int) {
	n := int64(len(s.ranges))
	s.mu.Lock()
	defer s.mu.Unlock()
	// Several slots can hold range i only if the cycle is shorter than the
	// slots; the oldest goes first.
	best := -1
	for j := range s.slots {
		sl := &s.slots[j]
		if sl.held && int(sl.load%n) == i && (best < 0 || sl.load < s.slots[best].load) {
			best = j
		}
	}
	if best < 0 {
		return
	}
	sl := &s.slots[best]
	sl.held = false
	s.held--
	s.free(sl, sl.load)
}

// free hands slot sl, done with sequence k, to sequence k+slots.
func (s *RangeReader) free(sl *slotState, k int64) {
	sl.load = k + int64(len(s.slots))
	sl.done, sl.ready = 0, false
	s.cond.Broadcast()
}

// ReadStats counts a RangeReader's work since it started.
type ReadStats struct {
	BytesRead int64         // bytes read from the file, alignment included
	Stall     time.Duration // time Acquire spent waiting for reads
}

// Stats returns the bytes read so far and how long consumers waited.
func (s *RangeReader) Stats() ReadStats {
	return ReadStats{BytesRead: s.bytesRead.Load(), Stall: time.Duration(s.stallNS.Load())}
}

// Close stops the readers, waits for reads in progress and frees the
// buffers. Slices from Acquire and View must not be used after it. Closing
// twice is harmless.
func (s *RangeReader) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	s.wg.Wait()
	errFree := s.release()
	errClose := s.file.close()
	if errFree != nil {
		return fmt.Errorf("mem: read %s: free buffers: %w", s.path, errFree)
	}
	if errClose != nil {
		return fmt.Errorf("mem: read %s: %w", s.path, errClose)
	}
	return nil
}

// read is reader r of rangeReaders: it loads its share of the chunks of
// every sequence number in turn (chunks r, r+rangeReaders, …), so the
// readers together keep rangeReaders reads in flight.
func (s *RangeReader) read(r int) {
	defer s.wg.Done()
	n, slots := int64(len(s.ranges)), int64(len(s.slots))
	for k := int64(0); ; k++ {
		sl := &s.slots[k%slots]
		s.mu.Lock()
		for !s.closed && s.err == nil && sl.load != k {
			s.cond.Wait()
		}
		stop := s.closed || s.err != nil
		s.mu.Unlock()
		if stop {
			return
		}
		i := int(k % n)
		sp := s.spans[i]
		buf := s.bufs[k%slots]
		// The range must be read in full; the aligned window may run past
		// the end of the file, whose tail reads short.
		need := int64(sp.skip) + s.ranges[i].Len
		var err error
		for c := int64(r) * s.chunk; c < sp.end-sp.start && err == nil; c += rangeReaders * s.chunk {
			want := min(s.chunk, sp.end-sp.start-c)
			err = s.readChunk(buf[c:c+want], sp.start+c, min(want, need-c))
		}
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = fmt.Errorf("mem: read %s: range %d [%d, %d): %w", s.path, i,
				s.ranges[i].Off, s.ranges[i].Off+s.ranges[i].Len, err)
		}
		if err == nil {
			sl.done++
			if sl.done == rangeReaders {
				sl.ready = true
			}
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// readChunk fills b from the file at off; at least need bytes must arrive
// (need may be below len(b) at the end of the file, or negative for a chunk
// wholly past the range).
func (s *RangeReader) readChunk(b []byte, off, need int64) error {
	got, err := s.file.readAt(b, off)
	s.bytesRead.Add(int64(got))
	if int64(got) >= need && (err == nil || errors.Is(err, io.EOF)) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("read %d bytes at offset %d, got %d: file truncated: %w", need, off, got, io.ErrUnexpectedEOF)
	}
	return err
}

func statSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
