//go:build !amd64 || purego

package cpu

// archModel is unknown without assembly.
func archModel() Model { return Model{} }
