//go:build amd64 && !purego

#include "textflag.h"

// Tile kernels for Q6_K weights and Q8_K activations with AVX-512 VNNI.
//
// Weight super-block (210 bytes): ql[128] at 0, qh[64] at 128, int8
// scales[16] at 192, fp16 d at 208. In half h (elements 128h..128h+127),
// with L = ql[64h:], H = qh[32h:] and l < 32, the 6-bit values are
//   element l:     L[l]&15    | (H[l]>>0&3)<<4
//   element l+32:  L[l+32]&15 | (H[l]>>2&3)<<4
//   element l+64:  L[l]>>4    | (H[l]>>4&3)<<4
//   element l+96:  L[l+32]>>4 | (H[l]>>6&3)<<4
// minus 32, and element i has scale i/16. Activation super-block (292
// bytes): float32 d at 0, qs[256] at 4, int16 bsums[16] at 260.
//
// Per super-block, each row's values are unpacked once, unsigned (0..63),
// into four registers of 64 elements (half h, low nibbles in Z(16+2h), high
// in Z(17+2h)), and its scales once into four registers of words, one
// scale per 128-bit lane; both are reused for every column. The -32 is
// taken off as 32·Σ scale·bsums. The float factors d·y.d of every (row,
// column) go to the stack and are broadcast from there.
//
// Register use: Z0-Z15 float accumulators (row r, column c in Z(4r+c)),
// Z16-Z19 a row's values, Z20-Z23 its scales per piece, Y24 its sixteen
// scales as words, Z25-Z27 scratch, Z28/Z29 qword shift counts, Z30 bytes
// 0x0F, Z31 bytes 0x30. Rows are at SI, BX, R8, R9; columns at DI, DX, R10,
// R11.

// VPERMW indexes: index p (64 bytes) repeats word 4p+i in 128-bit lane i,
// the scale of the 16 elements that lane meets.

DATA t6kIdx<>+0(SB)/8, $0x0000000000000000
DATA t6kIdx<>+8(SB)/8, $0x0000000000000000
DATA t6kIdx<>+16(SB)/8, $0x0001000100010001
DATA t6kIdx<>+24(SB)/8, $0x0001000100010001
DATA t6kIdx<>+32(SB)/8, $0x0002000200020002
DATA t6kIdx<>+40(SB)/8, $0x0002000200020002
DATA t6kIdx<>+48(SB)/8, $0x0003000300030003
DATA t6kIdx<>+56(SB)/8, $0x0003000300030003
DATA t6kIdx<>+64(SB)/8, $0x0004000400040004
DATA t6kIdx<>+72(SB)/8, $0x0004000400040004
DATA t6kIdx<>+80(SB)/8, $0x0005000500050005
DATA t6kIdx<>+88(SB)/8, $0x0005000500050005
DATA t6kIdx<>+96(SB)/8, $0x0006000600060006
DATA t6kIdx<>+104(SB)/8, $0x0006000600060006
DATA t6kIdx<>+112(SB)/8, $0x0007000700070007
DATA t6kIdx<>+120(SB)/8, $0x0007000700070007
DATA t6kIdx<>+128(SB)/8, $0x0008000800080008
DATA t6kIdx<>+136(SB)/8, $0x0008000800080008
DATA t6kIdx<>+144(SB)/8, $0x0009000900090009
DATA t6kIdx<>+152(SB)/8, $0x0009000900090009
DATA t6kIdx<>+160(SB)/8, $0x000A000A000A000A
DATA t6kIdx<>+168(SB)/8, $0x000A000A000A000A
DATA t6kIdx<>+176(SB)/8, $0x000B000B000B000B
DATA t6kIdx<>+184(SB)/8, $0x000B000B000B000B
DATA t6kIdx<>+192(SB)/8, $0x000C000C000C000C
DATA t6kIdx<>+200(SB)/8, $0x000C000C000C000C
DATA t6kIdx<>+208(SB)/8, $0x000D000D000D000D
DATA t6kIdx<>+216(SB)/8, $0x000D000D000D000D
DATA t6kIdx<>+224(SB)/8, $0x000E000E000E000E
DATA t6kIdx<>+232(SB)/8, $0x000E000E000E000E
DATA t6kIdx<>+240(SB)/8, $0x000F000F000F000F
DATA t6kIdx<>+248(SB)/8, $0x000F000F000F000F
GLOBL t6kIdx<>(SB), RODATA|NOPTR, $256

