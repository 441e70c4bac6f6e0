package mem

// maxHeapCopy is the largest file the portable fallback agrees to read
// into the heap. A WebAssembly process has at most 4 GiB of linear memory
// for everything, and a failed allocation there is fatal, not an error, so
// larger models are refused when mapped.
const maxHeapCopy = 2 << 30
