package main

import "fmt"

// Encoders for the AArch64 Advanced SIMD instructions the kernels use. Go's
// arm64 assembler knows only a few of them (and none of SDOT, UDOT or
// SMMLA), so the generator writes every vector instruction as a WORD
// directive with its Arm syntax in a comment. Each encoder builds the word
// from the fields of its encoding class in the Arm Architecture Reference
// Manual (section C4.1, "A64 instruction set encoding"); enc_test.go checks
// every one against known bit patterns.

// Inst is one encoded instruction and its Arm assembly text.
type Inst struct {
	Word uint32
	Text string
}

// VReg is a SIMD&FP register V0–V31.
type VReg uint32

// XReg is a general register X0–X30 (W0–W30 where 32 bits are meant).
type XReg uint32

// Arr is a vector arrangement.
type Arr int

const (
	B8 Arr = iota
	B16
	H4
	H8
	S2
	S4
	D1
	D2
)

// size is the element size field: 0 bytes, 1 halves, 2 words, 3 doublewords.
func (a Arr) size() uint32 { return uint32(a) / 2 }

// q is 1 for 128-bit arrangements.
func (a Arr) q() uint32 { return uint32(a) % 2 }

// upper is the name of an instruction's form for arrangement a: the
// 128-bit arrangements read or write the upper half of a register, under
// the name with a "2" (SMULL2, XTN2, SHLL2, …).
func upper(name string, a Arr) string {
	if a.q() == 1 {
		return name + "2"
	}
	return name
}

func (a Arr) String() string {
	return [...]string{"8b", "16b", "4h", "8h", "2s", "4s", "1d", "2d"}[a]
}

// elem is the element letter of the arrangement.
func (a Arr) elem() string { return [...]string{"b", "h", "s", "d"}[a.size()] }

// lanes is the number of elements.
func (a Arr) lanes() int { return (8 << a.q()) >> a.size() }

func vr(r VReg, a Arr) string { return fmt.Sprintf("v%d.%s", r, a) }

func check(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf(format, args...))
	}
}

func reg5(r VReg) uint32 {
	check(r < 32, "vector register %d out of range", r)
	return uint32(r)
}

func xreg5(r XReg) uint32 {
	check(r < 32, "general register %d out of range", r)
	return uint32(r)
}

// --- Three registers of the same type (C4.1.95.28) ---

// threeRegs builds a word of the class from the fields that vary: size
// is bits 23-22, the element size of the integer forms.
func threeRegs(name string, u, size, opcode uint32, a Arr, d, n, m VReg) Inst {
	w := 0x0E200400 | a.q()<<30 | u<<29 | size<<22 | reg5(m)<<16 | opcode<<11 | reg5(n)<<5 | reg5(d)
	return Inst{w, fmt.Sprintf("%s %s, %s, %s", name, vr(d, a), vr(n, a), vr(m, a))}
}

// threeSame is an integer instruction of the class, on elements of the
// arrangement's size.
func threeSame(name string, u, opcode uint32) func(a Arr, d, n, m VReg) Inst {
	return func(a Arr, d, n, m VReg) Inst {
		check(a != D1, "%s: no 1d form", name)
		return threeRegs(name, u, a.size(), opcode, a, d, n, m)
	}
}

// logical is a bitwise instruction, which takes the operation in the size
// field and allows only 8b and 16b.
func logical(name string, u, op uint32) func(a Arr, d, n, m VReg) Inst {
	return func(a Arr, d, n, m VReg) Inst {
		check(a == B8 || a == B16, "%s: byte arrangement only", name)
		return threeRegs(name, u, op, 0b00011, a, d, n, m)
	}
}

// fthreeSame is a floating-point instruction of the class: bit 23 is part
// of the opcode, bit 22 the precision (0 single, 1 double).
func fthreeSame(name string, u, b23, opcode uint32) func(a Arr, d, n, m VReg) Inst {
	return func(a Arr, d, n, m VReg) Inst {
		check(a == S2 || a == S4 || a == D2, "%s: float arrangement only", name)
		sz := a.size() - 2
		return threeRegs(name, u, b23<<1|sz, opcode, a, d, n, m)
	}
}

