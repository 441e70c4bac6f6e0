//go:build amd64 && !purego

#include "textflag.h"

// Tile kernels for Q8_0 weights and Q8_0 activations with AVX-512 VNNI.
//
// Block (34 bytes): fp16 d at 0, int8 qs[32] at 2. The kernels run eight
// blocks per iteration as four pairs, one pair per 512-bit register: the
// two blocks' quants side by side, every dword lane summing four byte
// products of one block.
//
// VPDPBUSD multiplies unsigned by signed bytes, so the weights go in as
// w+128 (w XOR 0x80) and -128·Σy, which depends on the activations only, is
// computed once per column and pair and seeds every row's integer sum. The
// products d_w·d_x of a row and column's eight blocks go to a 64-byte stack
// slot per (row, column), and VPERMPS spreads those of a pair over the two
// halves of a register.
//
// Register use: Z0-Z15 float accumulators (row r, column c in Z(4r+c)),
// Z16-Z19 activation pairs, Z20 weight pair, Z21-Z22 scratch, Z23-Z26
// corrections, Z27 the pair's scale index, Z30 bytes 0x80. Rows are at SI,
// BX, R8, R9; columns at DI, DX, R10, R11.

// Word indexes for VPERMT2W that pick the fp16 scales of four 34-byte
// blocks out of 128 bytes.
DATA t80XIdx<>+0(SB)/8, $0x0033002200110000
GLOBL t80XIdx<>(SB), RODATA|NOPTR, $64

// Dword indexes for VPERMPS, 64 bytes per pair p: 2p in lanes 0-7, 2p+1 in
// lanes 8-15.
DATA t80PIdx<>+0(SB)/8, $0x0000000000000000
DATA t80PIdx<>+8(SB)/8, $0x0000000000000000
DATA t80PIdx<>+16(SB)/8, $0x0000000000000000
DATA t80PIdx<>+24(SB)/8, $0x0000000000000000
DATA t80PIdx<>+32(SB)/8, $0x0000000100000001
DATA t80PIdx<>+40(SB)/8, $0x0000000100000001
DATA t80PIdx<>+48(SB)/8, $0x0000000100000001
DATA t80PIdx<>+56(SB)/8, $0x0000000100000001
DATA t80PIdx<>+64(SB)/8, $0x0000000200000002
DATA t80PIdx<>+72(SB)/8, $0x0000000200000002
DATA t80PIdx<>+80(SB)/8, $0x0000000200000002
DATA t80PIdx<>+88(SB)/8, $0x0000000200000002
DATA t80PIdx<>+96(SB)/8, $0x0000000300000003
DATA t80PIdx<>+104(SB)/8, $0x0000000300000003
DATA t80PIdx<>+112(SB)/8, $0x0000000300000003
DATA t80PIdx<>+120(SB)/8, $0x0000000300000003
DATA t80PIdx<>+128(SB)/8, $0x0000000400000004
DATA t80PIdx<>+136(SB)/8, $0x0000000400000004
DATA t80PIdx<>+144(SB)/8, $0x0000000400000004
DATA t80PIdx<>+152(SB)/8, $0x0000000400000004
DATA t80PIdx<>+160(SB)/8, $0x0000000500000005
DATA t80PIdx<>+168(SB)/8, $0x0000000500000005
DATA t80PIdx<>+176(SB)/8, $0x0000000500000005
DATA t80PIdx<>+184(SB)/8, $0x0000000500000005
DATA t80PIdx<>+192(SB)/8, $0x0000000600000006
DATA t80PIdx<>+200(SB)/8, $0x0000000600000006
DATA t80PIdx<>+208(SB)/8, $0x0000000600000006
DATA t80PIdx<>+216(SB)/8, $0x0000000600000006
DATA t80PIdx<>+224(SB)/8, $0x0000000700000007
DATA t80PIdx<>+232(SB)/8, $0x0000000700000007
DATA t80PIdx<>+240(SB)/8, $0x0000000700000007
DATA t80PIdx<>+248(SB)/8, $0x0000000700000007
GLOBL t80PIdx<>(SB), RODATA|NOPTR, $256

#define T80_CONST \
	MOVL         $0x80808080, AX ; \
	VPBROADCASTD AX, Z30

// The activation scales of the eight blocks at col, as float32 in dst (a
// Y register). Z22: t80XIdx.
#define T80_DX(col, dst) \
	VMOVDQU64   (col), Z20 ; \
	VPERMT2W    64(col), Z22, Z20 ; \
	VMOVDQU64   136(col), Z21 ; \
	VPERMT2W    200(col), Z22, Z21 ; \
	VPUNPCKLQDQ X21, X20, X20 ; \
	VCVTPH2PS   X20, dst

// The weight scales of the eight blocks at row, as float32 in Y20. Z22:
// t80XIdx.
#define T80_DW(row) \
	T80_DX(row, Y20)