// Qword shift counts for the high bits: left by 4 and 2 for the low
// nibbles of the two 256-bit halves, right by 0 and 2 for the high ones.
DATA t6kShl<>+0(SB)/8, $4
DATA t6kShl<>+8(SB)/8, $4
DATA t6kShl<>+16(SB)/8, $4
DATA t6kShl<>+24(SB)/8, $4
DATA t6kShl<>+32(SB)/8, $2
DATA t6kShl<>+40(SB)/8, $2
DATA t6kShl<>+48(SB)/8, $2
DATA t6kShl<>+56(SB)/8, $2
GLOBL t6kShl<>(SB), RODATA|NOPTR, $64
DATA t6kShr<>+0(SB)/8, $0
DATA t6kShr<>+8(SB)/8, $0
DATA t6kShr<>+16(SB)/8, $0
DATA t6kShr<>+24(SB)/8, $0
DATA t6kShr<>+32(SB)/8, $2
DATA t6kShr<>+40(SB)/8, $2
DATA t6kShr<>+48(SB)/8, $2
DATA t6kShr<>+56(SB)/8, $2
GLOBL t6kShr<>(SB), RODATA|NOPTR, $64

#define T6K_CONST \
	VMOVDQU64    t6kShl<>(SB), Z28 ; \
	VMOVDQU64    t6kShr<>(SB), Z29 ; \
	MOVL         $0x0F0F0F0F, AX ; \
	VPBROADCASTD AX, Z30 ; \
	MOVL         $0x30303030, AX ; \
	VPBROADCASTD AX, Z31

// Half h of the row: 64 bytes of ql in Z25, 32 of qh in both halves of Z27;
// VPTERNLOGD $0xF8 computes high | (low & 0x0F).
#define T6K_HALF(row, h, lo, hi) \
	VMOVDQU64       (64*h)(row), Z25 ; \
	VBROADCASTI64X4 (128+32*h)(row), Z27 ; \
	VPSLLVQ         Z28, Z27, lo ; \
	VPANDD          Z31, lo, lo ; \
	VPTERNLOGD      $0xF8, Z30, Z25, lo ; \
	VPSRLQ          $4, Z25, Z25 ; \
	VPSRLVQ         Z29, Z27, hi ; \
	VPANDD          Z31, hi, hi ; \
	VPTERNLOGD      $0xF8, Z30, Z25, hi

// Everything of one row the columns share.
#define T6K_ROW(row) \
	VPMOVSXBW 192(row), Y24 ; \
	VMOVDQU64 t6kIdx<>+0(SB), Z20 ; \
	VPERMW    Z24, Z20, Z20 ; \
	VMOVDQU64 t6kIdx<>+64(SB), Z21 ; \
	VPERMW    Z24, Z21, Z21 ; \
	VMOVDQU64 t6kIdx<>+128(SB), Z22 ; \
	VPERMW    Z24, Z22, Z22 ; \
	VMOVDQU64 t6kIdx<>+192(SB), Z23 ; \
	VPERMW    Z24, Z23, Z23 ; \
	T6K_HALF(row, 0, Z16, Z17) ; \
	T6K_HALF(row, 1, Z18, Z19)

