package residency_test

import (
	"fmt"
	"sync"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/residency"
)

func Example() {
	spec := testutil.TinyLlama()
	spec.Layers = 8
	path, remove, err := testutil.TempModelFile(spec)
	if err != nil {
		panic(err)
	}
	defer remove()
	mp, err := mem.Map(path)
	if err != nil {
		panic(err)
	}
	defer mp.Close()
	f, _ := gguf.Read(mp.ReaderAt(), mp.Size())
	sh, _ := memplan.ShapeOf(f, mp.Size())
	// The least memory streaming runs in: every block is read from disk.
	r := memplan.Request{Weights: memplan.WeightsStreaming, Context: 64, Threads: 1, Batch: 64, Limit: 1}
	p, _ := memplan.Make(sh, r)
	r.Limit = p.Total
	p, _ = memplan.Make(sh, r)

	residency.AdviseBeforeLoad(mp, p)
	m, _ := model.New(f, mp.Bytes())
	var rw sync.RWMutex
	w, err := residency.Start(residency.Config{Mapping: mp, Model: m, File: f, Shape: sh, Plan: p, Exclusive: &rw})
	if err != nil {
		panic(err)
	}
	fmt.Println(w.Plan().Weights, w.OnDisk())
	w.StopWatch()
	rw.Lock()
	w.Close()
	rw.Unlock()
	// Output: streaming [0 1 2 3 4 5 6 7]
}
