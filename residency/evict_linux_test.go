package residency

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropPageCache asks the kernel to drop the file's pages from the page
// cache.
func dropPageCache(f *os.File) { unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) }