// The instructions of the class: d = n op m, element by element, in
// arrangement a.
var (
	ADD  = threeSame("add", 0, 0b10000)
	SUB  = threeSame("sub", 1, 0b10000)
	ADDP = threeSame("addp", 0, 0b10111)
	MUL  = threeSame("mul", 0, 0b10011)
	MLA  = threeSame("mla", 0, 0b10010)
	SMIN = threeSame("smin", 0, 0b01101)
	SMAX = threeSame("smax", 0, 0b01100)
	CMGT = threeSame("cmgt", 0, 0b00110)
	CMEQ = threeSame("cmeq", 1, 0b10001)
	// USHL shifts each element of n by the signed low byte of the same
	// element of m: left for positive counts, right (logical) for negative.
	USHL = threeSame("ushl", 1, 0b01000)
	// CMTST sets each element of d to all ones where n AND m is not zero.
	CMTST = threeSame("cmtst", 0, 0b10001)

	AND = logical("and", 0, 0)
	ORR = logical("orr", 0, 2)
	BIC = logical("bic", 0, 1)
	EOR = logical("eor", 1, 0)
	BSL = logical("bsl", 1, 1)
	BIT = logical("bit", 1, 2)

	FADD  = fthreeSame("fadd", 0, 0, 0b11010)
	FSUB  = fthreeSame("fsub", 0, 1, 0b11010)
	FMUL  = fthreeSame("fmul", 1, 0, 0b11011)
	FMLA  = fthreeSame("fmla", 0, 0, 0b11001)
	FADDP = fthreeSame("faddp", 1, 0, 0b11010)
	FMLS  = fthreeSame("fmls", 0, 1, 0b11001)
	FMAX  = fthreeSame("fmax", 0, 0, 0b11110)
	FCMGT = fthreeSame("fcmgt", 1, 1, 0b11100)
	FCMEQ = fthreeSame("fcmeq", 0, 0, 0b11100)
	FACGT = fthreeSame("facgt", 1, 1, 0b11101)
	FCMGE = fthreeSame("fcmge", 1, 0, 0b11100)
)

// --- Three registers of different types (C4.1.95.27) ---

// threeDiff: d has elements twice as wide as n and m; the "2" forms read
// the upper halves of n and m (src is then a 128-bit arrangement).
func threeDiff(name string, u, opcode uint32, src Arr, d, n, m VReg) Inst {
	check(src.size() < 2, "%s: byte or half sources only", name)
	dst := Arr((src.size()+1)*2 + 1)
	name = upper(name, src)
	w := 0x0E200000 | src.q()<<30 | u<<29 | src.size()<<22 | reg5(m)<<16 | opcode<<12 | reg5(n)<<5 | reg5(d)
	return Inst{w, fmt.Sprintf("%s %s, %s, %s", name, vr(d, dst), vr(n, src), vr(m, src))}
}

// SMULL multiplies signed elements into double-width products (SMULL2 when
// src is 16b or 8h).
func SMULL(src Arr, d, n, m VReg) Inst { return threeDiff("smull", 0, 0b1100, src, d, n, m) }

// SMLAL adds double-width signed products to d (SMLAL2 when src is 16b or 8h).
func SMLAL(src Arr, d, n, m VReg) Inst { return threeDiff("smlal", 0, 0b1000, src, d, n, m) }

// --- Two-register miscellaneous (C4.1.95.29) ---

func twoMisc(u, size, opcode uint32, q uint32, d, n VReg) uint32 {
	return 0x0E200800 | q<<30 | u<<29 | size<<22 | opcode<<12 | reg5(n)<<5 | reg5(d)
}

// pairwise long adds: src is 8b/16b/4h/8h/2s/4s, d twice as wide, half as many.
func pairLong(name string, u, opcode uint32, src Arr, d, n VReg) Inst {
	check(src.size() < 3, "%s: bad source", name)
	dst := Arr((src.size()+1)*2 + src.q())
	return Inst{twoMisc(u, src.size(), opcode, src.q(), d, n), fmt.Sprintf("%s %s, %s", name, vr(d, dst), vr(n, src))}
}

func SADDLP(src Arr, d, n VReg) Inst { return pairLong("saddlp", 0, 0b00010, src, d, n) }
func SADALP(src Arr, d, n VReg) Inst { return pairLong("sadalp", 0, 0b00110, src, d, n) }
func UADDLP(src Arr, d, n VReg) Inst { return pairLong("uaddlp", 1, 0b00010, src, d, n) }

