// Package mem maps model files into memory and measures the memory a
// process may use and is using. It is the ground the memory planner stands
// on.
//
// Model weights are read through Map, a read-only shared mapping of the
// whole file: the weights live in the kernel's page cache, not in the Go
// heap, so they cost no anonymous memory, are shared between processes, and
// can be evicted and read back if memory runs short. Advise and Prefetch
// steer the kernel (read this layer ahead, drop that one); Resident shows
// what is cached. On systems without mmap a portable fallback reads the
// file into the heap instead (Mapping.Mapped reports which).
//
// DetectLimit finds how much memory the process may use: the tighter of
// its memory cgroup (v1 or v2) and the machine's MemAvailable, counting the
// cgroup's reclaimable page cache as free (see Limit for the arithmetic).
// ReadRSS, ReadSmapsRollup, ResetPeak and ReadCgroupPeak measure what the
// process actually uses, and ReadPSI reads memory pressure. Limits, RSS
// and peaks are read from /proc and cgroup files on Linux; elsewhere those
// functions fail with ErrUnsupported.
//
// When the weights do not fit, RangeReader reads the layers that cannot stay
// resident from disk on every pass, with O_DIRECT so they never occupy the
// page cache, into a few reused buffers, ahead of their use. Watch polls
// the limit and pressure stalls and reports when headroom runs short.
//
// A typical start of a loader:
//
//	lim, err := mem.DetectLimit()
//	if err != nil {
//		lim = mem.ExplicitLimit(userBudget) // not Linux, or no /proc
//	}
//	m, err := mem.Map("model.gguf")
//	if err != nil {
//		return err
//	}
//	defer m.Close()
//	log.Printf("model %d bytes; %v", m.Size(), lim)
//	f, err := gguf.Read(m.ReaderAt(), m.Size())
//	...
//	m.Advise(0, m.Size(), mem.Sequential) // weights stream front to back
//	m.Prefetch(layer1Off, layer1Len)      // read the next layer while computing this one
package mem