// T6K_ROW for the 4×1 kernel, which has registers to spare: the VPERMW
// indexes are in Z4-Z7.
#define T6K_ROW1(row) \
	VPMOVSXBW 192(row), Y24 ; \
	VPERMW    Z24, Z4, Z20 ; \
	VPERMW    Z24, Z5, Z21 ; \
	VPERMW    Z24, Z6, Z22 ; \
	VPERMW    Z24, Z7, Z23 ; \
	T6K_HALF(row, 0, Z16, Z17) ; \
	T6K_HALF(row, 1, Z18, Z19)

// T6K_RC for the 4×1 kernel: the column's four chunks of quants are in
// Z8-Z11 and its block sums in Y12.
#define T6K_RC1(fac, acc) \
	VPMADDUBSW       Z8, Z16, Z25 ; \
	VPMADDWD         Z20, Z25, Z26 ; \
	VPMADDUBSW       Z9, Z17, Z25 ; \
	VPDPWSSD         Z21, Z25, Z26 ; \
	VPMADDUBSW       Z10, Z18, Z25 ; \
	VPDPWSSD         Z22, Z25, Z26 ; \
	VPMADDUBSW       Z11, Z19, Z25 ; \
	VPDPWSSD         Z23, Z25, Z26 ; \
	VPMADDWD         Y12, Y24, Y27 ; \
	VPSLLD           $5, Y27, Y27 ; \
	VPSUBD           Z27, Z26, Z26 ; \
	VCVTDQ2PS        Z26, Z26 ; \
	VFMADD231PS.BCST fac(SP), Z26, acc

// acc += d·y.d·(Σ sc·q·y - 32·Σ sc·bsums) for the row prepared by T6K_ROW
// and the column at col; fac is the stack offset of d·y.d.
#define T6K_RC(col, fac, acc) \
	VPMADDUBSW       4(col), Z16, Z25 ; \
	VPMADDWD         Z20, Z25, Z26 ; \
	VPMADDUBSW       68(col), Z17, Z25 ; \
	VPDPWSSD         Z21, Z25, Z26 ; \
	VPMADDUBSW       132(col), Z18, Z25 ; \
	VPDPWSSD         Z22, Z25, Z26 ; \
	VPMADDUBSW       196(col), Z19, Z25 ; \
	VPDPWSSD         Z23, Z25, Z26 ; \
	VPMADDWD         260(col), Y24, Y27 ; \
	VPSLLD           $5, Y27, Y27 ; \
	VPSUBD           Z27, Z26, Z26 ; \
	VCVTDQ2PS        Z26, Z26 ; \
	VFMADD231PS.BCST fac(SP), Z26, acc

// The fp16 d of the four rows as float32 in X26; each is read alone, as
// it ends the block.
#define T6K_D4 \
	MOVWLZX   208(SI), AX ; \
	VMOVD     AX, X26 ; \
	VPINSRW   $1, 208(BX), X26, X26 ; \
	VPINSRW   $2, 208(R8), X26, X26 ; \
	VPINSRW   $3, 208(R9), X26, X26 ; \
	VCVTPH2PS X26, X26

// X26 times the activation scale of col, to the stack at 16c: d_r·y.d at
// 16c+4r.
#define T6K_FAC(col, c) \
	VBROADCASTSS (col), X27 ; \
	VMULPS       X27, X26, X25 ; \
	VMOVUPS      X25, (16*c)(SP)

// The sums of four accumulators (Z0-Z15, with their Y forms) as the four
// floats of xa.
#define T6K_REDUCE4(a, b, c, d, ya, yb, yc, yd, xa) \
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
// 64(SP).
#define T6K_ROWS \
	MOVQ  w+0(FP), SI ; \
	MOVQ  wStride+8(FP), AX ; \
	LEAQ  (SI)(AX*1), BX ; \
	LEAQ  (SI)(AX*2), R8 ; \
	LEAQ  (BX)(AX*2), R9 ; \
	MOVQ  nb+32(FP), AX ; \
	IMULQ $210, AX ; \
	ADDQ  SI, AX ; \
	MOVQ  AX, 64(SP)

