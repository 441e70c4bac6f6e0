package quant

//go:generate sh -c "cd ../internal/asm && go run ./amd64 -pkg quant -out ../../quant"
//go:generate go run ./internal/gen

import "fmt"

// DotFunc returns the dot product of n elements: w holds n elements of the
// weight type, x holds n elements of that type's VecDotType. n is a whole
// number of blocks. A DotFunc never allocates.
type DotFunc func(n int, w, x []byte) float32

// Kernel is one implementation of a dot product for a weight type.
type Kernel struct {
	Name string // "generic", "avx2", "avx512", "avx512vnni" …
	Type Type
	Dot  DotFunc
}

// Kernels lists every implementation of the dot product for t that runs on
// this CPU, the pure-Go one first and the fastest last. Tests compare them
// all against the first.
func Kernels(t Type) []Kernel {
	var ks []Kernel
	if g := opsOf(t).dot; g != nil {
		ks = append(ks, Kernel{Name: "generic", Type: t, Dot: g})
	}
	return append(ks, archKernels(t)...)
}

// Dot returns the fastest dot-product kernel for rows of type t on this CPU.
// Look it up once per tensor, not per row.
func Dot(t Type) (DotFunc, error) {
	ks := Kernels(t)
	if len(ks) == 0 {
		return nil, fmt.Errorf("quant: no dot product for %v: %w", t, ErrUnsupportedType)
	}
	return ks[len(ks)-1].Dot, nil
}
