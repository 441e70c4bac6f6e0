//go:build amd64 && !purego

#include "textflag.h"

// Tile kernels for Q4_0 weights and Q8_0 activations with AVX-512 VNNI.
//
// Weight block (18 bytes): fp16 d at 0, 16 bytes of nibbles at 2 (elements
// 0-15 low, 16-31 high). Activation block (34 bytes): fp16 d at 0, int8
// qs[32] at 2. The kernels run eight blocks per iteration as four pairs,
// one pair per 512-bit register: 128-bit lanes 0-1 hold block 2p, 2-3 block
// 2p+1, and every dword lane sums four byte products of one block.
//
// Σ(q-8)·y is computed as Σq·y - 8·Σy: the nibbles stay unsigned for
// VPDPBUSD, and -8·Σy, which depends on the activations only, is computed
// once per column and pair and seeds every row's integer sum. The products
// d_w·d_x of a row and column's eight blocks go to a 64-byte stack slot
// per (row, column), and VPERMPS spreads those of a pair over the two
// halves of a register.
//
// Register use: Z0-Z15 float accumulators (row r, column c in Z(4r+c)),
// Z16-Z19 activation pairs, Z20 weight pair, Z21-Z22 scratch, Z23-Z26
// corrections, Z27 the pair's scale index, Z28 shift counts, Z29 bytes
// 0x0F, Z30 bytes 8. Rows are at SI, BX, R8, R9; columns at DI, DX, R10, R11.

// Word indexes for VPERMT2W that pick the fp16 scales of eight 18-byte
// blocks out of 128 bytes, and of four 34-byte blocks.
DATA t40WIdx<>+0(SB)/8, $0x001B001200090000
DATA t40WIdx<>+8(SB)/8, $0x003F0036002D0024
GLOBL t40WIdx<>(SB), RODATA|NOPTR, $64
DATA t40XIdx<>+0(SB)/8, $0x0033002200110000
GLOBL t40XIdx<>(SB), RODATA|NOPTR, $64

// Qword shift counts 0, 0, 4, 4 per 256 bits: low nibbles in 128-bit lanes
// 0 and 2, high ones in 1 and 3.
DATA t40Shift<>+0(SB)/8, $0
DATA t40Shift<>+8(SB)/8, $0
DATA t40Shift<>+16(SB)/8, $4
DATA t40Shift<>+24(SB)/8, $4
DATA t40Shift<>+32(SB)/8, $0
DATA t40Shift<>+40(SB)/8, $0
DATA t40Shift<>+48(SB)/8, $4
DATA t40Shift<>+56(SB)/8, $4
GLOBL t40Shift<>(SB), RODATA|NOPTR, $64

// Dword indexes for VPERMPS, 64 bytes per pair p: 2p in lanes 0-7, 2p+1 in
// lanes 8-15.
DATA t40PIdx<>+0(SB)/8, $0x0000000000000000
DATA t40PIdx<>+8(SB)/8, $0x0000000000000000
DATA t40PIdx<>+16(SB)/8, $0x0000000000000000
DATA t40PIdx<>+24(SB)/8, $0x0000000000000000
DATA t40PIdx<>+32(SB)/8, $0x0000000100000001
DATA t40PIdx<>+40(SB)/8, $0x0000000100000001
DATA t40PIdx<>+48(SB)/8, $0x0000000100000001
DATA t40PIdx<>+56(SB)/8, $0x0000000100000001
DATA t40PIdx<>+64(SB)/8, $0x0000000200000002
DATA t40PIdx<>+72(SB)/8, $0x0000000200000002
DATA t40PIdx<>+80(SB)/8, $0x0000000200000002
DATA t40PIdx<>+88(SB)/8, $0x0000000200000002
DATA t40PIdx<>+96(SB)/8, $0x0000000300000003
DATA t40PIdx<>+104(SB)/8, $0x0000000300000003
DATA t40PIdx<>+112(SB)/8, $0x0000000300000003
DATA t40PIdx<>+120(SB)/8, $0x0000000300000003
DATA t40PIdx<>+128(SB)/8, $0x0000000400000004
DATA t40PIdx<>+136(SB)/8, $0x0000000400000004
DATA t40PIdx<>+144(SB)/8, $0x0000000400000004
DATA t40PIdx<>+152(SB)/8, $0x0000000400000004
DATA t40PIdx<>+160(SB)/8, $0x0000000500000005
DATA t40PIdx<>+168(SB)/8, $0x0000000500000005
DATA t40PIdx<>+176(SB)/8, $0x0000000500000005
DATA t40PIdx<>+184(SB)/8, $0x0000000500000005
DATA t40PIdx<>+192(SB)/8, $0x0000000600000006
DATA t40PIdx<>+200(SB)/8, $0x0000000600000006
DATA t40PIdx<>+208(SB)/8, $0x0000000600000006
DATA t40PIdx<>+216(SB)/8, $0x0000000600000006
DATA t40PIdx<>+224(SB)/8, $0x0000000700000007
DATA t40PIdx<>+232(SB)/8, $0x0000000700000007
DATA t40PIdx<>+240(SB)/8, $0x0000000700000007
DATA t40PIdx<>+248(SB)/8, $0x0000000700000007
GLOBL t40PIdx<>(SB), RODATA|NOPTR, $256

