package mem

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lowmem/llm/internal/syncx"
)

// Range is a span of bytes of a file: one layer of weights for a RangeReader.
type Range struct {
	Off, Len int64
}

// rangeAlign is the alignment of file offsets, lengths and buffer
// addresses for O_DIRECT reads. 4096 covers every common logical block
// size (512 and 4096 bytes).
const rangeAlign = 4096

// rangeChunk is the size of one read. Each reader goroutine has one in
// flight; a virtual disk serves several 4 MiB reads at once faster than
// one large one. Tests shrink it to reach the chunking logic with small
// files.
var rangeChunk int64 = 4 << 20

// DefaultReaders is how many reads a RangeReader keeps in flight unless
// told otherwise: the disks measured (cloud block devices, NVMe) deliver
// two to four times one stream's throughput with four reads queued.
const DefaultReaders = 4

// ErrReaderClosed is returned by Wait after Close.
var ErrReaderClosed = errors.New("mem: range reader is closed")

// RangeReader reads byte ranges of a file into a few reusable buffers
// (slots) on request, ahead of their use. It is built for weights that do
// not all fit in memory: a consumer asks for the next layers it will need
// (Load), computes with the ones already read, and waits (Wait) only for
// a layer whose read has not finished.
//
// The ranges are fixed at creation and named by their index; which range
// goes into which slot, and when, is the consumer's choice. Reads are
// split into chunks served by several goroutines (readers) in the order
// the loads were asked for, so a few reads are always in flight and the
// earliest load completes first.
//
// The file is opened with O_DIRECT where the system allows it, so the bytes
// read never enter the page cache (which under a memory cgroup would count
// against the limit and evict the weights that are meant to stay). Where
// O_DIRECT is refused (tmpfs, non-Linux systems) the file is read normally
// and, on Linux, each chunk is dropped from the page cache after it is read
// (POSIX_FADV_DONTNEED).
//
// The slots are anonymous memory mapped at creation; their pages are
// charged only when a read first writes them, and Discard gives them back
// while no read is in flight. Load, Wait and Stats are safe for concurrent
// use and allocate nothing.
type RangeReader struct {
	path    string
	ranges  []Range
	spans   []span // aligned read window of each range
	bufs    [][]byte
	release func() error
	file    *rangeFile
	chunk   int64
	readers int

	mu     sync.Mutex
	cond   sync.Cond
	slots  []slotState
	queue  []int // slots with chunks not yet handed to a reader, in Load order
	busy   int   // slots loading
	closed bool
	wg     sync.WaitGroup

	bytesRead atomic.Int64
	loads     atomic.Int64
	stallNS   atomic.Int64
}

// span is the aligned window read for a range: file bytes [start, end),
// with the range beginning skip bytes into it.
type span struct {
	start, end int64
	skip       int
}

// slotState tracks one buffer's load.
type slotState struct {
	rng     int   // the range loaded or loading; -1 before the first Load
	next    int64 // offset in the span of the next chunk to hand out
	pending int   // chunks handed out and not finished
	loading bool  // Load was called and the read is not complete
	err     error // the load's read error
}

