//go:build js || wasip1

package mem

// openNonblock is 0 where the syscall package has no O_NONBLOCK: js/wasm
// has no FIFOs to wait on, and OpenFile still refuses what is not a
// regular file.
const openNonblock = 0
