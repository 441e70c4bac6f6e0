//go:build kvnorotate

package kv

// rotateInt4 is off in this build (-tags kvnorotate): Int4 caches quantize
// keys and values as they come, to measure what the rotation buys.
const rotateInt4 = false