#define T40_CONST \
	MOVL         $0xFF00, AX ; \
	KMOVW        AX, K1 ; \
	VMOVDQU64    t40Shift<>(SB), Z28 ; \
	MOVL         $0x0F0F0F0F, AX ; \
	VPBROADCASTD AX, Z29 ; \
	MOVL         $0x08080808, AX ; \
	VPBROADCASTD AX, Z30

// The activation scales of the eight blocks at col, as float32 in dst (a
// Y register). Z22: t40XIdx.
#define T40_DX(col, dst) \
	VMOVDQU64   (col), Z20 ; \
	VPERMT2W    64(col), Z22, Z20 ; \
	VMOVDQU64   136(col), Z21 ; \
	VPERMT2W    200(col), Z22, Z21 ; \
	VPUNPCKLQDQ X21, X20, X20 ; \
	VCVTPH2PS   X20, dst

// The weight scales of the eight blocks at row, as float32 in Y20. Z23:
// t40WIdx.
#define T40_DW(row) \
	VMOVDQU64 (row), Z20 ; \
	VPERMT2W  64(row), Z23, Z20 ; \
	VCVTPH2PS X20, Y20

// Y20 times the column scales dx, to the stack at slot from R13, which is
// 64-byte aligned so that VPERMPS never reads across a cache line.
#define T40_PROD(dx, slot) \
	VMULPS  dx, Y20, Y21 ; \
	VMOVUPS Y21, slot(R13)

// Activation pair p of col into xp (yp its Y form), and -8·Σ of each four
// of its bytes into corr.
#define T40_XPAIR(col, xoff, xp, yp, corr) \
	VMOVDQU64    (xoff+2)(col), yp ; \
	VINSERTI64X4 $1, (xoff+36)(col), xp, xp ; \
	VPXORD       corr, corr, corr ; \
	VPDPBUSD     xp, Z30, corr ; \
	VPXORD       Z21, Z21, Z21 ; \
	VPSUBD       corr, Z21, corr

// The nibbles of pair p of row, as bytes in Z20: block 2p's sixteen bytes
// broadcast to lanes 0-1, block 2p+1's to lanes 2-3 (K1: dwords 8-15),
// shifted per lane and masked.
#define T40_WPAIR(row, woff) \
	VBROADCASTI32X4 (woff+2)(row), Z20 ; \
	VBROADCASTI32X4 (woff+20)(row), K1, Z20 ; \
	VPSRLVQ         Z28, Z20, Z20 ; \
	VPANDD          Z29, Z20, Z20

// acc += d_w·d_x·Σ(q-8)·y for the weight pair in Z20 and activation pair
// xp. Z27: the pair's scale index.
#define T40_RC(xp, corr, slot, acc) \
	VMOVDQA32   corr, Z21 ; \
	VPDPBUSD    xp, Z20, Z21 ; \
	VCVTDQ2PS   Z21, Z21 ; \
	VPERMPS     slot(R13), Z27, Z22 ; \
	VFMADD231PS Z22, Z21, acc

// The sums of four accumulators (Z0-Z15, with their Y forms) as the four
// floats of xa.
#define T40_REDUCE4(a, b, c, d, ya, yb, yc, yd, xa) \
	VEXTRACTF64X4 $1, a, Y20 ; \
	VADDPS        Y20, ya, ya ; \
	VEXTRACTF64X4 $1, b, Y20 ; \
	VADDPS        Y20, yb, yb ; \
	VEXTRACTF64X4 $1, c, Y20 ; \
	VADDPS        Y20, yc, yc ; \
	VEXTRACTF64X4 $1, d, Y20 ; \
	VADDPS        Y20, yd, yd ; \
	VHADDPS       yb, ya, ya ; \
	VHADDPS       yd, yc, yc ; \
	VHADDPS       yc, ya, ya ; \
	VEXTRACTF32X4 $1, ya, X20 ; \
	VADDPS        X20, xa, xa

// Row pointers SI, BX, R8, R9 from w and wStride.
#define T40_ROWS \
	MOVQ w+0(FP), SI ; \
	MOVQ wStride+8(FP), AX ; \
	LEAQ (SI)(AX*1), BX ; \
	LEAQ (SI)(AX*2), R8 ; \
	LEAQ (BX)(AX*2), R9

