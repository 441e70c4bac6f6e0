package residency_test

import (
	"fmt"

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
	// The least memory streaming runs in, and room for half the blocks:
	// with its KV cache full, every block is read from disk.
	r := memplan.Request{Weights: memplan.WeightsStreaming, Context: 64, Threads: 1, Batch: 64, Limit: 1}
	p, _ := memplan.Make(sh, r)
	r.Limit = p.Total + sh.LayerBytes[0]*4
	p, _ = memplan.Make(sh, r)
	residency.AdviseBeforeLoad(mp, p)
	m, _ := model.New(f, mp.Bytes())
	w, err := residency.Start(residency.Config{Mapping: mp, Model: m, File: f, Shape: sh, Plan: p})
	if err != nil {
		panic(err)
	}
	defer w.Close()
	defer w.StopWatch()
	fmt.Println("before any session:", w.OnDisk())
	// A session's cache takes its memory from the blocks.
	w.KVBudget().Force(p.Residency.MaxKV() / 2)
	fmt.Println("cache half full:", w.OnDisk())
	w.KVBudget().Force(p.Residency.MaxKV() / 2)
	fmt.Println("cache full:", w.OnDisk())
	// Output:
	// before any session: [0 2 4 6]
	// cache half full: [0 1 2 3 4 6]
	// cache full: [0 1 2 3 4 5 6 7]
}
