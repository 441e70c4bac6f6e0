//go:build purego

package llmtest

// buildTags are the tags BuildCommand builds with: those of the test that
// calls it, so that the command runs the kernels the test ran.
var buildTags = []string{"-tags", "purego"}