// Y20 times the column scales dx, to the stack at slot from R13, which is
// 64-byte aligned so that VPERMPS never reads across a cache line.
#define T80_PROD(dx, slot) \
	VMULPS  dx, Y20, Y21 ; \
	VMOVUPS Y21, slot(R13)

// Activation pair p of col into xp (yp its Y form), and -128·Σ of each
// four of its bytes into corr.
#define T80_XPAIR(col, xoff, xp, yp, corr) \
	VMOVDQU64    (xoff+2)(col), yp ; \
	VINSERTI64X4 $1, (xoff+36)(col), xp, xp ; \
	VPXORD       corr, corr, corr ; \
	VPDPBUSD     xp, Z30, corr ; \
	VPXORD       Z21, Z21, Z21 ; \
	VPSUBD       corr, Z21, corr

// Weight pair p of row plus 128, as unsigned bytes in Z20.
#define T80_WPAIR(row, woff) \
	VMOVDQU64    (woff+2)(row), Y20 ; \
	VINSERTI64X4 $1, (woff+36)(row), Z20, Z20 ; \
	VPXORD       Z30, Z20, Z20

// acc += d_w·d_x·Σw·y for the weight pair in Z20 and activation pair
// xp. Z27: the pair's scale index.
#define T80_RC(xp, corr, slot, acc) \
	VMOVDQA32   corr, Z21 ; \
	VPDPBUSD    xp, Z20, Z21 ; \
	VCVTDQ2PS   Z21, Z21 ; \
	VPERMPS     slot(R13), Z27, Z22 ; \
	VFMADD231PS Z22, Z21, acc

// The sums of four accumulators (Z0-Z15, with their Y forms) as the four
// floats of xa.
#define T80_REDUCE4(a, b, c, d, ya, yb, yc, yd, xa) \
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
#define T80_ROWS \
	MOVQ w+0(FP), SI ; \
	MOVQ wStride+8(FP), AX ; \
	LEAQ (SI)(AX*1), BX ; \
	LEAQ (SI)(AX*2), R8 ; \
	LEAQ (BX)(AX*2), R9

// R13: the stack frame rounded up to 64 bytes.
#define T80_ALIGN \
	LEAQ 63(SP), R13 ; \
	ANDQ $~63, R13

#define T80_NEXT_ROWS \
	ADDQ $272, SI ; \
	ADDQ $272, BX ; \
	ADDQ $272, R8 ; \
	ADDQ $272, R9

// Pair p of a 4×1 tile.
#define T80_PAIR41(p) \
	VMOVDQU64 t80PIdx<>+(64*p)(SB), Z27 ; \
	T80_XPAIR(DI, 68*p, Z16, Y16, Z23) ; \
	T80_WPAIR(SI, 68*p) ; \
	T80_RC(Z16, Z23, 0, Z0) ; \
	T80_WPAIR(BX, 68*p) ; \
	T80_RC(Z16, Z23, 64, Z1) ; \
	T80_WPAIR(R8, 68*p) ; \
	T80_RC(Z16, Z23, 128, Z2) ; \
	T80_WPAIR(R9, 68*p) ; \
	T80_RC(Z16, Z23, 192, Z3)

// Prefetch of the rows of a later tile (reg bytes on) at the current
// offset: the hardware prefetchers, seeing four short streams at a time,
// fetch them late. 272 bytes a row per iteration.
#define TPF(row, reg) \
	PREFETCHT0 0(row)(reg*1) ; \
	PREFETCHT0 64(row)(reg*1) ; \
	PREFETCHT0 128(row)(reg*1) ; \
	PREFETCHT0 192(row)(reg*1) ; \
	PREFETCHT0 256(row)(reg*1)

// func tileQ8_0VNNI4x1(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
// Stack: the scale products of row r at 64r from R13.
TEXT ·tileQ8_0VNNI4x1(SB), NOSPLIT, $320-56
	T80_ROWS
	MOVQ wStride+8(FP), R10
	SHLQ $3, R10
	T80_ALIGN
	MOVQ x+16(FP), DI
	MOVQ nb+32(FP), CX
	T80_CONST
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

loop:
	TPF(SI, R10)
	TPF(BX, R10)
	TPF(R8, R10)
	TPF(R9, R10)
	VMOVDQU64 t80XIdx<>(SB), Z22
	T80_DX(DI, Y16)
	T80_DW(SI)
	T80_PROD(Y16, 0)
	T80_DW(BX)
	T80_PROD(Y16, 64)
	T80_DW(R8)
	T80_PROD(Y16, 128)
	T80_DW(R9)
	T80_PROD(Y16, 192)
	T80_PAIR41(0)
	T80_PAIR41(1)
	T80_PAIR41(2)
	T80_PAIR41(3)
	T80_NEXT_ROWS
	ADDQ $272, DI
	SUBQ $8, CX
	JNZ  loop

	T80_REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0)
	MOVQ    out+40(FP), R12
	VMOVUPS X0, (R12)
	VZEROUPPER
	RET