// narrowing: dst is 8b/4h/2s (lower half) or 16b/8h/4s (upper half, the
// "2" form); n holds elements twice as wide.
func narrow(name string, u, opcode uint32, dst Arr, d, n VReg) Inst {
	check(dst.size() < 3, "%s: bad destination", name)
	src := Arr((dst.size()+1)*2 + 1)
	name = upper(name, dst)
	return Inst{twoMisc(u, dst.size(), opcode, dst.q(), d, n), fmt.Sprintf("%s %s, %s", name, vr(d, dst), vr(n, src))}
}

// SHLL widens the halves of n (4h, or the upper four of 8h: SHLL2) to
// words shifted left by 16: a bfloat16 to its float32.
func SHLL(src Arr, d, n VReg) Inst {
	check(src == H4 || src == H8, "shll: half sources only")
	return Inst{twoMisc(1, 1, 0b10011, src.q(), d, n), fmt.Sprintf("%s %s, %s, #16", upper("shll", src), vr(d, S4), vr(n, src))}
}

func XTN(dst Arr, d, n VReg) Inst   { return narrow("xtn", 0, 0b10010, dst, d, n) }
func SQXTN(dst Arr, d, n VReg) Inst { return narrow("sqxtn", 0, 0b10100, dst, d, n) }

// CNT sets each byte of d to the number of set bits in that byte of n.
func CNT(a Arr, d, n VReg) Inst {
	check(a == B8 || a == B16, "cnt: byte arrangement only")
	return Inst{twoMisc(0, 0, 0b00101, a.q(), d, n), fmt.Sprintf("cnt %s, %s", vr(d, a), vr(n, a))}
}

func NOT(a Arr, d, n VReg) Inst {
	check(a == B8 || a == B16, "not: byte arrangement only")
	return Inst{twoMisc(1, 0, 0b00101, a.q(), d, n), fmt.Sprintf("mvn %s, %s", vr(d, a), vr(n, a))}
}

// float two-register misc: b23 is part of the opcode, bit 22 the precision.
func ftwoMisc(name string, u, b23, opcode uint32, a Arr, d, n VReg) Inst {
	check(a == S2 || a == S4 || a == D2, "%s: float arrangement only", name)
	w := twoMisc(u, b23<<1|(a.size()-2), opcode, a.q(), d, n)
	return Inst{w, fmt.Sprintf("%s %s, %s", name, vr(d, a), vr(n, a))}
}

func SCVTF(a Arr, d, n VReg) Inst  { return ftwoMisc("scvtf", 0, 0, 0b11101, a, d, n) }
func FCVTNS(a Arr, d, n VReg) Inst { return ftwoMisc("fcvtns", 0, 0, 0b11010, a, d, n) }
func FCVTZS(a Arr, d, n VReg) Inst { return ftwoMisc("fcvtzs", 0, 1, 0b11011, a, d, n) }
func FRINTN(a Arr, d, n VReg) Inst { return ftwoMisc("frintn", 0, 0, 0b11000, a, d, n) }
func FABS(a Arr, d, n VReg) Inst   { return ftwoMisc("fabs", 0, 1, 0b01111, a, d, n) }
func FNEG(a Arr, d, n VReg) Inst   { return ftwoMisc("fneg", 1, 1, 0b01111, a, d, n) }

// FCVTL widens four halves to singles: the lower four (4h), or the upper
// four of an 8h register (FCVTL2).
func FCVTL(src Arr, d, n VReg) Inst {
	check(src == H4 || src == H8, "fcvtl: half sources only")
	return Inst{twoMisc(0, 0, 0b10111, src.q(), d, n), fmt.Sprintf("%s %s, %s", upper("fcvtl", src), vr(d, S4), vr(n, src))}
}

// FCVTN narrows four singles to halves, into the lower (4h) or upper (8h,
// FCVTN2) half of d.
func FCVTN(dst Arr, d, n VReg) Inst {
	check(dst == H4 || dst == H8, "fcvtn: half destinations only")
	return Inst{twoMisc(0, 0, 0b10110, dst.q(), d, n), fmt.Sprintf("%s %s, %s", upper("fcvtn", dst), vr(d, dst), vr(n, S4))}
}

// --- Across lanes (C4.1.95.30) ---