// R13: the stack frame rounded up to 64 bytes.
#define T40_ALIGN \
	LEAQ 63(SP), R13 ; \
	ANDQ $~63, R13

#define T40_NEXT_ROWS \
	ADDQ $144, SI ; \
	ADDQ $144, BX ; \
	ADDQ $144, R8 ; \
	ADDQ $144, R9

// Pair p of a 4×1 tile.
#define T40_PAIR41(p) \
	VMOVDQU64 t40PIdx<>+(64*p)(SB), Z27 ; \
	T40_XPAIR(DI, 68*p, Z16, Y16, Z23) ; \
	T40_WPAIR(SI, 36*p) ; \
	T40_RC(Z16, Z23, 0, Z0) ; \
	T40_WPAIR(BX, 36*p) ; \
	T40_RC(Z16, Z23, 64, Z1) ; \
	T40_WPAIR(R8, 36*p) ; \
	T40_RC(Z16, Z23, 128, Z2) ; \
	T40_WPAIR(R9, 36*p) ; \
	T40_RC(Z16, Z23, 192, Z3)

// Prefetch of the rows of a later tile (reg bytes on) at the current
// offset: the hardware prefetchers, seeing four short streams at a time,
// fetch them late. 144 bytes a row per iteration.
#define TPF(row, reg) \
	PREFETCHT0 0(row)(reg*1) ; \
	PREFETCHT0 64(row)(reg*1) ; \
	PREFETCHT0 128(row)(reg*1)

// func tileQ4_0VNNI4x1(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
// Stack: the scale products of row r at 64r from R13.
TEXT ·tileQ4_0VNNI4x1(SB), NOSPLIT, $320-56
	T40_ROWS
	MOVQ wStride+8(FP), R10
	SHLQ $3, R10
	T40_ALIGN
	MOVQ x+16(FP), DI
	MOVQ nb+32(FP), CX
	T40_CONST
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

loop:
	TPF(SI, R10)
	TPF(BX, R10)
	TPF(R8, R10)
	TPF(R9, R10)
	VMOVDQU64 t40XIdx<>(SB), Z22
	T40_DX(DI, Y16)
	VMOVDQU64 t40WIdx<>(SB), Z23
	T40_DW(SI)
	T40_PROD(Y16, 0)
	T40_DW(BX)
	T40_PROD(Y16, 64)
	T40_DW(R8)
	T40_PROD(Y16, 128)
	T40_DW(R9)
	T40_PROD(Y16, 192)
	T40_PAIR41(0)
	T40_PAIR41(1)
	T40_PAIR41(2)
	T40_PAIR41(3)
	T40_NEXT_ROWS
	ADDQ $272, DI
	SUBQ $8, CX
	JNZ  loop

	T40_REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0)
	MOVQ    out+40(FP), R12
	VMOVUPS X0, (R12)
	VZEROUPPER
	RET

// Pair p of a 4×4 tile.
#define T40_PAIR44(p) \
	VMOVDQU64 t40PIdx<>+(64*p)(SB), Z27 ; \
	T40_XPAIR(DI, 68*p, Z16, Y16, Z23) ; \
	T40_XPAIR(DX, 68*p, Z17, Y17, Z24) ; \
	T40_XPAIR(R10, 68*p, Z18, Y18, Z25) ; \
	T40_XPAIR(R11, 68*p, Z19, Y19, Z26) ; \
	T40_WPAIR(SI, 36*p) ; \
	T40_RC(Z16, Z23, 0, Z0) ; \
	T40_RC(Z17, Z24, 64, Z1) ; \
	T40_RC(Z18, Z25, 128, Z2) ; \
	T40_RC(Z19, Z26, 192, Z3) ; \
	T40_WPAIR(BX, 36*p) ; \
	T40_RC(Z16, Z23, 256, Z4) ; \
	T40_RC(Z17, Z24, 320, Z5) ; \
	T40_RC(Z18, Z25, 384, Z6) ; \
	T40_RC(Z19, Z26, 448, Z7) ; \
	T40_WPAIR(R8, 36*p) ; \
	T40_RC(Z16, Z23, 512, Z8) ; \
	T40_RC(Z17, Z24, 576, Z9) ; \
	T40_RC(Z18, Z25, 640, Z10) ; \
	T40_RC(Z19, Z26, 704, Z11) ; \
	T40_WPAIR(R9, 36*p) ; \
	T40_RC(Z16, Z23, 768, Z12) ; \
	T40_RC(Z17, Z24, 832, Z13) ; \
	T40_RC(Z18, Z25, 896, Z14) ; \
	T40_RC(Z19, Z26, 960, Z15)