// Pair p of a 4×4 tile.
#define T80_PAIR44(p) \
	VMOVDQU64 t80PIdx<>+(64*p)(SB), Z27 ; \
	T80_XPAIR(DI, 68*p, Z16, Y16, Z23) ; \
	T80_XPAIR(DX, 68*p, Z17, Y17, Z24) ; \
	T80_XPAIR(R10, 68*p, Z18, Y18, Z25) ; \
	T80_XPAIR(R11, 68*p, Z19, Y19, Z26) ; \
	T80_WPAIR(SI, 68*p) ; \
	T80_RC(Z16, Z23, 0, Z0) ; \
	T80_RC(Z17, Z24, 64, Z1) ; \
	T80_RC(Z18, Z25, 128, Z2) ; \
	T80_RC(Z19, Z26, 192, Z3) ; \
	T80_WPAIR(BX, 68*p) ; \
	T80_RC(Z16, Z23, 256, Z4) ; \
	T80_RC(Z17, Z24, 320, Z5) ; \
	T80_RC(Z18, Z25, 384, Z6) ; \
	T80_RC(Z19, Z26, 448, Z7) ; \
	T80_WPAIR(R8, 68*p) ; \
	T80_RC(Z16, Z23, 512, Z8) ; \
	T80_RC(Z17, Z24, 576, Z9) ; \
	T80_RC(Z18, Z25, 640, Z10) ; \
	T80_RC(Z19, Z26, 704, Z11) ; \
	T80_WPAIR(R9, 68*p) ; \
	T80_RC(Z16, Z23, 768, Z12) ; \
	T80_RC(Z17, Z24, 832, Z13) ; \
	T80_RC(Z18, Z25, 896, Z14) ; \
	T80_RC(Z19, Z26, 960, Z15)

// func tileQ8_0VNNI4x4(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
// Stack: the scale products of row r and column c at 256r+64c from R13.
TEXT ·tileQ8_0VNNI4x4(SB), 0, $1088-56
	T80_ROWS
	MOVQ wStride+8(FP), R12
	SHLQ $2, R12
	T80_ALIGN
	MOVQ x+16(FP), DI
	MOVQ xStride+24(FP), AX
	LEAQ (DI)(AX*1), DX
	LEAQ (DI)(AX*2), R10
	LEAQ (DX)(AX*2), R11
	MOVQ nb+32(FP), CX
	T80_CONST
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
	VMOVDQU64 t80XIdx<>(SB), Z22
	T80_DX(DI, Y16)
	T80_DX(DX, Y17)
	T80_DX(R10, Y18)
	T80_DX(R11, Y19)
	T80_DW(SI)
	T80_PROD(Y16, 0)
	T80_PROD(Y17, 64)
	T80_PROD(Y18, 128)
	T80_PROD(Y19, 192)
	T80_DW(BX)
	T80_PROD(Y16, 256)
	T80_PROD(Y17, 320)
	T80_PROD(Y18, 384)
	T80_PROD(Y19, 448)
	T80_DW(R8)
	T80_PROD(Y16, 512)
	T80_PROD(Y17, 576)
	T80_PROD(Y18, 640)
	T80_PROD(Y19, 704)
	T80_DW(R9)
	T80_PROD(Y16, 768)
	T80_PROD(Y17, 832)
	T80_PROD(Y18, 896)
	T80_PROD(Y19, 960)
	T80_PAIR44(0)
	T80_PAIR44(1)
	T80_PAIR44(2)
	T80_PAIR44(3)
	T80_NEXT_ROWS
	ADDQ $272, DI
	ADDQ $272, DX
	ADDQ $272, R10
	ADDQ $272, R11
	SUBQ $8, CX
	JNZ  loop

	MOVQ out+40(FP), R12
	MOVQ outStride+48(FP), R13
	SHLQ $2, R13
	T80_REDUCE4(Z0, Z4, Z8, Z12, Y0, Y4, Y8, Y12, X0)
	VMOVUPS X0, (R12)
	T80_REDUCE4(Z1, Z5, Z9, Z13, Y1, Y5, Y9, Y13, X1)
	VMOVUPS X1, (R12)(R13*1)
	T80_REDUCE4(Z2, Z6, Z10, Z14, Y2, Y6, Y10, Y14, X2)
	VMOVUPS X2, (R12)(R13*2)
	T80_REDUCE4(Z3, Z7, Z11, Z15, Y3, Y7, Y11, Y15, X3)
	LEAQ    (R13)(R13*2), AX
	VMOVUPS X3, (R12)(AX*1)
	VZEROUPPER
	RET

