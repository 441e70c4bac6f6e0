//go:build !purego

package llm_test

const puregoBuild = false