// func tileQ4_0VNNI4x4(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
// Stack: the scale products of row r and column c at 256r+64c from R13.
TEXT ·tileQ4_0VNNI4x4(SB), 0, $1088-56
	T40_ROWS
	MOVQ wStride+8(FP), R12
	SHLQ $2, R12
	T40_ALIGN
	MOVQ x+16(FP), DI
	MOVQ xStride+24(FP), AX
	LEAQ (DI)(AX*1), DX
	LEAQ (DI)(AX*2), R10
	LEAQ (DX)(AX*2), R11
	MOVQ nb+32(FP), CX
	T40_CONST
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

loop:
	TPF(SI, R12)
	TPF(BX, R12)
	TPF(R8, R12)
	TPF(R9, R12)
	VMOVDQU64 t40XIdx<>(SB), Z22
	T40_DX(DI, Y16)
	T40_DX(DX, Y17)
	T40_DX(R10, Y18)
	T40_DX(R11, Y19)
	VMOVDQU64 t40WIdx<>(SB), Z23
	T40_DW(SI)
	T40_PROD(Y16, 0)
	T40_PROD(Y17, 64)
	T40_PROD(Y18, 128)
	T40_PROD(Y19, 192)
	T40_DW(BX)
	T40_PROD(Y16, 256)
	T40_PROD(Y17, 320)
	T40_PROD(Y18, 384)
	T40_PROD(Y19, 448)
	T40_DW(R8)
	T40_PROD(Y16, 512)
	T40_PROD(Y17, 576)
	T40_PROD(Y18, 640)
	T40_PROD(Y19, 704)
	T40_DW(R9)
	T40_PROD(Y16, 768)
	T40_PROD(Y17, 832)
	T40_PROD(Y18, 896)
	T40_PROD(Y19, 960)
	T40_PAIR44(0)
	T40_PAIR44(1)
	T40_PAIR44(2)
	T40_PAIR44(3)
	T40_NEXT_ROWS
	ADDQ $272, DI
	ADDQ $272, DX
	ADDQ $272, R10
	ADDQ $272, R11
	SUBQ $8, CX
	JNZ  loop

	MOVQ out+40(FP), R12
	MOVQ outStride+48(FP), R13
	SHLQ $2, R13
	T40_REDUCE4(Z0, Z4, Z8, Z12, Y0, Y4, Y8, Y12, X0)
	VMOVUPS X0, (R12)
	T40_REDUCE4(Z1, Z5, Z9, Z13, Y1, Y5, Y9, Y13, X1)
	VMOVUPS X1, (R12)(R13*1)
	T40_REDUCE4(Z2, Z6, Z10, Z14, Y2, Y6, Y10, Y14, X2)
	VMOVUPS X2, (R12)(R13*2)
	T40_REDUCE4(Z3, Z7, Z11, Z15, Y3, Y7, Y11, Y15, X3)
	LEAQ    (R13)(R13*2), AX
	VMOVUPS X3, (R12)(AX*1)
	VZEROUPPER
	RET

// AVX2: one block per 256-bit register, four rows against one column.
// Register use: Y0-Y3 accumulators, Y4 the activation block, Y5 its
// 8·Σ of pairs, Y6-Y10 scratch, Y11/Y12 gather indexes, Y13 words 1, Y14
// bytes 8, Y15 bytes 0x0F. The scale products d_w·d_x of the eight blocks
// of row r go to the stack at 32r.

// Dword offsets of the eight blocks' scales: 18-byte weight blocks and
// 34-byte activation blocks.
DATA t40aWOff<>+0(SB)/4, $0
DATA t40aWOff<>+4(SB)/4, $18
DATA t40aWOff<>+8(SB)/4, $36
DATA t40aWOff<>+12(SB)/4, $54
DATA t40aWOff<>+16(SB)/4, $72
DATA t40aWOff<>+20(SB)/4, $90
DATA t40aWOff<>+24(SB)/4, $108
DATA t40aWOff<>+28(SB)/4, $126
GLOBL t40aWOff<>(SB), RODATA|NOPTR, $32
DATA t40aXOff<>+0(SB)/4, $0
DATA t40aXOff<>+4(SB)/4, $34
DATA t40aXOff<>+8(SB)/4, $68
DATA t40aXOff<>+12(SB)/4, $102
DATA t40aXOff<>+16(SB)/4, $136
DATA t40aXOff<>+20(SB)/4, $170
DATA t40aXOff<>+24(SB)/4, $204
DATA t40aXOff<>+28(SB)/4, $238
GLOBL t40aXOff<>(SB), RODATA|NOPTR, $32

// VPSHUFB mask packing the low words of four dwords into the low 8 bytes
// of each 128-bit lane.
DATA t40aPack<>+0(SB)/8, $0x0D0C090805040100
DATA t40aPack<>+8(SB)/8, $0x8080808080808080
DATA t40aPack<>+16(SB)/8, $0x0D0C090805040100
DATA t40aPack<>+24(SB)/8, $0x8080808080808080
GLOBL t40aPack<>(SB), RODATA|NOPTR, $32