#define T6K_NEXT_ROWS \
	ADDQ $210, SI ; \
	ADDQ $210, BX ; \
	ADDQ $210, R8 ; \
	ADDQ $210, R9

#define ZERO(z) VPXORD z, z, z

// Prefetch of the rows of a later tile (reg bytes on) at the current
// offset: the hardware prefetchers, seeing four short streams at a time,
// fetch them late. 210 bytes a row per iteration.
#define TPF(row, reg) \
	PREFETCHT0 0(row)(reg*1) ; \
	PREFETCHT0 64(row)(reg*1) ; \
	PREFETCHT0 128(row)(reg*1) ; \
	PREFETCHT0 192(row)(reg*1)

// func tileQ6_KVNNI4x1(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
TEXT ·tileQ6_KVNNI4x1(SB), NOSPLIT, $72-56
	T6K_ROWS
	MOVQ wStride+8(FP), R10
	SHLQ $3, R10
	MOVQ x+16(FP), DI
	T6K_CONST
	VMOVDQU64 t6kIdx<>+0(SB), Z4
	VMOVDQU64 t6kIdx<>+64(SB), Z5
	VMOVDQU64 t6kIdx<>+128(SB), Z6
	VMOVDQU64 t6kIdx<>+192(SB), Z7
	ZERO(Z0)
	ZERO(Z1)
	ZERO(Z2)
	ZERO(Z3)

loop:
	TPF(SI, R10)
	TPF(BX, R10)
	TPF(R8, R10)
	TPF(R9, R10)
	T6K_D4
	T6K_FAC(DI, 0)
	VMOVDQU64 4(DI), Z8
	VMOVDQU64 68(DI), Z9
	VMOVDQU64 132(DI), Z10
	VMOVDQU64 196(DI), Z11
	VMOVDQU64 260(DI), Y12
	T6K_ROW1(SI)
	T6K_RC1(0, Z0)
	T6K_ROW1(BX)
	T6K_RC1(4, Z1)
	T6K_ROW1(R8)
	T6K_RC1(8, Z2)
	T6K_ROW1(R9)
	T6K_RC1(12, Z3)
	T6K_NEXT_ROWS
	ADDQ $292, DI
	CMPQ SI, 64(SP)
	JNE  loop

	T6K_REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0)
	MOVQ    out+40(FP), R12
	VMOVUPS X0, (R12)
	VZEROUPPER
	RET

// func tileQ6_KVNNI4x4(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
TEXT ·tileQ6_KVNNI4x4(SB), NOSPLIT, $72-56
	T6K_ROWS
	MOVQ wStride+8(FP), R12
	SHLQ $2, R12
	MOVQ x+16(FP), DI
	MOVQ xStride+24(FP), AX
	LEAQ (DI)(AX*1), DX
	LEAQ (DI)(AX*2), R10
	LEAQ (DX)(AX*2), R11
	T6K_CONST

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
	T6K_D4
	T6K_FAC(DI, 0)
	T6K_FAC(DX, 1)
	T6K_FAC(R10, 2)
	T6K_FAC(R11, 3)
	T6K_ROW(SI)
	T6K_RC(DI, 0, Z0)
	T6K_RC(DX, 16, Z1)
	T6K_RC(R10, 32, Z2)
	T6K_RC(R11, 48, Z3)
	T6K_ROW(BX)
	T6K_RC(DI, 4, Z4)
	T6K_RC(DX, 20, Z5)
	T6K_RC(R10, 36, Z6)
	T6K_RC(R11, 52, Z7)
	T6K_ROW(R8)
	T6K_RC(DI, 8, Z8)
	T6K_RC(DX, 24, Z9)
	T6K_RC(R10, 40, Z10)
	T6K_RC(R11, 56, Z11)
	T6K_ROW(R9)
	T6K_RC(DI, 12, Z12)
	T6K_RC(DX, 28, Z13)
	T6K_RC(R10, 44, Z14)
	T6K_RC(R11, 60, Z15)
	T6K_NEXT_ROWS
	ADDQ $292, DI
	ADDQ $292, DX
	ADDQ $292, R10
	ADDQ $292, R11
	CMPQ SI, 64(SP)
	JNE  loop

	MOVQ out+40(FP), R12
	MOVQ outStride+48(FP), R13
	SHLQ $2, R13
	T6K_REDUCE4(Z0, Z4, Z8, Z12, Y0, Y4, Y8, Y12, X0)
	VMOVUPS X0, (R12)
	T6K_REDUCE4(Z1, Z5, Z9, Z13, Y1, Y5, Y9, Y13, X1)
	VMOVUPS X1, (R12)(R13*1)
	T6K_REDUCE4(Z2, Z6, Z10, Z14, Y2, Y6, Y10, Y14, X2)
	VMOVUPS X2, (R12)(R13*2)
	T6K_REDUCE4(Z3, Z7, Z11, Z15, Y3, Y7, Y11, Y15, X3)
	LEAQ    (R13)(R13*2), AX
	VMOVUPS X3, (R12)(AX*1)
	VZEROUPPER
	RET

