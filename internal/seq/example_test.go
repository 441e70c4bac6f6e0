package seq_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/ops"
	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/model"
)

func Example() {
	data, _ := testutil.ModelBytes(testutil.TinyLlama())
	f, _ := gguf.Read(bytes.NewReader(data), int64(len(data)))
	m, _ := model.New(f, data)
	pool := ops.NewPool(1)
	defer pool.Close()

	budget := memplan.NewKVBudget(64<<20, nil) // what the plan leaves for KV caches
	s, err := seq.New(m, ops.NewExec(pool), budget, seq.Config{Context: 1024, Batch: 32})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	logits, err := s.Eval(context.Background(), make([]int32, 300)) // 300 tokens in chunks of 32
	if err != nil {
		panic(err)
	}
	st := s.Stats()
	fmt.Println(len(logits), st.Used, st.Cells, st.Grows, budget.InUse() == st.Bytes)
	// Output: 320 300 512 1 true
}
