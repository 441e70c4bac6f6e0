package snapshot_test

import (
	"bytes"
	"fmt"

	"github.com/lowmem/llm/internal/snapshot"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
)

func Example() {
	cfg := kv.Config{Layers: 2, KVHeads: 1, HeadDimK: 4, HeadDimV: 4, Cells: 16}
	c, _ := kv.New(cfg)
	row := []float32{1, 2, 3, 4}
	for pos := range 3 {
		for layer := range 2 {
			c.Store(layer, pos, row, row)
		}
	}
	id := snapshot.Model{Arch: "llama", Dims: [9]uint32{2, 8, 2, 1, 4, 4, 10, 4, 0}}
	var buf bytes.Buffer
	if err := snapshot.Write(&buf, id, kv.F16, []int32{1, 5, 7}, make([]float32, 10), c, &model.ConvState{At: 3}); err != nil {
		panic(err)
	}

	want := snapshot.Expect{Model: id, KVType: kv.F16, MaxTokens: 16}
	tokens, logits, restored, _, err := snapshot.Read(&buf, want, func(n int) (*kv.Cache, error) { return kv.New(cfg) })
	fmt.Println(tokens, len(logits), restored.Len(), err)

	buf.Reset()
	snapshot.Write(&buf, id, kv.Int8, nil, make([]float32, 10), c, &model.ConvState{})
	_, _, _, _, err = snapshot.Read(&buf, want, func(n int) (*kv.Cache, error) { return kv.New(cfg) })
	fmt.Println(err)
	// Output:
	// [1 5 7] 10 3 <nil>
	// llm: restore: saved with a int8 KV cache, this session's is f16: llm: bad saved session
}