// The fp16 scales of the eight blocks at base (offsets in idx) as float32
// in dst; ydst/xdst are its Y and X forms. Y10 is the gather mask.
#define T40A_SCALES(base, idx, ydst, xdst) \
	VPCMPEQD   Y10, Y10, Y10 ; \
	VPXOR      ydst, ydst, ydst ; \
	VPGATHERDD Y10, (base)(idx*1), ydst ; \
	VPSHUFB    t40aPack<>(SB), ydst, ydst ; \
	VPERMQ     $0x08, ydst, ydst ; \
	VCVTPH2PS  xdst, ydst

// Row scales times the column scales in Y9, to the stack at slot.
#define T40A_PROD(row, slot) \
	T40A_SCALES(row, Y12, Y8, X8) ; \
	VMULPS  Y9, Y8, Y8 ; \
	VMOVUPS Y8, slot(SP)

// Block b of row against the activation block in Y4 (Y5: its 8·Σ).
#define T40A_RB(row, b, slot, acc) \
	VMOVDQU      (18*b+2)(row), X6 ; \
	VPSRLW       $4, X6, X7 ; \
	VINSERTI128  $1, X7, Y6, Y6 ; \
	VPAND        Y15, Y6, Y6 ; \
	VPMADDUBSW   Y4, Y6, Y6 ; \
	VPSUBW       Y5, Y6, Y6 ; \
	VPMADDWD     Y13, Y6, Y6 ; \
	VCVTDQ2PS    Y6, Y6 ; \
	VBROADCASTSS (slot+4*b)(SP), Y7 ; \
	VFMADD231PS  Y7, Y6, acc

#define T40A_BLOCK(b) \
	VMOVDQU    (34*b+2)(DI), Y4 ; \
	VPMADDUBSW Y4, Y14, Y5 ; \
	T40A_RB(SI, b, 0, Y0) ; \
	T40A_RB(BX, b, 32, Y1) ; \
	T40A_RB(R8, b, 64, Y2) ; \
	T40A_RB(R9, b, 96, Y3)

// func tileQ4_0AVX24x1(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
TEXT ·tileQ4_0AVX24x1(SB), NOSPLIT, $128-56
	T40_ROWS
	MOVQ wStride+8(FP), R10
	SHLQ $3, R10
	MOVQ         x+16(FP), DI
	MOVQ         nb+32(FP), CX
	MOVL         $0x00010001, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	MOVL         $0x08080808, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0x0F0F0F0F, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	VMOVDQU      t40aWOff<>(SB), Y12
	VMOVDQU      t40aXOff<>(SB), Y11
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3

loop:
	TPF(SI, R10)
	TPF(BX, R10)
	TPF(R8, R10)
	TPF(R9, R10)
	T40A_SCALES(DI, Y11, Y9, X9)
	T40A_PROD(SI, 0)
	T40A_PROD(BX, 32)
	T40A_PROD(R8, 64)
	T40A_PROD(R9, 96)
	T40A_BLOCK(0)
	T40A_BLOCK(1)
	T40A_BLOCK(2)
	T40A_BLOCK(3)
	T40A_BLOCK(4)
	T40A_BLOCK(5)
	T40A_BLOCK(6)
	T40A_BLOCK(7)
	T40_NEXT_ROWS
	ADDQ $272, DI
	SUBQ $8, CX
	JNZ  loop

	VHADDPS     Y1, Y0, Y0
	VHADDPS     Y3, Y2, Y2
	VHADDPS     Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS      X1, X0, X0
	MOVQ        out+40(FP), R12
	VMOVUPS     X0, (R12)
	VZEROUPPER
	RET

// AVX-512 VBMI, four rows against one column. Each row's eight blocks (144
// bytes) come in with three loads, bytes 0-63 (A), 64-127 (B) and 80-143
// (C), and VPERMT2B picks out the nibble bytes of a pair from A:B (pairs
// 0-2) or B:C (pair 3), block 2p's in 128-bit lanes 0-1 and block 2p+1's in
// 2-3; VGF2P8AFFINEQB with a bit matrix per qword (Z25) keeps the low
// nibbles in lanes 0 and 2 and moves the high ones down in lanes 1 and 3.
// The weight scales come out of A:B with VPERMT2W.
//
// Register use: Z0-Z3 accumulators, Z4-Z7 the rows' scale products (row r
// in Z(4+r)), Z8-Z19 the rows' bytes (row r's A, B, C in Z(8+3r),
// Z(9+3r), Z(10+3r)), Z20 weight pair, Z21-Z22 scratch, Z23 activation
// pair, Z24 its correction, Z25 the bit matrices, Z26, Z28, Z29 and Z31
// the VPERMT2B indexes of pairs 0-3, Z27 the pair's scale index, Z30
// bytes 8.

