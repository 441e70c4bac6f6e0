package mem_test

import (
	"fmt"
	"log"

	"github.com/lowmem/llm/mem"
)

// A loader finds its memory budget, maps the model and tells the kernel how
// the weights will be read.
func Example() {
	lim, err := mem.DetectLimit()
	if err != nil {
		lim = mem.ExplicitLimit(2 << 30) // not Linux, or /proc unavailable
	}
	log.Printf("memory: %v", lim)

	m, err := mem.Map("model.gguf")
	if err != nil {
		log.Print(err)
		return
	}
	defer m.Close()
	// Weights are streamed front to back; start reading the first 64 MiB
	// while the metadata is parsed.
	m.Advise(0, m.Size(), mem.Sequential)
	m.Prefetch(0, min(m.Size(), 64<<20))
	data := m.Bytes() // the file itself, in the page cache
	fmt.Println(len(data) == int(m.Size()))
}

// The peak resident set size of one phase, such as loading a model.
func ExampleResetPeak() {
	if err := mem.ResetPeak(); err != nil {
		log.Printf("peak covers the whole run: %v", err)
	}
	// ... load the model ...
	if r, err := mem.ReadRSS(); err == nil {
		log.Printf("peak RSS %d bytes: %d anonymous, %d file-backed now", r.Peak, r.Anon, r.File)
	}
}

func ExampleLimit_String() {
	l := mem.Limit{
		Total: 4 << 30, Available: 3 << 30,
		Source:      "cgroup v2 memory.max (/sys/fs/cgroup/app.slice/memory.max)",
		CgroupLimit: 4 << 30, CgroupUsage: 2 << 30, CgroupFileCache: 1 << 30,
	}
	fmt.Println(l)
	// Output:
	// 3.00 GiB available of 4.00 GiB total, bounded by cgroup v2 memory.max (/sys/fs/cgroup/app.slice/memory.max); cgroup usage 2.00 GiB of which 1.00 GiB reclaimable file cache
}
