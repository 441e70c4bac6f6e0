//go:build purego

package model

// puregoBuild: the pure-Go twins of the matrix kernels compute a token's
// row with other roundings in a batch's last columns than alone, where
// the assembly computes every column alike.
const puregoBuild = true
