package engine_test

import (
	"context"
	"fmt"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
)

func Example() {
	path, remove, err := testutil.TempModelFile(testutil.TinyLlama())
	if err != nil {
		panic(err)
	}
	defer remove()

	e, err := engine.Load(context.Background(), path, engine.Options{Request: memplan.Request{Threads: 1, Batch: 64, Limit: 1 << 30}})
	if err != nil {
		panic(err)
	}
	p := e.Plan()
	fmt.Println(e.Model.Arch, e.Tok.Size(), p.Context, p.Weights, p.Fits)
	e.Close()
	fmt.Println(e.Acquire())
	// Output:
	// llama 320 256 resident true
	// llm: closed
}
