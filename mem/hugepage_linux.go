//go:build linux && !memfallback

package mem

import "golang.org/x/sys/unix"

// AdviseHugePages asks the kernel to back b, anonymous memory from
// AllocAligned, with transparent huge pages where its setting allows
// ("madvise" or "always"): a matrix streamed whole on every token then
// takes a TLB entry per 2 MiB instead of per 4 KiB (repacked Q4_0
// TinyLlama decoded 3.5 % faster, six alternating rounds). The memory is
// the same; an error only means the advice was not taken.
func AdviseHugePages(b []byte) error { return unix.Madvise(b, unix.MADV_HUGEPAGE) }
