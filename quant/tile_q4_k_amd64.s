//go:build amd64 && !purego

#include "textflag.h"

// Tile kernels for Q4_K weights and Q8_K activations with AVX-512 VNNI.
//
// Weight super-block (144 bytes): fp16 d at 0, fp16 dmin at 2, scales[12]
// at 4, qs[128] at 16. Elements 64j..64j+31 are the low nibbles of
// qs[32j:32j+32] with scale and min 2j, elements 64j+32..64j+63 the high
// nibbles with 2j+1. Activation super-block (292 bytes): float32 d at 0,
// qs[256] at 4, int16 bsums[16] at 260.
//
// Per super-block, the 6-bit scales and mins of the four rows are unpacked
// together, one row per 128-bit lane. Each row's nibbles are unpacked once
// into four registers of 64 bytes (chunk j: low nibbles in the lower 256
// bits, facing y[64j:64j+32], high ones in the upper, facing
// y[64j+32:64j+64]), its scales spread to words, and both reused for every
// column: VPMADDUBSW then VPDPWSSD with the sub-block scales give
// Σ sc·q·y in 16 dwords, VPMADDWD of the mins with the block sums Σ m·y in
// 8. The float factors d·y.d and dmin·y.d of every (row, column) go to the
// stack and are broadcast from there.
//
// Register use: Z0-Z15 float accumulators in the 4×4 kernel (row r, column
// c in Z(4r+c)), Z16-Z19 a row's nibbles, Z20-Z23 its scales as words, Y24
// its mins as words, Z25-Z27 scratch, Z28 the four rows' scales and mins.
// The 4×1 kernel keeps its constants and the column in Z4-Z14. Rows are at
// SI, BX, R8, R9; columns at DI, DX, R10, R11.


// VPSHUFB indexes that gather, in every 128-bit lane (one row), the
// scale bytes 0-3, 8-11 and the min bytes 4-7, 8-11 (P), and the bytes
// whose top bits complete scales and mins 4-7 (Q).
DATA t4kIdxP<>+0(SB)/8, $0x0B0A090803020100
DATA t4kIdxP<>+8(SB)/8, $0x0B0A090807060504
DATA t4kIdxP<>+16(SB)/8, $0x0B0A090803020100
DATA t4kIdxP<>+24(SB)/8, $0x0B0A090807060504
DATA t4kIdxP<>+32(SB)/8, $0x0B0A090803020100
DATA t4kIdxP<>+40(SB)/8, $0x0B0A090807060504
DATA t4kIdxP<>+48(SB)/8, $0x0B0A090803020100
DATA t4kIdxP<>+56(SB)/8, $0x0B0A090807060504
GLOBL t4kIdxP<>(SB), RODATA|NOPTR, $64
DATA t4kIdxQ<>+0(SB)/8, $0x0302010080808080
DATA t4kIdxQ<>+8(SB)/8, $0x0706050480808080
DATA t4kIdxQ<>+16(SB)/8, $0x0302010080808080
DATA t4kIdxQ<>+24(SB)/8, $0x0706050480808080
DATA t4kIdxQ<>+32(SB)/8, $0x0302010080808080
DATA t4kIdxQ<>+40(SB)/8, $0x0706050480808080
DATA t4kIdxQ<>+48(SB)/8, $0x0302010080808080
DATA t4kIdxQ<>+56(SB)/8, $0x0706050480808080
GLOBL t4kIdxQ<>(SB), RODATA|NOPTR, $64

// Word shift counts: 4 for the mins' nibbles in bytes 12-15 of a lane.
DATA t4kCnt<>+0(SB)/8, $0x0000000000000000
DATA t4kCnt<>+8(SB)/8, $0x0004000400000000
DATA t4kCnt<>+16(SB)/8, $0x0000000000000000
DATA t4kCnt<>+24(SB)/8, $0x0004000400000000
DATA t4kCnt<>+32(SB)/8, $0x0000000000000000
DATA t4kCnt<>+40(SB)/8, $0x0004000400000000
DATA t4kCnt<>+48(SB)/8, $0x0000000000000000
DATA t4kCnt<>+56(SB)/8, $0x0004000400000000
GLOBL t4kCnt<>(SB), RODATA|NOPTR, $64

