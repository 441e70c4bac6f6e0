package testutil_test

import (
	"bytes"
	"fmt"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
)

func ExampleModelBytes() {
	b, err := testutil.ModelBytes(testutil.TinyLlama())
	if err != nil {
		panic(err)
	}
	f, err := gguf.Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		panic(err)
	}
	emb, _ := f.Tensor("token_embd.weight")
	fmt.Println(f.Arch(), len(f.Tensors), emb.Type, emb.Dims)
	// Output: llama 21 Q8_0 [64 320]
}
