//go:build !linux || memfallback

package mem

// AdviseHugePages does nothing: transparent huge pages are advised on
// Linux only.
func AdviseHugePages([]byte) error { return nil }
