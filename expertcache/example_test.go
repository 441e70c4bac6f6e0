package expertcache_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/lowmem/llm/expertcache"
	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/model"
)

// A synthetic qwen3moe runs with room for four of its experts, the others
// read from the file as the forward pass needs them.
func Example() {
	dir, err := os.MkdirTemp("", "expertcache")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "moe.gguf")
	if err := testutil.WriteModelFile(path, testutil.TinyQwen3MoE()); err != nil {
		log.Fatal(err)
	}
	mp, err := mem.Map(path)
	if err != nil {
		log.Fatal(err)
	}
	defer mp.Close()
	f, err := gguf.Read(mp.ReaderAt(), mp.Size())
	if err != nil {
		log.Fatal(err)
	}
	m, err := model.New(f, mp.Bytes())
	if err != nil {
		log.Fatal(err)
	}

	// The plan's side: what a budget buys, from the tensor table alone.
	layout := expertcache.FileLayout(f, m.Layers)
	one, err := expertcache.Size(layout, 1<<30)
	if err != nil {
		log.Fatal(err)
	}
	budget := 4*one.Classes[0] + 16<<10 // four slots and the bookkeeping
	sz, err := expertcache.Size(layout, budget)
	if err != nil {
		log.Fatal(err)
	}

	c, err := expertcache.New(m, path, budget)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	m.ExpertSource = c

	pool := ops.NewPool(1)
	defer pool.Close()
	st, err := m.NewState(ops.NewExec(pool), model.StateOptions{Batch: 1, Cache: kv.F16, Cells: 64})
	if err != nil {
		log.Fatal(err)
	}
	logits := make([]float32, m.Vocab)
	for pos, tok := range []int32{1, 17, 42, 99, 7, 3, 250, 31} {
		if err := st.Forward([]int32{tok}, pos, logits); err != nil {
			log.Fatal(err)
		}
	}
	s := c.Stats()
	fmt.Printf("%d slots of %d experts, within the budget: %v\n", sz.Slots, sz.Experts, sz.Bytes() <= budget)
	fmt.Printf("%d blocks run, %d experts asked for: %d cached, %d read\n", s.Fetches, s.Requests, s.Hits, s.Misses)
	// Output:
	// 4 slots of 16 experts, within the budget: true
	// 16 blocks run, 32 experts asked for: 4 cached, 28 read
}
