package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/reg"
)

// cpuFiles lists the files of package internal/cpu: CPUID, which
// golang.org/x/sys/cpu runs but does not export, for the vendor, family
// and model that kernel variants are chosen by.
func cpuFiles() []outFile {
	return []outFile{{"cpuid", func() {
		text("cpuid", NOSPLIT, "func(leaf, sub uint32) (a, b, c, d uint32)",
			"cpuid returns EAX, EBX, ECX and EDX of CPUID leaf, subleaf sub.")
		loadArgs("leaf sub", EAX, ECX)
		c.CPUID()
		c.Store(EAX, c.Return("a"))
		c.Store(EBX, c.Return("b"))
		c.Store(ECX, c.Return("c"))
		c.Store(EDX, c.Return("d"))
		c.RET()
	}}}
}