// AVX2: one block per 256-bit register, four rows against one column.
// VPMADDUBSW multiplies unsigned by signed bytes, so the weights go in as
// |w| and the activations take the weights' signs; pairs stay below 2^15
// because |w| <= 128 and |y| <= 127. Register use: Y0-Y3 accumulators, Y4
// the activation block, Y6-Y10 scratch, Y11 gather indexes, Y13 words 1.
// The scale products d_w·d_x of the eight blocks of row r go to the stack
// at 32r.

// Dword offsets of the scales of eight 34-byte blocks.
DATA t80aOff<>+0(SB)/4, $0
DATA t80aOff<>+4(SB)/4, $34
DATA t80aOff<>+8(SB)/4, $68
DATA t80aOff<>+12(SB)/4, $102
DATA t80aOff<>+16(SB)/4, $136
DATA t80aOff<>+20(SB)/4, $170
DATA t80aOff<>+24(SB)/4, $204
DATA t80aOff<>+28(SB)/4, $238
GLOBL t80aOff<>(SB), RODATA|NOPTR, $32

// VPSHUFB mask packing the low words of four dwords into the low 8 bytes
// of each 128-bit lane.
DATA t80aPack<>+0(SB)/8, $0x0D0C090805040100
DATA t80aPack<>+8(SB)/8, $0x8080808080808080
DATA t80aPack<>+16(SB)/8, $0x0D0C090805040100
DATA t80aPack<>+24(SB)/8, $0x8080808080808080
GLOBL t80aPack<>(SB), RODATA|NOPTR, $32

// The fp16 scales of the eight blocks at base as float32 in dst; ydst/xdst
// are its Y and X forms. Y10 is the gather mask.
#define T80A_SCALES(base, ydst, xdst) \
	VPCMPEQD   Y10, Y10, Y10 ; \
	VPXOR      ydst, ydst, ydst ; \
	VPGATHERDD Y10, (base)(Y11*1), ydst ; \
	VPSHUFB    t80aPack<>(SB), ydst, ydst ; \
	VPERMQ     $0x08, ydst, ydst ; \
	VCVTPH2PS  xdst, ydst

// Row scales times the column scales in Y9, to the stack at slot.
#define T80A_PROD(row, slot) \
	T80A_SCALES(row, Y8, X8) ; \
	VMULPS  Y9, Y8, Y8 ; \
	VMOVUPS Y8, slot(SP)

// Block b of row against the activation block in Y4.
#define T80A_RB(row, b, slot, acc) \
	VMOVDQU      (34*b+2)(row), Y6 ; \
	VPSIGNB      Y6, Y6, Y7 ; \
	VPSIGNB      Y6, Y4, Y6 ; \
	VPMADDUBSW   Y6, Y7, Y6 ; \
	VPMADDWD     Y13, Y6, Y6 ; \
	VCVTDQ2PS    Y6, Y6 ; \
	VBROADCASTSS (slot+4*b)(SP), Y7 ; \
	VFMADD231PS  Y7, Y6, acc

#define T80A_BLOCK(b) \
	VMOVDQU (34*b+2)(DI), Y4 ; \
	T80A_RB(SI, b, 0, Y0) ; \
	T80A_RB(BX, b, 32, Y1) ; \
	T80A_RB(R8, b, 64, Y2) ; \
	T80A_RB(R9, b, 96, Y3)

// func tileQ8_0AVX24x1(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
TEXT ·tileQ8_0AVX24x1(SB), NOSPLIT, $128-56
	T80_ROWS
	MOVQ wStride+8(FP), R10
	SHLQ $3, R10
	MOVQ         x+16(FP), DI
	MOVQ         nb+32(FP), CX
	MOVL         $0x00010001, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	VMOVDQU      t80aOff<>(SB), Y11
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3

loop:
	TPF(SI, R10)
	TPF(BX, R10)
	TPF(R8, R10)
	TPF(R9, R10)
	T80A_SCALES(DI, Y9, X9)
	T80A_PROD(SI, 0)
	T80A_PROD(BX, 32)
	T80A_PROD(R8, 64)
	T80A_PROD(R9, 96)
	T80A_BLOCK(0)
	T80A_BLOCK(1)
	T80A_BLOCK(2)
	T80A_BLOCK(3)
	T80A_BLOCK(4)
	T80A_BLOCK(5)
	T80A_BLOCK(6)
	T80A_BLOCK(7)
	T80_NEXT_ROWS
	ADDQ $272, DI
	SUBQ $8, CX
	JNZ  loop

	VHADDPS      Y1, Y0, Y0
	VHADDPS      Y3, Y2, Y2
	VHADDPS      Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	MOVQ         out+40(FP), R12
	VMOVUPS      X0, (R12)
	VZEROUPPER
	RET