// The low six bits of scales and mins 0-3, four of 4-7.
DATA t4kMaskL<>+0(SB)/8, $0x0F0F0F0F3F3F3F3F
DATA t4kMaskL<>+8(SB)/8, $0x0F0F0F0F3F3F3F3F
DATA t4kMaskL<>+16(SB)/8, $0x0F0F0F0F3F3F3F3F
DATA t4kMaskL<>+24(SB)/8, $0x0F0F0F0F3F3F3F3F
DATA t4kMaskL<>+32(SB)/8, $0x0F0F0F0F3F3F3F3F
DATA t4kMaskL<>+40(SB)/8, $0x0F0F0F0F3F3F3F3F
DATA t4kMaskL<>+48(SB)/8, $0x0F0F0F0F3F3F3F3F
DATA t4kMaskL<>+56(SB)/8, $0x0F0F0F0F3F3F3F3F
GLOBL t4kMaskL<>(SB), RODATA|NOPTR, $64

// VPSHUFB masks from a row's unpacked scales to words: mask j (64 bytes)
// repeats scale 2j in 128-bit lanes 0-1 and scale 2j+1 in lanes 2-3.
DATA t4kSc<>+0(SB)/8, $0x8000800080008000
DATA t4kSc<>+8(SB)/8, $0x8000800080008000
DATA t4kSc<>+16(SB)/8, $0x8000800080008000
DATA t4kSc<>+24(SB)/8, $0x8000800080008000
DATA t4kSc<>+32(SB)/8, $0x8001800180018001
DATA t4kSc<>+40(SB)/8, $0x8001800180018001
DATA t4kSc<>+48(SB)/8, $0x8001800180018001
DATA t4kSc<>+56(SB)/8, $0x8001800180018001
DATA t4kSc<>+64(SB)/8, $0x8002800280028002
DATA t4kSc<>+72(SB)/8, $0x8002800280028002
DATA t4kSc<>+80(SB)/8, $0x8002800280028002
DATA t4kSc<>+88(SB)/8, $0x8002800280028002
DATA t4kSc<>+96(SB)/8, $0x8003800380038003
DATA t4kSc<>+104(SB)/8, $0x8003800380038003
DATA t4kSc<>+112(SB)/8, $0x8003800380038003
DATA t4kSc<>+120(SB)/8, $0x8003800380038003
DATA t4kSc<>+128(SB)/8, $0x8004800480048004
DATA t4kSc<>+136(SB)/8, $0x8004800480048004
DATA t4kSc<>+144(SB)/8, $0x8004800480048004
DATA t4kSc<>+152(SB)/8, $0x8004800480048004
DATA t4kSc<>+160(SB)/8, $0x8005800580058005
DATA t4kSc<>+168(SB)/8, $0x8005800580058005
DATA t4kSc<>+176(SB)/8, $0x8005800580058005
DATA t4kSc<>+184(SB)/8, $0x8005800580058005
DATA t4kSc<>+192(SB)/8, $0x8006800680068006
DATA t4kSc<>+200(SB)/8, $0x8006800680068006
DATA t4kSc<>+208(SB)/8, $0x8006800680068006
DATA t4kSc<>+216(SB)/8, $0x8006800680068006
DATA t4kSc<>+224(SB)/8, $0x8007800780078007
DATA t4kSc<>+232(SB)/8, $0x8007800780078007
DATA t4kSc<>+240(SB)/8, $0x8007800780078007
DATA t4kSc<>+248(SB)/8, $0x8007800780078007
GLOBL t4kSc<>(SB), RODATA|NOPTR, $256

// VPSHUFB mask from a row's unpacked mins to words, each twice, facing the
// sixteen block sums.
DATA t4kMn<>+0(SB)/8, $0x8009800980088008
DATA t4kMn<>+8(SB)/8, $0x800B800B800A800A
DATA t4kMn<>+16(SB)/8, $0x800D800D800C800C
DATA t4kMn<>+24(SB)/8, $0x800F800F800E800E
GLOBL t4kMn<>(SB), RODATA|NOPTR, $32

