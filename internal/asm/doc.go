// Package asm holds the generators of the assembly kernels of packages
// quant, kv, internal/cpu and internal/ssm (amd64 only: the Mamba-2
// scan). It is a module of its own so that the library does not depend on
// avo: only `go generate` in those packages runs it.
//
// Each architecture has a main package below this one (amd64: an avo
// program) that writes, for one target package, the .s files and their Go
// declarations (`// Code generated … DO NOT EDIT.`):
//
//	cd internal/asm && go run ./amd64 -pkg quant -out ../../quant
//
// CI regenerates them and fails if the committed files differ.
package asm