func acrossLanes(name string, u, size, opcode uint32, a Arr, dst string, d, n VReg) Inst {
	w := 0x0E300800 | a.q()<<30 | u<<29 | size<<22 | opcode<<12 | reg5(n)<<5 | reg5(d)
	return Inst{w, fmt.Sprintf("%s %s%d, %s", name, dst, d, vr(n, a))}
}

// ADDV sums the lanes of n into element 0 of d.
func ADDV(a Arr, d, n VReg) Inst {
	check(a != D2 && a != D1 && a != S2, "addv: bad arrangement")
	return acrossLanes("addv", 0, a.size(), 0b11011, a, a.elem(), d, n)
}

// SADDLV sums signed lanes of n into a double-width element 0 of d.
func SADDLV(a Arr, d, n VReg) Inst {
	check(a.size() < 2 && a != S2, "saddlv: bad arrangement")
	return acrossLanes("saddlv", 0, a.size(), 0b00011, a, Arr((a.size()+1)*2).elem(), d, n)
}

func FMAXV(d, n VReg) Inst { return acrossLanes("fmaxv", 1, 0, 0b01111, S4, "s", d, n) }

// --- Shift by immediate (C4.1.95.31) ---

func shiftImm(u, immhb, opcode uint32, q uint32, d, n VReg) uint32 {
	return 0x0F000400 | q<<30 | u<<29 | immhb<<16 | opcode<<11 | reg5(n)<<5 | reg5(d)
}

func shiftRight(name string, u, opcode uint32, a Arr, d, n VReg, sh int) Inst {
	esize := 8 << a.size()
	check(sh >= 1 && sh <= esize && a != D1, "%s: bad shift %d for %v", name, sh, a)
	return Inst{shiftImm(u, uint32(2*esize-sh), opcode, a.q(), d, n), fmt.Sprintf("%s %s, %s, #%d", name, vr(d, a), vr(n, a), sh)}
}

func shiftLeft(name string, u, opcode uint32, a Arr, d, n VReg, sh int) Inst {
	esize := 8 << a.size()
	check(sh >= 0 && sh < esize && a != D1, "%s: bad shift %d for %v", name, sh, a)
	return Inst{shiftImm(u, uint32(esize+sh), opcode, a.q(), d, n), fmt.Sprintf("%s %s, %s, #%d", name, vr(d, a), vr(n, a), sh)}
}

func USHR(a Arr, d, n VReg, sh int) Inst { return shiftRight("ushr", 1, 0b00000, a, d, n, sh) }
func SSHR(a Arr, d, n VReg, sh int) Inst { return shiftRight("sshr", 0, 0b00000, a, d, n, sh) }
func SRI(a Arr, d, n VReg, sh int) Inst  { return shiftRight("sri", 1, 0b01000, a, d, n, sh) }
func SHL(a Arr, d, n VReg, sh int) Inst  { return shiftLeft("shl", 0, 0b01010, a, d, n, sh) }
func SLI(a Arr, d, n VReg, sh int) Inst  { return shiftLeft("sli", 1, 0b01010, a, d, n, sh) }

// shiftLong widens src (8b/16b/4h/8h/2s/4s) to twice the width, shifted
// left by sh; the 16b/8h/4s forms take the upper half ("2").
func shiftLong(name string, u uint32, src Arr, d, n VReg, sh int) Inst {
	esize := 8 << src.size()
	check(src.size() < 3 && sh >= 0 && sh < esize, "%s: bad operands", name)
	dst := Arr((src.size()+1)*2 + 1)
	name = upper(name, src)
	return Inst{shiftImm(u, uint32(esize+sh), 0b10100, src.q(), d, n), fmt.Sprintf("%s %s, %s, #%d", name, vr(d, dst), vr(n, src), sh)}
}

func SSHLL(src Arr, d, n VReg, sh int) Inst { return shiftLong("sshll", 0, src, d, n, sh) }
func USHLL(src Arr, d, n VReg, sh int) Inst { return shiftLong("ushll", 1, src, d, n, sh) }

// --- Copy (C4.1.95.25) ---

func imm5(size uint32, index int) uint32 {
	check(index >= 0 && index < 16>>size, "lane %d out of range", index)
	return uint32(index)<<(size+1) | 1<<size
}

