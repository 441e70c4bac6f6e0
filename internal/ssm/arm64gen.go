package ssm

// The arm64 kernels (kernels_neon_arm64.s) and their declarations come
// from the generator in internal/asm/arm64, a module of its own.
//go:generate go run -C ../asm ./arm64 -pkg ssm -out ../ssm
