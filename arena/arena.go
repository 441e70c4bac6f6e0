package arena

import "unsafe"

// Align is the byte alignment of the start of every slice an Arena returns
// and the granularity in which requests are accounted.
const Align = 64

// Arena hands out non-overlapping scratch slices from one chunk of memory
// until Reset. The zero value is not usable; call New.
type Arena struct {
	chunk []byte // Align-aligned start, len a multiple of Align
	off   int    // bytes of chunk handed out since Reset

	overflowBytes int // bytes served from overflow blocks since Reset
	used          int // off + overflowBytes
	high          int // largest used ever seen
	overflows     int // overflow blocks allocated since New
}

// New returns an Arena whose chunk holds size bytes, rounded up to a
// multiple of Align. A size of zero (or less) is allowed: the first step then
// runs entirely from overflow blocks and the next Reset sizes the chunk.
func New(size int) *Arena {
	a := &Arena{}
	a.chunk = alloc(roundUp(max(size, 0)))
	return a
}

// Float32s returns n float32s. The contents are NOT zeroed: whatever the
// previous step left there is still present, so callers must write every
// element before reading it (use Zeroed32 otherwise). The slice's capacity
// equals n, so append cannot spill into another slice. It returns nil when
// n <= 0.
//
// The slice is valid until the next Reset; after that the memory is handed
// out again.
func (a *Arena) Float32s(n int) []float32 {
	if n <= 0 {
		return nil
	}
	b := a.take(n * 4)
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// Zeroed32 is Float32s with every element set to zero.
func (a *Arena) Zeroed32(n int) []float32 {
	s := a.Float32s(n)
	clear(s)
	return s
}

// Bytes returns n bytes starting on a 64-byte boundary, for quantized
// activations and other byte-addressed scratch. Like Float32s the contents
// are not zeroed, the capacity equals n, the result is nil when n <= 0, and
// the slice is valid until the next Reset.
func (a *Arena) Bytes(n int) []byte {
	if n <= 0 {
		return nil
	}
	return a.take(n)
}

// Reset makes all memory available again. Slices handed out before Reset
// must not be used afterwards: later requests will return the same memory.
//
// If any request since the previous Reset overflowed the chunk, Reset
// replaces the chunk with one of HighWater bytes (this is the only time Reset
// allocates), so the same sequence of requests fits from then on.
func (a *Arena) Reset() {
	if a.high > len(a.chunk) {
		// Drop the old chunk first so that the GC may reclaim it while
		// the replacement is allocated.
		a.chunk = nil
		a.chunk = alloc(a.high)
	}
	a.off = 0
	a.overflowBytes = 0
	a.used = 0
}

// Used returns the bytes handed out since the last Reset, including
// overflow blocks and the rounding of each request up to a multiple of Align.
func (a *Arena) Used() int { return a.used }

// HighWater returns the largest Used ever seen. It is the chunk size that
// would have served every step so far without overflow, which is what a
// memory planner should reserve.
func (a *Arena) HighWater() int { return a.high }

// Cap returns the size of the chunk in bytes. It grows only in Reset, to
// HighWater, after a step overflowed.
func (a *Arena) Cap() int { return len(a.chunk) }

// Overflows returns how many requests since New did not fit in the chunk and
// were served from a separately allocated block. It stays constant once the
// arena has warmed up; a count that keeps rising means the steps keep
// growing (for example with the context length) and Cap should be planned
// larger up front.
func (a *Arena) Overflows() int { return a.overflows }

// take returns nbytes from the chunk, or from a new overflow block when the
// chunk is full. The slice has len == cap == nbytes.
func (a *Arena) take(nbytes int) []byte {
	size := roundUp(nbytes)
	var b []byte
	if size <= len(a.chunk)-a.off {
		b = a.chunk[a.off : a.off+nbytes : a.off+nbytes]
		a.off += size
	} else {
		// Later smaller requests may still fit in the chunk; that is
		// fine because accounting is by bytes handed out, not by position.
		b = alloc(size)[:nbytes:nbytes]
		a.overflowBytes += size
		a.overflows++
	}
	a.used = a.off + a.overflowBytes
	a.high = max(a.high, a.used)
	return b
}

// roundUp rounds n up to a multiple of Align.
func roundUp(n int) int {
	return (n + Align - 1) &^ (Align - 1)
}

// alloc returns size bytes (a multiple of Align) starting on an Align
// boundary. The memory is allocated as []float32 so it is pointer-free for
// the garbage collector and at least 4-byte aligned; Align-4 bytes of slack
// let the start be moved up to the next boundary.
func alloc(size int) []byte {
	if size == 0 {
		return []byte{}
	}
	f := make([]float32, (size+Align-4)/4)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), len(f)*4)
	pad := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw))) & (Align - 1))
	return raw[pad : pad+size : pad+size]
}
