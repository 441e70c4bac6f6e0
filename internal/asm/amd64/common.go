package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The kernels use physical registers, assigned per family in the comments
// of each generator: the loops are unrolled across registers by hand, and
// a fixed assignment keeps the generated code readable next to its
// description.

// width is a vector instruction set a kernel is written for.
type width int

const (
	avx2   width = iota // 256-bit, AVX2 + FMA + F16C
	avx512              // 512-bit, AVX-512 F/BW/VL (kv: F and VL)
	vnni                // avx512 with AVX512_VNNI (VPDPBUSD, VPDPWSSD)
	vbmi                // vnni with AVX512_VBMI and GFNI (VPERMB, VGF2P8AFFINEQB)
)

// suffix is the name a kernel of this width carries.
func (w width) suffix() string {
	return [...]string{"AVX2", "AVX512", "VNNI", "VBMI"}[w]
}

// level is the internal/cpu level of the width, as Go code outside this
// module names it.
func (w width) level() string {
	return "cpu." + [...]string{"AVX2", "AVX512", "AVX512VNNI", "AVX512VBMI"}[w]
}

// wide reports whether w has 512-bit registers.
func (w width) wide() bool { return w != avx2 }

// vec returns vector register i in the width's size: Y for AVX2, Z for the
// AVX-512 widths.
func (w width) vec(i int) VecPhysical {
	if w.wide() {
		return zr(i)
	}
	return yr(i)
}

// lanes is the number of float32 lanes of a vector of the width.
func (w width) lanes() int {
	if w.wide() {
		return 16
	}
	return 8
}

// The register families by index.
var (
	xs = []VecPhysical{X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15,
		X16, X17, X18, X19, X20, X21, X22, X23, X24, X25, X26, X27, X28, X29, X30, X31}
	ys = []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15,
		Y16, Y17, Y18, Y19, Y20, Y21, Y22, Y23, Y24, Y25, Y26, Y27, Y28, Y29, Y30, Y31}
	zs = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
		Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}
)

func yr(i int) VecPhysical { return ys[i] }
func zr(i int) VecPhysical { return zs[i] }

// idx returns the index of a vector register.
func idx(v Register) int {
	for i := range xs {
		if v == xs[i] || v == ys[i] || v == zs[i] {
			return i
		}
	}
	panic(fmt.Sprintf("not a vector register: %v", v))
}

// X, Y and Z forms of a vector register.
func asX(v Register) VecPhysical { return xs[idx(v)] }
func asY(v Register) VecPhysical { return ys[idx(v)] }
func asZ(v Register) VecPhysical { return zs[idx(v)] }

// mem is a memory operand base+disp.
func mem(base Register, disp int) Mem { return Mem{Base: base, Disp: disp} }

// memx is a memory operand base+disp+index*scale.
func memx(base Register, disp int, index Register, scale uint8) Mem {
	return Mem{Base: base, Disp: disp, Index: index, Scale: scale}
}

// zero clears a vector register.
func zero(v Register) {
	if idx(v) >= 16 || isZ(v) {
		c.VPXORD(v, v, v)
	} else {
		c.VXORPS(v, v, v)
	}
}

func isZ(v Register) bool { return v == zs[idx(v)] }

// const32 sets lane 0 of X register x to k (via EAX).
func const32(k uint32, x Register) {
	c.MOVL(U32(k), EAX)
	c.VMOVD(EAX, x)
}

// bcast32 fills every dword of v with k. Below Z16 with AVX2 it goes
// through the X register (VPBROADCASTD from a general register is AVX-512).
func bcast32(k uint32, v Register) {
	if isZ(v) || idx(v) >= 16 {
		c.MOVL(U32(k), EAX)
		c.VPBROADCASTD(EAX, v)
		return
	}
	const32(k, asX(v))
	c.VPBROADCASTD(asX(v), v)
}

// kmask loads the mask m into mask register k (through EAX).
func kmask(m uint32, k Register) {
	c.MOVL(U32(m), EAX)
	c.KMOVW(EAX, k)
}

// bcastq broadcasts the qword v to z through RAX (MOVL into EAX for a
// U32), into the qwords of mask k unless k is nil.
func bcastq(v Constant, z, k Register) {
	if u, ok := v.(U32); ok {
		c.MOVL(u, EAX)
	} else {
		c.MOVQ(v, RAX)
	}
	if k == nil {
		c.VPBROADCASTQ(RAX, z)
	} else {
		c.VPBROADCASTQ(RAX, k, z)
	}
}

// underMask sets z to zero but v in the dwords (qwords, with qword) of
// mask k.
func underMask(v uint32, z, k Register, qword bool) {
	c.MOVL(U32(v), EAX)
	c.VPXORD(z, z, z)
	if qword {
		c.VPBROADCASTQ(RAX, k, z)
	} else {
		c.VPBROADCASTD(EAX, k, z)
	}
}