func copyOp(q, op, i5, imm4 uint32, d, n uint32) uint32 {
	return 0x0E000400 | q<<30 | op<<29 | i5<<16 | imm4<<11 | n<<5 | d
}

// DUPe broadcasts element index of n to every lane of d.
func DUPe(a Arr, d, n VReg, index int) Inst {
	return Inst{copyOp(a.q(), 0, imm5(a.size(), index), 0, reg5(d), reg5(n)),
		fmt.Sprintf("dup %s, v%d.%s[%d]", vr(d, a), n, a.elem(), index)}
}

// DUPg broadcasts general register n to every lane of d.
func DUPg(a Arr, d VReg, n XReg) Inst {
	r := "w"
	if a.size() == 3 {
		r = "x"
	}
	return Inst{copyOp(a.q(), 0, imm5(a.size(), 0), 1, reg5(d), xreg5(n)), fmt.Sprintf("dup %s, %s%d", vr(d, a), r, n)}
}

// INSg sets element index (of size elem: B8/H4/S2/D1 give the size) of d
// from general register n.
func INSg(elem Arr, d VReg, index int, n XReg) Inst {
	r := "w"
	if elem.size() == 3 {
		r = "x"
	}
	return Inst{copyOp(1, 0, imm5(elem.size(), index), 0b0011, reg5(d), xreg5(n)),
		fmt.Sprintf("mov v%d.%s[%d], %s%d", d, elem.elem(), index, r, n)}
}

// INSe copies element si of n to element di of d.
func INSe(elem Arr, d VReg, di int, n VReg, si int) Inst {
	s := elem.size()
	return Inst{copyOp(1, 1, imm5(s, di), uint32(si)<<s, reg5(d), reg5(n)),
		fmt.Sprintf("mov v%d.%s[%d], v%d.%s[%d]", d, elem.elem(), di, n, elem.elem(), si)}
}

// UMOV moves element index of n to general register d (W for b/h/s, X for d).
func UMOV(elem Arr, d XReg, n VReg, index int) Inst {
	s := elem.size()
	q := uint32(0)
	name, r := "umov", "w"
	switch s {
	case 2:
		name = "mov" // the preferred alias
	case 3:
		q, name, r = 1, "mov", "x"
	}
	return Inst{copyOp(q, 0, imm5(s, index), 0b0111, xreg5(d), reg5(n)),
		fmt.Sprintf("%s %s%d, v%d.%s[%d]", name, r, d, n, elem.elem(), index)}
}

// --- Permute (C4.1.95.23) ---

func permute(name string, opcode uint32, a Arr, d, n, m VReg) Inst {
	check(a != D1, "%s: no 1d form", name)
	w := 0x0E000800 | a.q()<<30 | a.size()<<22 | reg5(m)<<16 | opcode<<12 | reg5(n)<<5 | reg5(d)
	return Inst{w, fmt.Sprintf("%s %s, %s, %s", name, vr(d, a), vr(n, a), vr(m, a))}
}

func UZP1(a Arr, d, n, m VReg) Inst { return permute("uzp1", 0b001, a, d, n, m) }
func UZP2(a Arr, d, n, m VReg) Inst { return permute("uzp2", 0b101, a, d, n, m) }
func TRN1(a Arr, d, n, m VReg) Inst { return permute("trn1", 0b010, a, d, n, m) }
func ZIP1(a Arr, d, n, m VReg) Inst { return permute("zip1", 0b011, a, d, n, m) }
func ZIP2(a Arr, d, n, m VReg) Inst { return permute("zip2", 0b111, a, d, n, m) }

// EXT takes bytes index.. of the pair n:m.
func EXT(a Arr, d, n, m VReg, index int) Inst {
	check((a == B8 || a == B16) && index >= 0 && index < 8<<a.q(), "ext: bad operands")
	w := 0x2E000000 | a.q()<<30 | reg5(m)<<16 | uint32(index)<<11 | reg5(n)<<5 | reg5(d)
	return Inst{w, fmt.Sprintf("ext %s, %s, %s, #%d", vr(d, a), vr(n, a), vr(m, a), index)}
}

