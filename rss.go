package llm

import (
	"runtime/debug"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/mem"
)

// MemoryUsage is the process's resident memory as the kernel reports it.
type MemoryUsage struct {
	RSS     int64 // resident now: anonymous + file-backed (mapped weights)
	PeakRSS int64 // high-water mark of RSS (VmHWM)
	Anon    int64 // anonymous memory: Go heap, KV caches, arenas
	File    int64 // file-backed resident pages: the mapped model
}

// ReadMemoryUsage reads the process's memory usage from /proc (Linux only;
// elsewhere it returns an error).
func ReadMemoryUsage() (_ MemoryUsage, err error) {
	defer engine.Catch(&err, debug.SetPanicOnFault(false))
	r, err := mem.ReadRSS()
	if err != nil {
		return MemoryUsage{}, err
	}
	return MemoryUsage{RSS: r.Current, PeakRSS: r.Peak, Anon: r.Anon, File: r.File}, nil
}