// Qword shift counts: 0 in the lower 256 bits, 4 in the upper.
DATA t4kShift<>+0(SB)/8, $0x0000000000000000
DATA t4kShift<>+8(SB)/8, $0x0000000000000000
DATA t4kShift<>+16(SB)/8, $0x0000000000000000
DATA t4kShift<>+24(SB)/8, $0x0000000000000000
DATA t4kShift<>+32(SB)/8, $0x0000000000000004
DATA t4kShift<>+40(SB)/8, $0x0000000000000004
DATA t4kShift<>+48(SB)/8, $0x0000000000000004
DATA t4kShift<>+56(SB)/8, $0x0000000000000004
GLOBL t4kShift<>(SB), RODATA|NOPTR, $64

DATA t4kNib<>+0(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA t4kNib<>+8(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA t4kNib<>+16(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA t4kNib<>+24(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA t4kNib<>+32(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA t4kNib<>+40(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA t4kNib<>+48(SB)/8, $0x0F0F0F0F0F0F0F0F
DATA t4kNib<>+56(SB)/8, $0x0F0F0F0F0F0F0F0F
GLOBL t4kNib<>(SB), RODATA|NOPTR, $64
DATA t4k30<>+0(SB)/8, $0x3030303030303030
DATA t4k30<>+8(SB)/8, $0x3030303030303030
DATA t4k30<>+16(SB)/8, $0x3030303030303030
DATA t4k30<>+24(SB)/8, $0x3030303030303030
DATA t4k30<>+32(SB)/8, $0x3030303030303030
DATA t4k30<>+40(SB)/8, $0x3030303030303030
DATA t4k30<>+48(SB)/8, $0x3030303030303030
DATA t4k30<>+56(SB)/8, $0x3030303030303030
GLOBL t4k30<>(SB), RODATA|NOPTR, $64

// The scales and mins of the four rows' super-blocks into Z28, row r in
// lane r: bytes 0-7 the scales, 8-15 the mins. For j < 4 both are the low
// 6 bits of bytes j and j+4 of the packed twelve; for j >= 4 the low 4 bits
// come from the nibbles of byte j+4 and the top 2 from bits 6-7 of bytes
// j-4 and j. VPSRLW $2 moves bits 6-7 of every byte to 4-5.
#define T4K_SCALES4 \
	VMOVDQU64    4(SI), X28 ; \
	VINSERTI32X4 $1, 4(BX), Z28, Z28 ; \
	VINSERTI32X4 $2, 4(R8), Z28, Z28 ; \
	VINSERTI32X4 $3, 4(R9), Z28, Z28 ; \
	VPSHUFB      t4kIdxQ<>(SB), Z28, Z26 ; \
	VPSHUFB      t4kIdxP<>(SB), Z28, Z28 ; \
	VPSRLVW      t4kCnt<>(SB), Z28, Z28 ; \
	VPANDD       t4kMaskL<>(SB), Z28, Z28 ; \
	VPSRLW       $2, Z26, Z26 ; \
	VPTERNLOGD   $0xF8, t4k30<>(SB), Z26, Z28

// Everything of row r (at row) the columns share: its scales as words in
// Z20-Z23 (chunk j's in Z(20+j)), its mins as words, each twice, in Y24
// (facing the sixteen block sums), and its nibbles in Z16-Z19. s0-s3, mn,
// shift and nib are the tables t4kSc, t4kMn, t4kShift and t4kNib, in
// memory or registers.
#define T4K_ROW(row, r, s0, s1, s2, s3, mn, shift, nib) \
	VSHUFI32X4      $(0x55*r), Z28, Z28, Z27 ; \
	VPSHUFB         s0, Z27, Z20 ; \
	VPSHUFB         s1, Z27, Z21 ; \
	VPSHUFB         s2, Z27, Z22 ; \
	VPSHUFB         s3, Z27, Z23 ; \
	VPSHUFB         mn, Y27, Y24 ; \
	VBROADCASTI64X4 16(row), Z16 ; \
	VPSRLVQ         shift, Z16, Z16 ; \
	VPANDD          nib, Z16, Z16 ; \
	VBROADCASTI64X4 48(row), Z17 ; \
	VPSRLVQ         shift, Z17, Z17 ; \
	VPANDD          nib, Z17, Z17 ; \
	VBROADCASTI64X4 80(row), Z18 ; \
	VPSRLVQ         shift, Z18, Z18 ; \
	VPANDD          nib, Z18, Z18 ; \
	VBROADCASTI64X4 112(row), Z19 ; \
	VPSRLVQ         shift, Z19, Z19 ; \
	VPANDD          nib, Z19, Z19

#define T4K_ROW4(row, r) \
	T4K_ROW(row, r, t4kSc<>+0(SB), t4kSc<>+64(SB), t4kSc<>+128(SB), t4kSc<>+192(SB), t4kMn<>(SB), t4kShift<>(SB), t4kNib<>(SB))

#define T4K_ROW1(row, r) \
	T4K_ROW(row, r, Z4, Z5, Z6, Z7, Y13, Z14, Z15)

// acc += d·y.d·Σ sc·q·y - dmin·y.d·Σ m·y for the row prepared by T4K_ROW
// and a column whose quant chunks are q0-q3 and block sums bs (memory or
// registers); fac is the stack offset of d·y.d, followed by dmin·y.d. K2:
// the low eight lanes, where the mins' sums are.
#define T4K_RC(q0, q1, q2, q3, bs, fac, acc) \
	VPMADDUBSW        q0, Z16, Z25 ; \
	VPMADDWD          Z20, Z25, Z26 ; \
	VPMADDUBSW        q1, Z17, Z25 ; \
	VPDPWSSD          Z21, Z25, Z26 ; \
	VPMADDUBSW        q2, Z18, Z25 ; \
	VPDPWSSD          Z22, Z25, Z26 ; \
	VPMADDUBSW        q3, Z19, Z25 ; \
	VPDPWSSD          Z23, Z25, Z26 ; \
	VPMADDWD          bs, Y24, Y27 ; \
	VCVTDQ2PS         Z26, Z26 ; \
	VCVTDQ2PS         Y27, Y27 ; \
	VFMADD231PS.BCST  fac(SP), Z26, acc ; \
	VFNMADD231PS.BCST (fac+4)(SP), Z27, K2, acc

#define T4K_RC4(col, fac, acc) \
	T4K_RC(4(col), 68(col), 132(col), 196(col), 260(col), fac, acc)

#define T4K_RC1(fac, acc) \
	T4K_RC(Z8, Z9, Z10, Z11, Y12, fac, acc)

// The fp16 d and dmin of the four rows as float32 in Y26: d0, dmin0, d1,
// dmin1, ...
#define T4K_D4 \
	VMOVD     (SI), X26 ; \
	VPINSRD   $1, (BX), X26, X26 ; \
	VPINSRD   $2, (R8), X26, X26 ; \
	VPINSRD   $3, (R9), X26, X26 ; \
	VCVTPH2PS X26, Y26

// Y26 times the activation scale of col, to the stack at 32c: d_r·y.d at
// 32c+8r, dmin_r·y.d at 32c+8r+4.
#define T4K_FAC(col, c) \
	VBROADCASTSS (col), Y27 ; \
	VMULPS       Y27, Y26, Y25 ; \
	VMOVUPS      Y25, (32*c)(SP)

// The sums of four accumulators (Z0-Z15, with their Y forms) as the four
// floats of xa.
#define T4K_REDUCE4(a, b, c, d, ya, yb, yc, yd, xa) \
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

// Row pointers SI, BX, R8, R9 from w and wStride, and the end of row 0 at
// 128(SP).
#define T4K_ROWS \
	MOVQ  w+0(FP), SI ; \
	MOVQ  wStride+8(FP), AX ; \
	LEAQ  (SI)(AX*1), BX ; \
	LEAQ  (SI)(AX*2), R8 ; \
	LEAQ  (BX)(AX*2), R9 ; \
	MOVQ  nb+32(FP), AX ; \
	IMULQ $144, AX ; \
	ADDQ  SI, AX ; \
	MOVQ  AX, 128(SP) ; \
	MOVL  $0xFF, AX ; \
	KMOVW AX, K2

#define T4K_NEXT_ROWS \
	ADDQ $144, SI ; \
	ADDQ $144, BX ; \
	ADDQ $144, R8 ; \
	ADDQ $144, R9

#define ZERO(z) VPXORD z, z, z

// Prefetch of the rows of a later tile (reg bytes on) at the current
// offset: the hardware prefetchers, seeing four short streams at a time,
// fetch them late. 144 bytes a row per iteration.
#define TPF(row, reg) \
	PREFETCHT0 0(row)(reg*1) ; \
	PREFETCHT0 64(row)(reg*1) ; \
	PREFETCHT0 128(row)(reg*1)

// func tileQ4_KVNNI4x1(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
TEXT ·tileQ4_KVNNI4x1(SB), NOSPLIT, $136-56
	T4K_ROWS
	MOVQ wStride+8(FP), R10
	SHLQ $3, R10
	MOVQ x+16(FP), DI
	VMOVDQU64 t4kSc<>+0(SB), Z4
	VMOVDQU64 t4kSc<>+64(SB), Z5
	VMOVDQU64 t4kSc<>+128(SB), Z6
	VMOVDQU64 t4kSc<>+192(SB), Z7
	VMOVDQU64 t4kMn<>(SB), Y13
	VMOVDQU64 t4kShift<>(SB), Z14
	VMOVDQU64 t4kNib<>(SB), Z15
	ZERO(Z0)
	ZERO(Z1)
	ZERO(Z2)
	ZERO(Z3)

loop:
	TPF(SI, R10)
	TPF(BX, R10)
	TPF(R8, R10)
	TPF(R9, R10)
	T4K_D4
	T4K_FAC(DI, 0)
	T4K_SCALES4
	VMOVDQU64 4(DI), Z8
	VMOVDQU64 68(DI), Z9
	VMOVDQU64 132(DI), Z10
	VMOVDQU64 196(DI), Z11
	VMOVDQU64 260(DI), Y12
	T4K_ROW1(SI, 0)
	T4K_RC1(0, Z0)
	T4K_ROW1(BX, 1)
	T4K_RC1(8, Z1)
	T4K_ROW1(R8, 2)
	T4K_RC1(16, Z2)
	T4K_ROW1(R9, 3)
	T4K_RC1(24, Z3)
	T4K_NEXT_ROWS
	ADDQ $292, DI
	CMPQ SI, 128(SP)
	JNE  loop

	T4K_REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0)
	MOVQ    out+40(FP), R12
	VMOVUPS X0, (R12)
	VZEROUPPER
	RET

// func tileQ4_KVNNI4x4(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
TEXT ·tileQ4_KVNNI4x4(SB), NOSPLIT, $136-56
	T4K_ROWS
	MOVQ wStride+8(FP), R12
	SHLQ $2, R12
	MOVQ x+16(FP), DI
	MOVQ xStride+24(FP), AX
	LEAQ (DI)(AX*1), DX
	LEAQ (DI)(AX*2), R10
	LEAQ (DX)(AX*2), R11

	ZERO(Z0)
	ZERO(Z1)
	ZERO(Z2)
	ZERO(Z3)
	ZERO(Z4)
	ZERO(Z5)
	ZERO(Z6)
	ZERO(Z7)
	ZERO(Z8)
	ZERO(Z9)
	ZERO(Z10)
	ZERO(Z11)
	ZERO(Z12)
	ZERO(Z13)
	ZERO(Z14)
	ZERO(Z15)

loop:
	TPF(SI, R12)
	TPF(BX, R12)
	TPF(R8, R12)
	TPF(R9, R12)
	T4K_D4
	T4K_FAC(DI, 0)
	T4K_FAC(DX, 1)
	T4K_FAC(R10, 2)
	T4K_FAC(R11, 3)
	T4K_SCALES4
	T4K_ROW4(SI, 0)
	T4K_RC4(DI, 0, Z0)
	T4K_RC4(DX, 32, Z1)
	T4K_RC4(R10, 64, Z2)
	T4K_RC4(R11, 96, Z3)
	T4K_ROW4(BX, 1)
	T4K_RC4(DI, 8, Z4)
	T4K_RC4(DX, 40, Z5)
	T4K_RC4(R10, 72, Z6)
	T4K_RC4(R11, 104, Z7)
	T4K_ROW4(R8, 2)
	T4K_RC4(DI, 16, Z8)
	T4K_RC4(DX, 48, Z9)
	T4K_RC4(R10, 80, Z10)
	T4K_RC4(R11, 112, Z11)
	T4K_ROW4(R9, 3)
	T4K_RC4(DI, 24, Z12)
	T4K_RC4(DX, 56, Z13)
	T4K_RC4(R10, 88, Z14)
	T4K_RC4(R11, 120, Z15)
	T4K_NEXT_ROWS
	ADDQ $292, DI
	ADDQ $292, DX
	ADDQ $292, R10
	ADDQ $292, R11
	CMPQ SI, 128(SP)
	JNE  loop

	MOVQ out+40(FP), R12
	MOVQ outStride+48(FP), R13
	SHLQ $2, R13
	T4K_REDUCE4(Z0, Z4, Z8, Z12, Y0, Y4, Y8, Y12, X0)
	VMOVUPS X0, (R12)
	T4K_REDUCE4(Z1, Z5, Z9, Z13, Y1, Y5, Y9, Y13, X1)
	VMOVUPS X1, (R12)(R13*1)
	T4K_REDUCE4(Z2, Z6, Z10, Z14, Y2, Y6, Y10, Y14, X2)
	VMOVUPS X2, (R12)(R13*2)
	T4K_REDUCE4(Z3, Z7, Z11, Z15, Y3, Y7, Y11, Y15, X3)
	LEAQ    (R13)(R13*2), AX
	VMOVUPS X3, (R12)(AX*1)
	VZEROUPPER
	RET

// AVX2: four rows against one column, each row's super-block as in the
// single-row kernel. Register use: Y0-Y3 accumulators, Y8 a row's scales as
// words in both lanes, Y9 its mins' sums, Y10/Y11 integer sums, Y12-Y14
// scratch, Y15 bytes 0x0F.

// VPSHUFB masks: mask k (32 bytes) repeats word k in both lanes.
DATA t4kaShuf<>+0(SB)/8, $0x0100010001000100
DATA t4kaShuf<>+8(SB)/8, $0x0100010001000100
DATA t4kaShuf<>+16(SB)/8, $0x0100010001000100
DATA t4kaShuf<>+24(SB)/8, $0x0100010001000100
DATA t4kaShuf<>+32(SB)/8, $0x0302030203020302
DATA t4kaShuf<>+40(SB)/8, $0x0302030203020302
DATA t4kaShuf<>+48(SB)/8, $0x0302030203020302
DATA t4kaShuf<>+56(SB)/8, $0x0302030203020302
DATA t4kaShuf<>+64(SB)/8, $0x0504050405040504
DATA t4kaShuf<>+72(SB)/8, $0x0504050405040504
DATA t4kaShuf<>+80(SB)/8, $0x0504050405040504
DATA t4kaShuf<>+88(SB)/8, $0x0504050405040504
DATA t4kaShuf<>+96(SB)/8, $0x0706070607060706
DATA t4kaShuf<>+104(SB)/8, $0x0706070607060706
DATA t4kaShuf<>+112(SB)/8, $0x0706070607060706
DATA t4kaShuf<>+120(SB)/8, $0x0706070607060706
DATA t4kaShuf<>+128(SB)/8, $0x0908090809080908
DATA t4kaShuf<>+136(SB)/8, $0x0908090809080908
DATA t4kaShuf<>+144(SB)/8, $0x0908090809080908
DATA t4kaShuf<>+152(SB)/8, $0x0908090809080908
DATA t4kaShuf<>+160(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA t4kaShuf<>+168(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA t4kaShuf<>+176(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA t4kaShuf<>+184(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA t4kaShuf<>+192(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA t4kaShuf<>+200(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA t4kaShuf<>+208(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA t4kaShuf<>+216(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA t4kaShuf<>+224(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA t4kaShuf<>+232(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA t4kaShuf<>+240(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA t4kaShuf<>+248(SB)/8, $0x0F0E0F0E0F0E0F0E
GLOBL t4kaShuf<>(SB), RODATA|NOPTR, $256

DATA t4kM3F<>+0(SB)/8, $0x3F3F3F3F3F3F3F3F
GLOBL t4kM3F<>(SB), RODATA|NOPTR, $8
DATA t4kM03<>+0(SB)/8, $0x0303030303030303
GLOBL t4kM03<>(SB), RODATA|NOPTR, $8
DATA t4kM0F<>+0(SB)/8, $0x0F0F0F0F0F0F0F0F
GLOBL t4kM0F<>(SB), RODATA|NOPTR, $8

// Unpacks the 6-bit scales and mins of the super-block at row into X12:
// bytes 0-7 the scales, 8-15 the mins, both halves built side by side in
// 64-bit registers (see T4K_SCALES4 for the layout).
#define T4KA_SCALES(row) \
	MOVQ    4(row), AX ; \
	MOVL    12(row), DX ; \
	MOVQ    AX, R10 ; \
	SHRQ    $6, R10 ; \
	ANDQ    t4kM03<>(SB), R10 ; \
	SHLQ    $4, R10 ; \
	MOVQ    DX, R11 ; \
	SHLQ    $28, R11 ; \
	ORQ     R11, DX ; \
	ANDQ    t4kM0F<>(SB), DX ; \
	ORQ     R10, DX ; \
	ANDQ    t4kM3F<>(SB), AX ; \
	VMOVQ   AX, X12 ; \
	VPINSRQ $1, DX, X12, X12 ; \
	VPSHUFD $0xD8, X12, X12

// 64 elements (chunk j) of row: Y8 holds the scales as words.
#define T4KA_CHUNK(row, j) \
	VMOVDQU    (16+32*j)(row), Y12 ; \
	VPSRLW     $4, Y12, Y13 ; \
	VPAND      Y15, Y12, Y12 ; \
	VPAND      Y15, Y13, Y13 ; \
	VPMADDUBSW (4+64*j)(DI), Y12, Y12 ; \
	VPMADDUBSW (36+64*j)(DI), Y13, Y13 ; \
	VPSHUFB    t4kaShuf<>+(64*j)(SB), Y8, Y14 ; \
	VPMADDWD   Y14, Y12, Y12 ; \
	VPSHUFB    t4kaShuf<>+(64*j+32)(SB), Y8, Y14 ; \
	VPMADDWD   Y14, Y13, Y13 ; \
	VPADDD     Y12, Y10, Y10 ; \
	VPADDD     Y13, Y11, Y11

// acc += d·y.d·Σ sc·q·y - dmin·y.d·Σ m·y over the super-block of row.
#define T4KA_ROW(row, acc) \
	T4KA_SCALES(row) ; \
	VPMOVZXBW    X12, X8 ; \
	VINSERTI128  $1, X8, Y8, Y8 ; \
	VPSRLDQ      $8, X12, X9 ; \
	VPUNPCKLBW   X9, X9, X9 ; \
	VPMOVZXBW    X9, Y9 ; \
	VPMADDWD     260(DI), Y9, Y9 ; \
	VPXOR        Y10, Y10, Y10 ; \
	VPXOR        Y11, Y11, Y11 ; \
	T4KA_CHUNK(row, 0) ; \
	T4KA_CHUNK(row, 1) ; \
	T4KA_CHUNK(row, 2) ; \
	T4KA_CHUNK(row, 3) ; \
	VPADDD       Y11, Y10, Y10 ; \
	VCVTDQ2PS    Y10, Y10 ; \
	VCVTDQ2PS    Y9, Y9 ; \
	VCVTPH2PS    (row), X12 ; \
	VBROADCASTSS (DI), X13 ; \
	VMULPS       X13, X12, X12 ; \
	VBROADCASTSS X12, Y13 ; \
	VMOVSHDUP    X12, X12 ; \
	VBROADCASTSS X12, Y12 ; \
	VFMADD231PS  Y13, Y10, acc ; \
	VFNMADD231PS Y12, Y9, acc

// func tileQ4_KAVX24x1(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
TEXT ·tileQ4_KAVX24x1(SB), NOSPLIT, $136-56
	T4K_ROWS
	MOVQ wStride+8(FP), R13
	SHLQ $3, R13
	MOVQ         x+16(FP), DI
	MOVL         $0x0F0F0F0F, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3

loop:
	TPF(SI, R13)
	TPF(BX, R13)
	TPF(R8, R13)
	TPF(R9, R13)
	T4KA_ROW(SI, Y0)
	T4KA_ROW(BX, Y1)
	T4KA_ROW(R8, Y2)
	T4KA_ROW(R9, Y3)
	T4K_NEXT_ROWS
	ADDQ $292, DI
	CMPQ SI, 128(SP)
	JNE  loop

	VHADDPS      Y1, Y0, Y0
	VHADDPS      Y3, Y2, Y2
	VHADDPS      Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	MOVQ         out+40(FP), R12
	VMOVUPS      X0, (R12)
	VZEROUPPER
	RET
