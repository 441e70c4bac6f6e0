//go:build !amd64 || purego

package quant

// tilePrefs: no preference by CPU model here; Tile takes the last of Tiles.
func tilePrefs(Type) []string { return nil }
