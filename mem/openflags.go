//go:build !js && !wasip1

package mem

import "syscall"

// openNonblock makes opening a FIFO return at once instead of waiting for
// a writer (see OpenFile).
const openNonblock = syscall.O_NONBLOCK