// NewRangeReader opens path for reading ranges into slots buffers of the
// largest range's size (rounded out to 4096 bytes at both ends), with
// readers reads in flight (DefaultReaders when readers < 1). Ranges must
// lie inside the file and have positive lengths. No read starts before
// Load. The buffers are anonymous memory: plan for slots times the largest
// span (SlotBytes).
func NewRangeReader(path string, ranges []Range, slots, readers int) (*RangeReader, error) {
	if slots < 1 {
		return nil, fmt.Errorf("mem: read %s: %d slots, need at least 1", path, slots)
	}
	if len(ranges) == 0 {
		return nil, fmt.Errorf("mem: read %s: no ranges", path)
	}
	if readers < 1 {
		readers = DefaultReaders
	}
	file, size, err := openSized(path)
	if err != nil {
		return nil, fmt.Errorf("mem: read: %w", err)
	}
	s := &RangeReader{path: path, file: file, chunk: rangeChunk, readers: readers,
		ranges: append([]Range(nil), ranges...), spans: make([]span, len(ranges))}
	var maxSpan int64
	for i, r := range ranges {
		if r.Off < 0 || r.Len <= 0 || r.Off > size || r.Len > size-r.Off {
			file.close()
			return nil, fmt.Errorf("mem: read %s: range %d [%d, %d+%d) outside file of %d bytes", path, i, r.Off, r.Off, r.Len, size)
		}
		s.spans[i] = alignedSpan(r)
		maxSpan = max(maxSpan, s.spans[i].end-s.spans[i].start)
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
	s.cond.L = &s.mu
	s.slots = make([]slotState, slots)
	for j := range s.slots {
		s.slots[j].rng = -1
	}
	s.queue = make([]int, 0, slots)
	s.wg.Add(readers)
	for range readers {
		go s.read()
	}
	return s, nil
}

// alignedSpan is the rangeAlign-aligned window holding r.
func alignedSpan(r Range) span {
	start, end, skip := AlignedSpan(r)
	return span{start: start, end: end, skip: skip}
}

// SlotBytes is the size of each buffer a RangeReader of ranges allocates:
// the largest range's span rounded out to 4096 bytes at both ends.
func SlotBytes(ranges []Range) int64 {
	var n int64
	for _, r := range ranges {
		sp := alignedSpan(r)
		n = max(n, sp.end-sp.start)
	}
	return n
}

// Slots is the number of buffers.
func (s *RangeReader) Slots() int { return len(s.bufs) }

// Ranges is the number of ranges.
func (s *RangeReader) Ranges() int { return len(s.ranges) }

// Direct reports whether reads bypass the page cache with O_DIRECT.
func (s *RangeReader) Direct() bool { return s.file.isDirect() }

// View returns where range i lies in slot's buffer: the bytes a Load of i
// into slot fills. A consumer can build structures over every (range,
// slot) pair once and pick one after each Wait. The bytes are valid only
// once the load completed, until the next Load into the slot, and the
// slice must not be used after Close.
func (s *RangeReader) View(i, slot int) []byte {
	sp := s.spans[i]
	n := int(s.ranges[i].Len)
	return s.bufs[slot][sp.skip : sp.skip+n : sp.skip+n]
}

// Load starts reading range i into slot, behind the loads asked for
// before it. The slot's previous contents are overwritten: the consumer
// must be done with them. A slot still loading is refused, as are
// indices out of range and a closed reader.
func (s *RangeReader) Load(i, slot int) error {
	if i < 0 || i >= len(s.ranges) || slot < 0 || slot >= len(s.slots) {
		return fmt.Errorf("mem: read %s: load of range %d into slot %d, have %d ranges and %d slots", s.path, i, slot, len(s.ranges), len(s.slots))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("mem: read %s: %w", s.path, ErrReaderClosed)
	}
	sl := &s.slots[slot]
	if sl.loading {
		return fmt.Errorf("mem: read %s: load of range %d into slot %d, which is still loading range %d", s.path, i, slot, sl.rng)
	}
	*sl = slotState{rng: i, loading: true}
	s.queue = append(s.queue, slot)
	s.busy++
	s.loads.Add(1)
	s.cond.Broadcast()
	return nil
}

// Wait waits until the slot's last load is complete and returns its error:
// the read error, or ErrReaderClosed after Close. Waiting on a slot never
// loaded returns at once. Time spent waiting counts as Stats' Stall.
func (s *RangeReader) Wait(slot int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl := &s.slots[slot]
	if sl.loading && !s.closed {
		start := time.Now()
		for sl.loading && !s.closed {
			s.cond.Wait()
		}
		s.stallNS.Add(int64(time.Since(start)))
	}
	if sl.loading {
		return fmt.Errorf("mem: read %s: %w", s.path, ErrReaderClosed)
	}
	return sl.err
}

// Loaded reports the range the slot holds or is loading (-1 before the
// first Load) and whether its load is complete.
func (s *RangeReader) Loaded(slot int) (i int, done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slots[slot].rng, !s.slots[slot].loading
}

// Discard gives the buffers' memory back to the system while keeping
// them mapped; a later Load writes fresh pages. It waits for loads in
// progress first.
func (s *RangeReader) Discard() error {
	s.mu.Lock()
	for s.busy > 0 && !s.closed {
		s.cond.Wait()
	}
	closed := s.closed
	for j := range s.slots {
		s.slots[j].rng = -1
	}
	s.mu.Unlock()
	if closed {
		return nil
	}
	for _, b := range s.bufs {
		if err := discardPages(b); err != nil {
			return fmt.Errorf("mem: read %s: discard buffers: %w", s.path, err)
		}
	}
	return nil
}

// ReadStats counts a RangeReader's work since it started.
type ReadStats struct {
	BytesRead int64         // bytes read from the file, alignment included
	Loads     int64         // ranges asked for (Load calls)
	Stall     time.Duration // time Wait spent waiting for reads
}

// Stats returns the bytes read so far and how long consumers waited.
func (s *RangeReader) Stats() ReadStats {
	return ReadStats{BytesRead: s.bytesRead.Load(), Loads: s.loads.Load(), Stall: time.Duration(s.stallNS.Load())}
}

// Close stops the readers, waits for reads in progress and frees the
// buffers. Slices from View must not be used after it. Closing twice is
// harmless.
func (s *RangeReader) Close() error {
	if !syncx.Close(&s.cond, &s.closed) {
		return nil
	}
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

// read is one reader goroutine: it takes the next chunk of the earliest
// load that has chunks left, reads it, and marks the load complete when
// its last chunk arrives.
func (s *RangeReader) read() {
	defer s.wg.Done()
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for !s.closed && len(s.queue) == 0 {
			s.cond.Wait()
		}
		if s.closed {
			return
		}
		slot := s.queue[0]
		sl := &s.slots[slot]
		i := sl.rng
		sp := s.spans[i]
		c := sl.next
		want := min(s.chunk, sp.end-sp.start-c)
		sl.next += want
		sl.pending++
		if sl.next >= sp.end-sp.start {
			s.queue = append(s.queue[:0], s.queue[1:]...)
		}
		// The range must be read in full; the aligned window may run past
		// the end of the file, whose tail reads short.
		need := min(want, int64(sp.skip)+s.ranges[i].Len-c)
		buf := s.bufs[slot][c : c+want]
		s.mu.Unlock()
		err := s.readChunk(buf, sp.start+c, need)
		s.mu.Lock()
		sl.pending--
		if err != nil && sl.err == nil {
			sl.err = fmt.Errorf("mem: read %s: range %d [%d, %d): %w", s.path, i,
				s.ranges[i].Off, s.ranges[i].Off+s.ranges[i].Len, err)
		}
		if sl.pending == 0 && sl.next >= sp.end-sp.start {
			sl.loading = false
			s.busy--
			s.cond.Broadcast()
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

// openSized opens path as openRangeFile does and returns its size, which
// every reader of ranges checks its ranges against.
func openSized(path string) (*rangeFile, int64, error) {
	f, err := openRangeFile(path)
	if err != nil {
		return nil, 0, err
	}
	size, err := f.size()
	if err != nil {
		f.close()
		return nil, 0, err
	}
	return f, size, nil
}

func statSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
