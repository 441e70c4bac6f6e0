//go:build !(amd64 || arm64) || purego

package quant

// archTiles has no assembly to offer on this platform or with -tags purego.
func archTiles(Type) []TileKernel { return nil }