// VPERMT2B indexes, 64 bytes per pair.
DATA t40vIdx<>+0(SB)/8, $0x0908070605040302
DATA t40vIdx<>+8(SB)/8, $0x11100F0E0D0C0B0A
DATA t40vIdx<>+16(SB)/8, $0x0908070605040302
DATA t40vIdx<>+24(SB)/8, $0x11100F0E0D0C0B0A
DATA t40vIdx<>+32(SB)/8, $0x1B1A191817161514
DATA t40vIdx<>+40(SB)/8, $0x232221201F1E1D1C
DATA t40vIdx<>+48(SB)/8, $0x1B1A191817161514
DATA t40vIdx<>+56(SB)/8, $0x232221201F1E1D1C
DATA t40vIdx<>+64(SB)/8, $0x2D2C2B2A29282726
DATA t40vIdx<>+72(SB)/8, $0x3534333231302F2E
DATA t40vIdx<>+80(SB)/8, $0x2D2C2B2A29282726
DATA t40vIdx<>+88(SB)/8, $0x3534333231302F2E
DATA t40vIdx<>+96(SB)/8, $0x3F3E3D3C3B3A3938
DATA t40vIdx<>+104(SB)/8, $0x4746454443424140
DATA t40vIdx<>+112(SB)/8, $0x3F3E3D3C3B3A3938
DATA t40vIdx<>+120(SB)/8, $0x4746454443424140
DATA t40vIdx<>+128(SB)/8, $0x51504F4E4D4C4B4A
DATA t40vIdx<>+136(SB)/8, $0x5958575655545352
DATA t40vIdx<>+144(SB)/8, $0x51504F4E4D4C4B4A
DATA t40vIdx<>+152(SB)/8, $0x5958575655545352
DATA t40vIdx<>+160(SB)/8, $0x636261605F5E5D5C
DATA t40vIdx<>+168(SB)/8, $0x6B6A696867666564
DATA t40vIdx<>+176(SB)/8, $0x636261605F5E5D5C
DATA t40vIdx<>+184(SB)/8, $0x6B6A696867666564
DATA t40vIdx<>+192(SB)/8, $0x3534333231302F2E
DATA t40vIdx<>+200(SB)/8, $0x3D3C3B3A39383736
DATA t40vIdx<>+208(SB)/8, $0x3534333231302F2E
DATA t40vIdx<>+216(SB)/8, $0x3D3C3B3A39383736
DATA t40vIdx<>+224(SB)/8, $0x7776757473727170
DATA t40vIdx<>+232(SB)/8, $0x7F7E7D7C7B7A7978
DATA t40vIdx<>+240(SB)/8, $0x7776757473727170
DATA t40vIdx<>+248(SB)/8, $0x7F7E7D7C7B7A7978
GLOBL t40vIdx<>(SB), RODATA|NOPTR, $256

// Row's bytes into a, b, c; its scale products with the column (Y21) into
// the Y form of prod. Z22: t40WIdx.
#define T40V_ROW(row, a, b, c, prod, yprod, xprod) \
	VMOVDQU64 (row), a ; \
	VMOVDQU64 64(row), b ; \
	VMOVDQU64 80(row), c ; \
	VMOVDQA64 a, prod ; \
	VPERMT2W  b, Z22, prod ; \
	VCVTPH2PS xprod, yprod ; \
	VMULPS    Y21, yprod, yprod

// Pair p of a row from tables t1:t2 with index idx, unpacked into Z20,
// against the activation pair: acc += scales·Σ(q-8)·y.
#define T40V_RC(t1, t2, idx, prod, acc) \
	VMOVDQA64      t1, Z20 ; \
	VPERMT2B       t2, idx, Z20 ; \
	VGF2P8AFFINEQB $0, Z25, Z20, Z20 ; \
	VMOVDQA32      Z24, Z21 ; \
	VPDPBUSD       Z23, Z20, Z21 ; \
	VCVTDQ2PS      Z21, Z21 ; \
	VPERMPS        prod, Z27, Z22 ; \
	VFMADD231PS    Z22, Z21, acc

// Pair p (p < 3) of the four rows.
#define T40V_PAIR(p, idx) \
	VMOVDQU64 t40PIdx<>+(64*p)(SB), Z27 ; \
	T40_XPAIR(DI, 68*p, Z23, Y23, Z24) ; \
	T40V_RC(Z8, Z9, idx, Z4, Z0) ; \
	T40V_RC(Z11, Z12, idx, Z5, Z1) ; \
	T40V_RC(Z14, Z15, idx, Z6, Z2) ; \
	T40V_RC(Z17, Z18, idx, Z7, Z3)