// TBL looks up the bytes of m in the table of regs registers from n.
func TBL(a Arr, d, n VReg, regs int, m VReg) Inst {
	check((a == B8 || a == B16) && regs >= 1 && regs <= 4 && int(n)+regs <= 32, "tbl: bad operands")
	w := 0x0E000000 | a.q()<<30 | reg5(m)<<16 | uint32(regs-1)<<13 | reg5(n)<<5 | reg5(d)
	return Inst{w, fmt.Sprintf("tbl %s, %s, %s", vr(d, a), regList(n, regs, B16), vr(m, a))}
}

func regList(n VReg, regs int, a Arr) string {
	s := "{ "
	for i := 0; i < regs; i++ {
		if i > 0 {
			s += ", "
		}
		s += vr(n+VReg(i), a)
	}
	return s + " }"
}

// --- Modified immediate (C4.1.95.22) ---

func modImm(q, op, cmode uint32, imm8 uint8, d VReg) uint32 {
	abc := uint32(imm8) >> 5
	defgh := uint32(imm8) & 31
	return 0x0F000400 | q<<30 | op<<29 | abc<<16 | cmode<<12 | defgh<<5 | reg5(d)
}

// MOVI sets every element of d to imm8 shifted left by lsl bits: bytes
// (lsl 0), halves (lsl 0 or 8) or words (lsl 0, 8, 16, 24).
func MOVI(a Arr, d VReg, imm8 uint8, lsl int) Inst {
	var cmode uint32
	switch a.size() {
	case 0:
		check(lsl == 0, "movi: bytes take no shift")
		cmode = 0b1110
	case 1:
		check(lsl == 0 || lsl == 8, "movi: bad half shift")
		cmode = 0b1000 | uint32(lsl/8)<<1
	case 2:
		check(lsl%8 == 0 && lsl <= 24, "movi: bad word shift")
		cmode = uint32(lsl/8) << 1
	default:
		panic("movi: use MOVIzero for doublewords")
	}
	text := fmt.Sprintf("movi %s, #%d", vr(d, a), imm8)
	if lsl != 0 {
		text += fmt.Sprintf(", lsl #%d", lsl)
	}
	return Inst{modImm(a.q(), 0, cmode, imm8, d), text}
}

// MOVIzero clears all 128 bits of d.
func MOVIzero(d VReg) Inst {
	return Inst{modImm(1, 1, 0b1110, 0, d), fmt.Sprintf("movi v%d.2d, #0000000000000000", d)}
}

// --- Dot product and matrix multiply (FEAT_DotProd, FEAT_I8MM) ---

// byteProducts builds the instructions that add products of the bytes of n
// and m (16b) to the words of d (4s); word is the encoding with all three
// registers 0.
func byteProducts(name string, word uint32, d, n, m VReg) Inst {
	w := word | reg5(m)<<16 | reg5(n)<<5 | reg5(d)
	return Inst{w, fmt.Sprintf("%s %s, %s, %s", name, vr(d, S4), vr(n, B16), vr(m, B16))}
}

// SDOT adds to each word of d the dot product of the four signed bytes of n
// and m in the same position (FEAT_DotProd).
func SDOT(d, n, m VReg) Inst { return byteProducts("sdot", 0x4E809400, d, n, m) }

// UDOT is SDOT for unsigned bytes.
func UDOT(d, n, m VReg) Inst { return byteProducts("udot", 0x6E809400, d, n, m) }

// SDOTe is SDOT with the four bytes of m's word index for every word of n.
func SDOTe(d, n, m VReg, index int) Inst {
	check(m < 16 && index >= 0 && index < 4, "sdot: bad element operand")
	i := uint32(index)
	w := 0x4F80E000 | (i&1)<<21 | uint32(m)<<16 | (i>>1)<<11 | reg5(n)<<5 | reg5(d)
	return Inst{w, fmt.Sprintf("sdot %s, %s, v%d.4b[%d]", vr(d, S4), vr(n, B16), m, index)}
}

// SMMLA treats n and m as 2×8 matrices of signed bytes (rows in the two
// halves) and adds n·mᵀ, a 2×2 matrix of words in row order, to d
// (FEAT_I8MM).
func SMMLA(d, n, m VReg) Inst { return byteProducts("smmla", 0x4E80A400, d, n, m) }

// UMMLA is SMMLA for unsigned bytes.
func UMMLA(d, n, m VReg) Inst { return byteProducts("ummla", 0x6E80A400, d, n, m) }

