//go:build !purego

package llmtest

// buildTags are the tags BuildCommand builds with (see tags_purego.go).
var buildTags []string