// hsum leaves the sum of the eight floats of Y register y in lane 0 of its
// X form; t is a scratch X register. The order is fixed: halves, then
// pairs, then neighbours.
func hsum(y, t Register) { hreduce(y, t, c.VADDPS, c.VADDSS) }

// hreduce folds the eight floats of Y register y into lane 0 of its X form
// in hsum's order, with ps and ss the packed and scalar operation (add, or
// max for the softmax).
func hreduce(y, t Register, ps, ss func(...Op)) {
	x := asX(y)
	c.VEXTRACTF128(U8(1), y, t)
	ps(t, x, x)
	c.VMOVHLPS(x, x, t)
	ps(t, x, x)
	c.VMOVSHDUP(x, t)
	ss(t, x, x)
}

// retSum returns the sum of the eight floats of Y0 as the function's
// float32 result.
func retSum() {
	hsum(Y0, X1)
	retFloat()
}

// fold512 adds the high half of Z register z to its low half (its Y form),
// with t a scratch Y register.
func fold512(z, t Register) {
	c.VEXTRACTF64X4(U8(1), z, t)
	c.VADDPS(t, asY(z), asY(z))
}

// retFloat returns lane 0 of X0 as the function's float32 result.
func retFloat() {
	c.VZEROUPPER()
	c.Store(X0, c.ReturnIndex(0))
	c.RET()
}

// table declares a read-only table of 64-bit words (name without <>), and
// returns it. Tables are emitted once per file.
func table(name string, words ...uint64) Mem {
	return dataTable(name, len(words), 8, func(i int) Constant { return U64(words[i]) })
}

// table32 declares a table of 32-bit words.
func table32(name string, words ...uint32) Mem {
	return dataTable(name, len(words), 4, func(i int) Constant { return U32(words[i]) })
}

// dataTable declares a read-only table of n words of size bytes, word i
// being datum(i), unless one of that name is already declared.
func dataTable(name string, n, size int, datum func(i int) Constant) Mem {
	if m, ok := tables[name]; ok {
		return m
	}
	m := c.StaticGlobal(name)
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i := range n {
		c.AddDatum(size*i, datum(i))
	}
	tables[name] = m
	return m
}

// bytesTable declares a table of bytes, packed into 64-bit words.
func bytesTable(name string, b []byte) Mem {
	if len(b)%8 != 0 {
		panic("bytesTable: length not a multiple of 8")
	}
	w := make([]uint64, len(b)/8)
	for i, x := range b {
		w[i/8] |= uint64(x) << (8 * (i % 8))
	}
	return table(name, w...)
}

// wordsTable declares a table of 16-bit words.
func wordsTable(name string, h []uint16) Mem {
	b := make([]byte, 2*len(h))
	for i, x := range h {
		b[2*i], b[2*i+1] = byte(x), byte(x>>8)
	}
	return bytesTable(name, b)
}

// dwordsTable declares a table of 32-bit words, padded to whole qwords.
func dwordsTable(name string, d []uint32) Mem {
	b := make([]byte, 4*len(d))
	for i, x := range d {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return bytesTable(name, b)
}

var tables map[string]Mem

// resetFile clears the per-file state.
func resetFile() { tables = map[string]Mem{} }

// label places a label; ref refers to one. Labels are local to a
// function.
func label(name string)        { c.Label(name) }
func ref(name string) LabelRef { return LabelRef(name) }

// jumpIfZero jumps to the label name when counter is zero: past a loop
// with nothing left for it.
func jumpIfZero(counter Register, name string) {
	c.TESTQ(counter, counter)
	c.JEQ(ref(name))
}

// decJNZ ends a counted loop: counter down by one, and back to the label
// name while it is not zero.
func decJNZ(counter Op, name string) {
	c.DECQ(counter)
	c.JNZ(ref(name))
}

// splitNibbles loads 32 code bytes from src into lo and hi: the low
// nibbles in lo, the high ones in hi, through the 0x0F byte mask Y15.
func splitNibbles(src Mem, lo, hi Register) {
	c.VMOVDQU(src, lo)
	c.VPSRLW(U8(4), lo, hi)
	c.VPAND(Y15, lo, lo)
	c.VPAND(Y15, hi, hi)
}

// bitPair sets dst to bits 2j..2j+1 of every byte of src, the 2-bit field
// j of Q2_K's, Q3_K's and TQ2_0's quants: a word shift, whose spill from
// the neighbouring byte the mask (bytes 0x03) takes off.
func bitPair(src Register, j int, mask Op, dst Register) {
	if j == 0 {
		c.VPAND(mask, src, dst)
		return
	}
	c.VPSRLW(U8(2*j), src, dst)
	c.VPAND(mask, dst, dst)
}