// USMMLA is SMMLA with unsigned bytes in n and signed bytes in m.
func USMMLA(d, n, m VReg) Inst { return byteProducts("usmmla", 0x4E80AC00, d, n, m) }

// --- Vector × element (C4.1.95.33) ---

func byElem(name string, base uint32, a Arr, d, n, m VReg, index int) Inst {
	var hlm uint32
	switch a.size() {
	case 1: // H: index is H:L:M, m is V0–V15
		check(m < 16 && index >= 0 && index < 8, "%s: bad element operand", name)
		i := uint32(index)
		hlm = (i>>2)<<11 | (i>>1&1)<<21 | (i&1)<<20 | uint32(m)<<16
	case 2: // S: index is H:L
		check(index >= 0 && index < 4, "%s: bad element operand", name)
		i := uint32(index)
		hlm = (i>>1)<<11 | (i&1)<<21 | reg5(m)<<16
	default:
		panic(name + ": bad arrangement")
	}
	return Inst{base | a.q()<<30 | hlm | reg5(n)<<5 | reg5(d),
		fmt.Sprintf("%s %s, %s, v%d.%s[%d]", name, vr(d, a), vr(n, a), m, a.elem(), index)}
}

func MULe(a Arr, d, n, m VReg, index int) Inst {
	return byElem("mul", 0x0F008000|a.size()<<22, a, d, n, m, index)
}
func MLAe(a Arr, d, n, m VReg, index int) Inst {
	return byElem("mla", 0x2F000000|a.size()<<22, a, d, n, m, index)
}
func FMULe(a Arr, d, n, m VReg, index int) Inst {
	check(a == S2 || a == S4, "fmul: single precision only")
	return byElem("fmul", 0x0F809000, a, d, n, m, index)
}
func FMLAe(a Arr, d, n, m VReg, index int) Inst {
	check(a == S2 || a == S4, "fmla: single precision only")
	return byElem("fmla", 0x0F801000, a, d, n, m, index)
}

// FMLAse is the scalar FMLA by element: s_d += s_n · m.s[index], fused.
func FMLAse(d, n, m VReg, index int) Inst {
	check(index >= 0 && index < 4, "fmla: bad element")
	i := uint32(index)
	w := 0x5F801000 | (i&1)<<21 | reg5(m)<<16 | (i>>1)<<11 | reg5(n)<<5 | reg5(d)
	return Inst{w, fmt.Sprintf("fmla s%d, s%d, v%d.s[%d]", d, n, m, index)}
}

// FADDPs adds the two singles of n into s_d.
func FADDPs(d, n VReg) Inst {
	return Inst{0x7E30D800 | reg5(n)<<5 | reg5(d), fmt.Sprintf("faddp s%d, v%d.2s", d, n)}
}

// SCVTFs converts the signed word in element 0 of n to a single in d.
func SCVTFs(d, n VReg) Inst {
	return Inst{0x5E21D800 | reg5(n)<<5 | reg5(d), fmt.Sprintf("scvtf s%d, s%d", d, n)}
}

// --- Loads and stores (C4.1.95.3–6) ---

func ldstMultOpcode(regs int) uint32 {
	return [...]uint32{0b0111, 0b1010, 0b0110, 0b0010}[regs-1]
}

// LD1 loads regs consecutive registers from [n]; post (a byte count equal
// to the registers' size, or 0) advances n after the load.
func LD1(a Arr, t VReg, regs int, n XReg, post int) Inst {
	return ldstMult("ld1", 0x0C400000, 0x0CDF0000, a, t, regs, n, post)
}

// ST1 stores like LD1 loads.
func ST1(a Arr, t VReg, regs int, n XReg, post int) Inst {
	return ldstMult("st1", 0x0C000000, 0x0C9F0000, a, t, regs, n, post)
}

func ldstMult(name string, base, basePost uint32, a Arr, t VReg, regs int, n XReg, post int) Inst {
	check(regs >= 1 && regs <= 4 && int(t)+regs <= 32, "%s: bad register list", name)
	text := fmt.Sprintf("%s %s, [x%d]", name, regList(t, regs, a), n)
	b := base
	if post != 0 {
		check(post == regs*(8<<a.q()), "%s: post-index must be the transfer size", name)
		b = basePost
		text += fmt.Sprintf(", #%d", post)
	}
	return Inst{b | a.q()<<30 | ldstMultOpcode(regs)<<12 | a.size()<<10 | xreg5(n)<<5 | reg5(t), text}
}