// Prefetch of the next tile's rows (R10: four strides on), which the
// hardware prefetchers, seeing four short streams at a time, fetch late.
#define T40V_PREFETCH(row) \
	PREFETCHT0 (row)(R10*1) ; \
	PREFETCHT0 64(row)(R10*1) ; \
	PREFETCHT0 128(row)(R10*1)

// Pair 3 of the four rows, from B:C.
#define T40V_PAIR3 \
	VMOVDQU64 t40PIdx<>+192(SB), Z27 ; \
	T40_XPAIR(DI, 204, Z23, Y23, Z24) ; \
	T40V_RC(Z9, Z10, Z31, Z4, Z0) ; \
	T40V_RC(Z12, Z13, Z31, Z5, Z1) ; \
	T40V_RC(Z15, Z16, Z31, Z6, Z2) ; \
	T40V_RC(Z18, Z19, Z31, Z7, Z3)

// func tileQ4_0VBMI4x1(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
TEXT ·tileQ4_0VBMI4x1(SB), NOSPLIT, $0-56
	T40_ROWS
	SHLQ         $3, AX
	MOVQ         AX, R10
	MOVQ         x+16(FP), DI
	MOVQ         nb+32(FP), CX
	MOVL         $0x08080808, AX
	VPBROADCASTD AX, Z30
	MOVL         $0xCC, AX
	KMOVW        AX, K2
	MOVQ         $0x0102040800000000, AX
	VPBROADCASTQ AX, Z25
	MOVQ         $0x1020408000000000, AX
	VPBROADCASTQ AX, K2, Z25
	VMOVDQU64    t40vIdx<>+0(SB), Z26
	VMOVDQU64    t40vIdx<>+64(SB), Z28
	VMOVDQU64    t40vIdx<>+128(SB), Z29
	VMOVDQU64    t40vIdx<>+192(SB), Z31
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPXORD       Z2, Z2, Z2
	VPXORD       Z3, Z3, Z3

loop:
	VMOVDQU64 t40XIdx<>(SB), Z22
	T40_DX(DI, Y21)
	VMOVDQU64 t40WIdx<>(SB), Z22
	T40V_ROW(SI, Z8, Z9, Z10, Z4, Y4, X4)
	T40V_ROW(BX, Z11, Z12, Z13, Z5, Y5, X5)
	T40V_ROW(R8, Z14, Z15, Z16, Z6, Y6, X6)
	T40V_ROW(R9, Z17, Z18, Z19, Z7, Y7, X7)
	T40V_PREFETCH(SI)
	T40V_PREFETCH(BX)
	T40V_PREFETCH(R8)
	T40V_PREFETCH(R9)
	T40V_PAIR(0, Z26)
	T40V_PAIR(1, Z28)
	T40V_PAIR(2, Z29)
	T40V_PAIR3
	T40_NEXT_ROWS
	ADDQ $272, DI
	SUBQ $8, CX
	JNZ  loop

	T40_REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0)
	MOVQ    out+40(FP), R12
	VMOVUPS X0, (R12)
	VZEROUPPER
	RET

// AVX2, four rows against two columns: each weight block is unpacked once
// for both. Register use: Y0-Y3 accumulators of column 0 (row r in Yr),
// Y4-Y7 of column 1, Y8/Y9 the columns' activation blocks, Y10/Y11 their
// 8·Σ of pairs, Y12 the weight block, Y13/Y14 scratch, Y15 bytes 0x0F. The
// scale products d_w·d_x of the eight blocks of row r and column c go to the
// stack at 64r+32c.

DATA t40bOnes<>+0(SB)/8, $0x0001000100010001
DATA t40bOnes<>+8(SB)/8, $0x0001000100010001
DATA t40bOnes<>+16(SB)/8, $0x0001000100010001
DATA t40bOnes<>+24(SB)/8, $0x0001000100010001
GLOBL t40bOnes<>(SB), RODATA|NOPTR, $32
DATA t40bEights<>+0(SB)/8, $0x0808080808080808
DATA t40bEights<>+8(SB)/8, $0x0808080808080808
DATA t40bEights<>+16(SB)/8, $0x0808080808080808
DATA t40bEights<>+24(SB)/8, $0x0808080808080808
GLOBL t40bEights<>(SB), RODATA|NOPTR, $32

// The fp16 scales of the eight blocks at base (offsets in table idx) as
// float32 in dst; Y13 is the gather mask, Y14 the offsets.
#define T40B_SCALES(base, idx, ydst, xdst) \
	VMOVDQU    idx, Y14 ; \
	VPCMPEQD   Y13, Y13, Y13 ; \
	VPXOR      ydst, ydst, ydst ; \
	VPGATHERDD Y13, (base)(Y14*1), ydst ; \
	VPSHUFB    t40aPack<>(SB), ydst, ydst ; \
	VPERMQ     $0x08, ydst, ydst ; \
	VCVTPH2PS  xdst, ydst

