package memplan_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
)

func Example() {
	dir, _ := os.MkdirTemp("", "memplan")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")
	spec := testutil.TinyLlama()
	spec.Context = 8192
	if err := testutil.WriteModelFile(path, spec); err != nil {
		panic(err)
	}
	sh, err := memplan.ReadShape(path)
	if err != nil {
		panic(err)
	}
	r := memplan.Request{Context: 8192, Threads: 2, Batch: 64, Limit: 1 << 30}
	p, _ := memplan.Make(sh, r)
	fmt.Println(p.Fits, p.Context, p.KVType, p.Weights, p.Steps)

	// Too little memory for an F16 cache of 8192 cells: INT8 first.
	r.Limit = p.Total - 1
	p, _ = memplan.Make(sh, r)
	fmt.Println(p.Fits, p.Context, p.KVType == kv.Int8, p.Steps)
	// Output:
	// true 8192 f16 resident []
	// true 8192 true [KV cache F16 → INT8]
}
