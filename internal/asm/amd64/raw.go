package main

import (
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
)

// avo v0.5.0 has no AVX512_VNNI or GFNI instructions, though the Go
// assembler has. raw emits them with explicit operands, in Go's order
// (sources first, destination last), and tells avo which operands are read
// and written so that liveness and register allocation stay sound.
func raw(isa, opcode string, ops, inputs, outputs []Op) {
	c.Instruction(&ir.Instruction{
		Opcode:   opcode,
		Operands: ops,
		Inputs:   inputs,
		Outputs:  outputs,
		ISA:      []string{isa},
	})
}

// VPDPBUSD adds to each dword of acc the four products of unsigned bytes
// of u and signed bytes of s (src may be memory): acc += Σ u·s.
func VPDPBUSD(s, u, acc Op) {
	raw("AVX512_VNNI", "VPDPBUSD", []Op{s, u, acc}, []Op{s, u, acc}, []Op{acc})
}

// VPDPBUSDMask is VPDPBUSD into the dwords of acc that mask k selects.
func VPDPBUSDMask(s, u, k, acc Op) {
	raw("AVX512_VNNI", "VPDPBUSD", []Op{s, u, k, acc}, []Op{s, u, k, acc}, []Op{acc})
}

// VPDPBUSDBcast is VPDPBUSD with the signed bytes s a dword in memory
// broadcast to every lane (EVEX embedded broadcast): no register and no
// instruction of its own for the broadcast.
func VPDPBUSDBcast(s Mem, u, acc Op) { rawBcast("VPDPBUSD", s, u, acc) }

// VPDPWSSDBcast is VPDPWSSD with b a dword in memory broadcast to every
// lane.
func VPDPWSSDBcast(b Mem, a, acc Op) { rawBcast("VPDPWSSD", b, a, acc) }

// rawBcast emits a VNNI accumulation (acc += f(s, u)) with s broadcast
// from memory.
func rawBcast(opcode string, s Mem, u, acc Op) {
	c.Instruction(&ir.Instruction{
		Opcode:   opcode,
		Suffixes: []string{"BCST"},
		Operands: []Op{s, u, acc},
		Inputs:   []Op{s, u, acc},
		Outputs:  []Op{acc},
		ISA:      []string{"AVX512_VNNI"},
	})
}

// VPDPWSSD adds to each dword of acc the two products of signed words of a
// and b.
func VPDPWSSD(b, a, acc Op) {
	raw("AVX512_VNNI", "VPDPWSSD", []Op{b, a, acc}, []Op{b, a, acc}, []Op{acc})
}

// VGF2P8AFFINEQB multiplies each byte of src by the 8×8 bit matrix in the
// matching qword of m and adds imm: dst = A·x + imm over GF(2).
func VGF2P8AFFINEQB(imm, m, src, dst Op) {
	raw("GFNI", "VGF2P8AFFINEQB", []Op{imm, m, src, dst}, []Op{m, src}, []Op{dst})
}
