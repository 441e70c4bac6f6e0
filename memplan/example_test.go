package memplan_test

import (
	"bytes"
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
)

func Example() {
	spec := testutil.TinyLlama()
	spec.Context = 8192
	data, _ := testutil.ModelBytes(spec)
	f, _ := gguf.Read(bytes.NewReader(data), int64(len(data))) // the header of a GGUF file (memplan.ReadShape reads one)
	sh, err := memplan.ShapeOf(f, int64(len(data)))
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