// AVX2: four rows against one column, each row's super-block as in the
// single-row kernel. Register use: Y0-Y3 accumulators, Y4 a half's scales
// as words, Y5-Y10 scratch, Y11/Y12 integer sums, Y14 bytes 0x30, Y15
// bytes 0x0F.

// VPSHUFB masks: mask k (32 bytes) repeats word 2k in the low lane and
// word 2k+1 in the high lane.
DATA t6kaShuf<>+0(SB)/8, $0x0100010001000100
DATA t6kaShuf<>+8(SB)/8, $0x0100010001000100
DATA t6kaShuf<>+16(SB)/8, $0x0302030203020302
DATA t6kaShuf<>+24(SB)/8, $0x0302030203020302
DATA t6kaShuf<>+32(SB)/8, $0x0504050405040504
DATA t6kaShuf<>+40(SB)/8, $0x0504050405040504
DATA t6kaShuf<>+48(SB)/8, $0x0706070607060706
DATA t6kaShuf<>+56(SB)/8, $0x0706070607060706
DATA t6kaShuf<>+64(SB)/8, $0x0908090809080908
DATA t6kaShuf<>+72(SB)/8, $0x0908090809080908
DATA t6kaShuf<>+80(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA t6kaShuf<>+88(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA t6kaShuf<>+96(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA t6kaShuf<>+104(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA t6kaShuf<>+112(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA t6kaShuf<>+120(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA t6kaShuf<>+128(SB)/8, $0x1110111011101110
DATA t6kaShuf<>+136(SB)/8, $0x1110111011101110
DATA t6kaShuf<>+144(SB)/8, $0x1312131213121312
DATA t6kaShuf<>+152(SB)/8, $0x1312131213121312
DATA t6kaShuf<>+160(SB)/8, $0x1514151415141514
DATA t6kaShuf<>+168(SB)/8, $0x1514151415141514
DATA t6kaShuf<>+176(SB)/8, $0x1716171617161716
DATA t6kaShuf<>+184(SB)/8, $0x1716171617161716
DATA t6kaShuf<>+192(SB)/8, $0x1918191819181918
DATA t6kaShuf<>+200(SB)/8, $0x1918191819181918
DATA t6kaShuf<>+208(SB)/8, $0x1B1A1B1A1B1A1B1A
DATA t6kaShuf<>+216(SB)/8, $0x1B1A1B1A1B1A1B1A
DATA t6kaShuf<>+224(SB)/8, $0x1D1C1D1C1D1C1D1C
DATA t6kaShuf<>+232(SB)/8, $0x1D1C1D1C1D1C1D1C
DATA t6kaShuf<>+240(SB)/8, $0x1F1E1F1E1F1E1F1E
DATA t6kaShuf<>+248(SB)/8, $0x1F1E1F1E1F1E1F1E
GLOBL t6kaShuf<>(SB), RODATA|NOPTR, $256

// 32 elements: lo holds the low nibbles in its low 4 bits, hi the two high
// bits in bits 4-5 after the shift (garbage elsewhere is masked).
#define T6KA_PIECE(lo, hi, yoff, k, acc) \
	VPAND      Y15, lo, Y9 ; \
	VPAND      Y14, hi, Y10 ; \
	VPOR       Y10, Y9, Y9 ; \
	VPMADDUBSW yoff, Y9, Y9 ; \
	VPSHUFB    t6kaShuf<>+(32*k)(SB), Y4, Y10 ; \
	VPMADDWD   Y10, Y9, Y9 ; \
	VPADDD     Y9, acc, acc

// Half h of the super-block of row.
#define T6KA_HALF(row, h) \
	VPMOVSXBW   (192+8*h)(row), X4 ; \
	VINSERTI128 $1, X4, Y4, Y4 ; \
	VMOVDQU     (64*h)(row), Y5 ; \
	VMOVDQU     (64*h+32)(row), Y6 ; \
	VMOVDQU     (128+32*h)(row), Y7 ; \
	VPSLLW      $4, Y7, Y8 ; \
	T6KA_PIECE(Y5, Y8, (4+128*h)(DI), 0, Y11) ; \
	VPSLLW      $2, Y7, Y8 ; \
	T6KA_PIECE(Y6, Y8, (36+128*h)(DI), 1, Y12) ; \
	VPSRLW      $4, Y5, Y5 ; \
	T6KA_PIECE(Y5, Y7, (68+128*h)(DI), 2, Y11) ; \
	VPSRLW      $4, Y6, Y6 ; \
	VPSRLW      $2, Y7, Y8 ; \
	T6KA_PIECE(Y6, Y8, (100+128*h)(DI), 3, Y12)

// acc += d·y.d·(Σ sc·q·y - 32·Σ sc·bsums) over the super-block of row.
#define T6KA_ROW(row, acc) \
	VPMOVSXBW    192(row), Y5 ; \
	VPMADDWD     260(DI), Y5, Y5 ; \
	VPSLLD       $5, Y5, Y5 ; \
	VPXOR        Y12, Y12, Y12 ; \
	VPSUBD       Y5, Y12, Y11 ; \
	T6KA_HALF(row, 0) ; \
	T6KA_HALF(row, 1) ; \
	VPADDD       Y12, Y11, Y11 ; \
	VCVTDQ2PS    Y11, Y11 ; \
	MOVWLZX      208(row), AX ; \
	VMOVD        AX, X5 ; \
	VCVTPH2PS    X5, X5 ; \
	VMULSS       (DI), X5, X5 ; \
	VBROADCASTSS X5, Y5 ; \
	VFMADD231PS  Y5, Y11, acc

// func tileQ6_KAVX24x1(w *byte, wStride int, x *byte, xStride int, nb int, out *float32, outStride int)
TEXT ·tileQ6_KAVX24x1(SB), NOSPLIT, $72-56
	T6K_ROWS
	MOVQ wStride+8(FP), R10
	SHLQ $3, R10
	MOVQ         x+16(FP), DI
	MOVL         $0x0F0F0F0F, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $0x30303030, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3

loop:
	TPF(SI, R10)
	TPF(BX, R10)
	TPF(R8, R10)
	TPF(R9, R10)
	T6KA_ROW(SI, Y0)
	T6KA_ROW(BX, Y1)
	T6KA_ROW(R8, Y2)
	T6KA_ROW(R9, Y3)
	T6K_NEXT_ROWS
	ADDQ $292, DI
	CMPQ SI, 64(SP)
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
