package engine_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
)

func Example() {
	dir, _ := os.MkdirTemp("", "engine")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")
	if err := testutil.WriteModelFile(path, testutil.TinyLlama()); err != nil {
		panic(err)
	}

	e, err := engine.Load(path, engine.Options{Request: memplan.Request{Threads: 1, Batch: 64, Limit: 1 << 30}})
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
