package quant

// The arm64 kernels (*_arm64.s) and their declarations (*_arm64.go) come
// from the generator in internal/asm/arm64, a module of its own.
//go:generate go run -C ../internal/asm ./arm64 -pkg quant -out ../../quant
