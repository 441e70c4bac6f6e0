//go:build !wasm

package mem

import "math"

// maxHeapCopy is the largest file the portable fallback agrees to read
// into the heap: what an int can index (golang.org/x/exp/mmap refuses
// larger files itself).
const maxHeapCopy = math.MaxInt
