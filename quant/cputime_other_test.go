//go:build !linux

package quant

// threadCPU is not measured on this platform.
func threadCPU() int64 { return -1 }