// LD1Post loads regs registers from [n] and then adds general register m to n.
func LD1Post(a Arr, t VReg, regs int, n, m XReg) Inst {
	check(regs >= 1 && regs <= 4 && int(t)+regs <= 32 && m != 31, "ld1: bad operands")
	return Inst{0x0CC00000 | a.q()<<30 | xreg5(m)<<16 | ldstMultOpcode(regs)<<12 | a.size()<<10 | xreg5(n)<<5 | reg5(t),
		fmt.Sprintf("ld1 %s, [x%d], x%d", regList(t, regs, a), n, m)}
}

// ld1Lane encodes the single-structure forms: elem gives the element size.
func ldstLane(name string, base, basePost uint32, elem Arr, t VReg, index int, n XReg, post int) Inst {
	s := elem.size()
	check(index >= 0 && index < 16>>s, "%s: lane %d out of range", name, index)
	i := uint32(index)
	var q, sbit, size, opcode uint32
	switch s {
	case 0:
		q, sbit, size, opcode = i>>3, i>>2&1, i&3, 0b000
	case 1:
		q, sbit, size, opcode = i>>2, i>>1&1, (i&1)<<1, 0b010
	case 2:
		q, sbit, size, opcode = i>>1, i&1, 0, 0b100
	case 3:
		q, sbit, size, opcode = i, 0, 1, 0b100
	}
	text := fmt.Sprintf("%s { v%d.%s }[%d], [x%d]", name, t, elem.elem(), index, n)
	b := base
	if post != 0 {
		check(post == 1<<s, "%s: post-index must be the element size", name)
		b = basePost
		text += fmt.Sprintf(", #%d", post)
	}
	return Inst{b | q<<30 | opcode<<13 | sbit<<12 | size<<10 | xreg5(n)<<5 | reg5(t), text}
}

// LD1L loads one element into lane index of t.
func LD1L(elem Arr, t VReg, index int, n XReg, post int) Inst {
	return ldstLane("ld1", 0x0D400000, 0x0DDF0000, elem, t, index, n, post)
}

// ST1L stores lane index of t.
func ST1L(elem Arr, t VReg, index int, n XReg, post int) Inst {
	return ldstLane("st1", 0x0D000000, 0x0D9F0000, elem, t, index, n, post)
}

// LD1R loads one element and broadcasts it to every lane.
func LD1R(a Arr, t VReg, n XReg, post int) Inst {
	text := fmt.Sprintf("ld1r { %s }, [x%d]", vr(t, a), n)
	b := uint32(0x0D40C000)
	if post != 0 {
		check(post == 1<<a.size(), "ld1r: post-index must be the element size")
		b = 0x0DDFC000
		text += fmt.Sprintf(", #%d", post)
	}
	return Inst{b | a.q()<<30 | a.size()<<10 | xreg5(n)<<5 | reg5(t), text}
}

// LDR and STR of a whole SIMD&FP register with an unsigned scaled offset:
// bytes is 2 (h), 4 (s), 8 (d) or 16 (q).
func ldrStr(name string, load bool, bytes int, t VReg, n XReg, off int) Inst {
	var base uint32
	var r string
	switch bytes {
	case 2:
		base, r = 0x7D000000, "h"
	case 4:
		base, r = 0xBD000000, "s"
	case 8:
		base, r = 0xFD000000, "d"
	case 16:
		base, r = 0x3D800000, "q"
	default:
		panic(name + ": bad size")
	}
	if load {
		base |= 1 << 22
	}
	check(off >= 0 && off%bytes == 0 && off/bytes < 4096, "%s: bad offset %d", name, off)
	text := fmt.Sprintf("%s %s%d, [x%d]", name, r, t, n)
	if off != 0 {
		text = fmt.Sprintf("%s %s%d, [x%d, #%d]", name, r, t, n, off)
	}
	return Inst{base | uint32(off/bytes)<<10 | xreg5(n)<<5 | reg5(t), text}
}

func LDR(bytes int, t VReg, n XReg, off int) Inst { return ldrStr("ldr", true, bytes, t, n, off) }
func STR(bytes int, t VReg, n XReg, off int) Inst { return ldrStr("str", false, bytes, t, n, off) }