// Row scales times the column scales in Y8 and Y9, to the stack at slot
// and slot+32.
#define T40B_PROD(row, slot) \
	T40B_SCALES(row, t40aWOff<>(SB), Y12, X12) ; \
	VMULPS  Y8, Y12, Y13 ; \
	VMOVUPS Y13, slot(SP) ; \
	VMULPS  Y9, Y12, Y13 ; \
	VMOVUPS Y13, (slot+32)(SP)

// Block b of row r against the activation blocks of both columns.
#define T40B_RB(row, b, slot, acc0, acc1) \
	VMOVDQU      (18*b+2)(row), X12 ; \
	VPSRLW       $4, X12, X13 ; \
	VINSERTI128  $1, X13, Y12, Y12 ; \
	VPAND        Y15, Y12, Y12 ; \
	VPMADDUBSW   Y8, Y12, Y13 ; \
	VPSUBW       Y10, Y13, Y13 ; \
	VPMADDWD     t40bOnes<>(SB), Y13, Y13 ; \
	VCVTDQ2PS    Y13, Y13 ; \
	VBROADCASTSS (slot+4*b)(SP), Y14 ; \
	VFMADD231PS  Y14, Y13, acc0 ; \
	VPMADDUBSW   Y9, Y12, Y13 ; \
	VPSUBW       Y11, Y13, Y13 ; \
	VPMADDWD     t40bOnes<>(SB), Y13, Y13 ; \
	VCVTDQ2PS    Y13, Y13 ; \
	VBROADCASTSS (slot+32+4*b)(SP), Y14 ; \
	VFMADD231PS  Y14, Y13, acc1

#define T40B_BLOCK(b) \
	VMOVDQU    (34*b+2)(DI), Y8 ; \
	VMOVDQU    (34*b+2)(DX), Y9 ; \
	VMOVDQU    t40bEights<>(SB), Y13 ; \
	VPMADDUBSW Y8, Y13, Y10 ; \
	VPMADDUBSW Y9, Y13, Y11 ; \
	T40B_RB(SI, b, 0, Y0, Y4) ; \
	T40B_RB(BX, b, 64, Y1, Y5) ; \
	T40B_RB(R8, b, 128, Y2, Y6) ; \
	T40B_RB(R9, b, 192, Y3, Y7)

// The sums of four accumulators as the four floats of xa.
#define T40B_REDUCE4(ya, yb, yc, yd, xa, xt) \
	VHADDPS      yb, ya, ya ; \
	VHADDPS      yd, yc, yc ; \
	VHADDPS      yc, ya, ya ; \
	VEXTRACTF128 $1, ya, xt ; \
	VADDPS       xt, xa, xa

// func tileQ4_0AVX24x2(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
TEXT ·tileQ4_0AVX24x2(SB), NOSPLIT, $256-56
	T40_ROWS
	MOVQ         wStride+8(FP), R10
	SHLQ         $2, R10
	MOVQ         x+16(FP), DI
	MOVQ         xStride+24(FP), DX
	ADDQ         DI, DX
	MOVQ         nb+32(FP), CX
	MOVL         $0x0F0F0F0F, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3
	VXORPS       Y4, Y4, Y4
	VXORPS       Y5, Y5, Y5
	VXORPS       Y6, Y6, Y6
	VXORPS       Y7, Y7, Y7

loop:
	TPF(SI, R10)
	TPF(BX, R10)
	TPF(R8, R10)
	TPF(R9, R10)
	T40B_SCALES(DI, t40aXOff<>(SB), Y8, X8)
	T40B_SCALES(DX, t40aXOff<>(SB), Y9, X9)
	T40B_PROD(SI, 0)
	T40B_PROD(BX, 64)
	T40B_PROD(R8, 128)
	T40B_PROD(R9, 192)
	T40B_BLOCK(0)
	T40B_BLOCK(1)
	T40B_BLOCK(2)
	T40B_BLOCK(3)
	T40B_BLOCK(4)
	T40B_BLOCK(5)
	T40B_BLOCK(6)
	T40B_BLOCK(7)
	T40_NEXT_ROWS
	ADDQ $272, DI
	ADDQ $272, DX
	SUBQ $8, CX
	JNZ  loop

	MOVQ out+40(FP), R12
	MOVQ outStride+48(FP), R13
	T40B_REDUCE4(Y0, Y1, Y2, Y3, X0, X8)
	VMOVUPS X0, (R12)
	T40B_REDUCE4(Y4, Y5, Y6, Y7, X4, X8)
	VMOVUPS X4, (R12)(R13*4)
	VZEROUPPER
	RET
