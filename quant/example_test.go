package quant_test

import (
	"fmt"

	"github.com/lowmem/llm/quant"
)

// Multiply one Q4_0 weight row by an activation vector, the way a matrix-
// vector product does it for every row.
func ExampleDot() {
	const n = 64
	weights := make([]float32, n)
	x := make([]float32, n)
	for i := range weights {
		weights[i] = float32(i%8-4) / 4 // -1 … 0.75
		x[i] = 127.0 / 256              // exact in Q8_0: d = 2^-8, q = 127
	}

	// In a model the row comes from the GGUF file; here we make one.
	rowBytes, _ := quant.Q4_0.RowBytes(n)
	row := make([]byte, rowBytes)
	if err := quant.QuantizeRow(quant.Q4_0, row, weights); err != nil {
		fmt.Println(err)
		return
	}

	// Quantize the activations once to the type the kernel expects.
	vt := quant.Q4_0.VecDotType()
	xBytes, _ := vt.RowBytes(n)
	xq := make([]byte, xBytes)
	if err := quant.QuantizeRow(vt, xq, x); err != nil {
		fmt.Println(err)
		return
	}

	dot, err := quant.Dot(quant.Q4_0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(vt, dot(n, row, xq))
	// Output: Q8_0 -3.96875
}
