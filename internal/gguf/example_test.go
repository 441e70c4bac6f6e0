package gguf_test

import (
	"bytes"
	"fmt"
	"io"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

func Example() {
	w := gguf.NewWriter()
	w.AddKV("general.architecture", "llama")
	w.AddKV("llama.block_count", uint32(2))
	w.AddKV("tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>"})
	// 4 rows of 32 elements, generated while the file is written.
	err := w.AddTensorFunc("w", quant.F32, []int64{32, 4}, func(out io.Writer) error {
		_, err := out.Write(make([]byte, 4*32*4))
		return err
	})
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		panic(err)
	}

	f, err := gguf.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		panic(err)
	}
	layers, _ := f.Uint(f.Arch() + ".block_count")
	tokens, _ := f.Strings("tokenizer.ggml.tokens")
	t, _ := f.Tensor("w")
	fmt.Println(f.Arch(), layers, len(tokens))
	fmt.Println(t.Type, t.Dims, t.Offset == f.DataOffset, t.Size)
	// Output:
	// llama 2 3
	// F32 [32 4] true 512
}
