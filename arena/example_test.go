package arena_test

import (
	"fmt"

	"github.com/lowmem/llm/arena"
)

func Example() {
	a := arena.New(0) // size unknown: learn it from the first step

	step := func() {
		a.Reset()
		x := a.Zeroed32(1000) // 4000 bytes, rounded to 4032
		q := a.Bytes(1088)    // e.g. quantized activations
		x[0], q[0] = 1, 2
	}

	step() // warm-up: served from overflow blocks
	step() // Reset sized the chunk to the high-water mark
	step()

	fmt.Println("high water:", a.HighWater())
	fmt.Println("cap:", a.Cap())
	fmt.Println("overflows:", a.Overflows())
	// Output:
	// high water: 5120
	// cap: 5120
	// overflows: 2
}
