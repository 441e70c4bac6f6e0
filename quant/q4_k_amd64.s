//go:build amd64 && !purego

#include "textflag.h"

// Weight super-block (144 bytes): fp16 d at 0, fp16 dmin at 2, scales[12] at
// 4, qs[128] at 16. Elements 64j..64j+31 are the low nibbles of qs[32j:32j+32]
// with scale/min 2j, elements 64j+32..64j+63 the high nibbles with 2j+1.
// Activation super-block (292 bytes): float32 d at 0, qs[256] at 4,
// int16 bsums[16] at 260.
//
// Σ d·sc·q·y - dmin·m·y over a sub-block: the first part multiplies the
// unsigned nibbles by y and then by the scale; the second needs only the
// block sums: Σ_j m_j·(bsums[2j]+bsums[2j+1]).

// VPSHUFB masks for AVX2: mask k (32 bytes) repeats word k of each lane.
DATA q4_kShuf<>+0(SB)/8, $0x0100010001000100
DATA q4_kShuf<>+8(SB)/8, $0x0100010001000100
DATA q4_kShuf<>+16(SB)/8, $0x0100010001000100
DATA q4_kShuf<>+24(SB)/8, $0x0100010001000100
DATA q4_kShuf<>+32(SB)/8, $0x0302030203020302
DATA q4_kShuf<>+40(SB)/8, $0x0302030203020302
DATA q4_kShuf<>+48(SB)/8, $0x0302030203020302
DATA q4_kShuf<>+56(SB)/8, $0x0302030203020302
DATA q4_kShuf<>+64(SB)/8, $0x0504050405040504
DATA q4_kShuf<>+72(SB)/8, $0x0504050405040504
DATA q4_kShuf<>+80(SB)/8, $0x0504050405040504
DATA q4_kShuf<>+88(SB)/8, $0x0504050405040504
DATA q4_kShuf<>+96(SB)/8, $0x0706070607060706
DATA q4_kShuf<>+104(SB)/8, $0x0706070607060706
DATA q4_kShuf<>+112(SB)/8, $0x0706070607060706
DATA q4_kShuf<>+120(SB)/8, $0x0706070607060706
DATA q4_kShuf<>+128(SB)/8, $0x0908090809080908
DATA q4_kShuf<>+136(SB)/8, $0x0908090809080908
DATA q4_kShuf<>+144(SB)/8, $0x0908090809080908
DATA q4_kShuf<>+152(SB)/8, $0x0908090809080908
DATA q4_kShuf<>+160(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q4_kShuf<>+168(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q4_kShuf<>+176(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q4_kShuf<>+184(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q4_kShuf<>+192(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q4_kShuf<>+200(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q4_kShuf<>+208(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q4_kShuf<>+216(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q4_kShuf<>+224(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q4_kShuf<>+232(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q4_kShuf<>+240(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q4_kShuf<>+248(SB)/8, $0x0F0E0F0E0F0E0F0E
GLOBL q4_kShuf<>(SB), RODATA|NOPTR, $256

// VPSHUFB masks for AVX-512: mask j (64 bytes) repeats word 2j in 128-bit
// lanes 0-1 and word 2j+1 in lanes 2-3.
DATA q4_kShufZ<>+0(SB)/8, $0x0100010001000100
DATA q4_kShufZ<>+8(SB)/8, $0x0100010001000100
DATA q4_kShufZ<>+16(SB)/8, $0x0100010001000100
DATA q4_kShufZ<>+24(SB)/8, $0x0100010001000100
DATA q4_kShufZ<>+32(SB)/8, $0x0302030203020302
DATA q4_kShufZ<>+40(SB)/8, $0x0302030203020302
DATA q4_kShufZ<>+48(SB)/8, $0x0302030203020302
DATA q4_kShufZ<>+56(SB)/8, $0x0302030203020302
DATA q4_kShufZ<>+64(SB)/8, $0x0504050405040504
DATA q4_kShufZ<>+72(SB)/8, $0x0504050405040504
DATA q4_kShufZ<>+80(SB)/8, $0x0504050405040504
DATA q4_kShufZ<>+88(SB)/8, $0x0504050405040504
DATA q4_kShufZ<>+96(SB)/8, $0x0706070607060706
DATA q4_kShufZ<>+104(SB)/8, $0x0706070607060706
DATA q4_kShufZ<>+112(SB)/8, $0x0706070607060706
DATA q4_kShufZ<>+120(SB)/8, $0x0706070607060706
DATA q4_kShufZ<>+128(SB)/8, $0x0908090809080908
DATA q4_kShufZ<>+136(SB)/8, $0x0908090809080908
DATA q4_kShufZ<>+144(SB)/8, $0x0908090809080908
DATA q4_kShufZ<>+152(SB)/8, $0x0908090809080908
DATA q4_kShufZ<>+160(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q4_kShufZ<>+168(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q4_kShufZ<>+176(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q4_kShufZ<>+184(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q4_kShufZ<>+192(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q4_kShufZ<>+200(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q4_kShufZ<>+208(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q4_kShufZ<>+216(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q4_kShufZ<>+224(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q4_kShufZ<>+232(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q4_kShufZ<>+240(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q4_kShufZ<>+248(SB)/8, $0x0F0E0F0E0F0E0F0E
GLOBL q4_kShufZ<>(SB), RODATA|NOPTR, $256

// Unpacks the 6-bit scales and mins of the super-block at SI into X0: bytes
// 0-7 the scales, 8-15 the mins. R8, R9, R10 hold bytes 0x3F, 0x03, 0x0F.
// For j < 4 both are the low 6 bits of bytes j and j+4; for j >= 4 the low 4
// bits come from the nibbles of byte j+4 and the top 2 from bits 6-7 of
// bytes j-4 and j. Both halves are built side by side in 64-bit registers.
#define Q4_K_SCALES \
	MOVQ    4(SI), AX ; \
	MOVL    12(SI), BX ; \
	MOVQ    AX, DX ; \
	SHRQ    $6, DX ; \
	ANDQ    R9, DX ; \
	SHLQ    $4, DX ; \
	MOVQ    BX, R11 ; \
	SHLQ    $28, R11 ; \
	ORQ     R11, BX ; \
	ANDQ    R10, BX ; \
	ORQ     DX, BX ; \
	ANDQ    R8, AX ; \
	VMOVQ   AX, X0 ; \
	VPINSRQ $1, BX, X0, X0 ; \
	VPSHUFD $0xD8, X0, X0

// The super-block's float scales: dsc = d·y.d and msc = dmin·y.d broadcast.
#define Q4_K_FLOATS(dsc, msc) \
	VCVTPH2PS    (SI), X3 ; \
	VBROADCASTSS (DI), X4 ; \
	VMULPS       X4, X3, X3 ; \
	VBROADCASTSS X3, dsc ; \
	VMOVSHDUP    X3, X3 ; \
	VBROADCASTSS X3, msc

// Σ m_j·(bsums[2j]+bsums[2j+1]) as 8 dwords in Y2, from the mins in X0.
#define Q4_K_MINS \
	VPSRLDQ    $8, X0, X2 ; \
	VPUNPCKLBW X2, X2, X2 ; \
	VPMOVZXBW  X2, Y2 ; \
	VPMADDWD   260(DI), Y2, Y2

// 64 elements (chunk j) with AVX2. Y1: the 8 scales as words in both lanes;
// Y15: bytes 0x0F. Sums go to Y12 and Y13.
#define Q4_K_AVX2_CHUNK(j) \
	VMOVDQU    (16+32*j)(SI), Y7 ; \
	VPSRLW     $4, Y7, Y8 ; \
	VPAND      Y15, Y7, Y7 ; \
	VPAND      Y15, Y8, Y8 ; \
	VPMADDUBSW (4+64*j)(DI), Y7, Y7 ; \
	VPMADDUBSW (36+64*j)(DI), Y8, Y8 ; \
	VPSHUFB    q4_kShuf<>+(64*j)(SB), Y1, Y9 ; \
	VPMADDWD   Y9, Y7, Y7 ; \
	VPSHUFB    q4_kShuf<>+(64*j+32)(SB), Y1, Y9 ; \
	VPMADDWD   Y9, Y8, Y8 ; \
	VPADDD     Y7, Y12, Y12 ; \
	VPADDD     Y8, Y13, Y13

// Horizontal sum of Y0 into X0.
#define HSUM_Y0 \
	VEXTRACTF128 $1, Y0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVHLPS   X0, X0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVSHDUP  X0, X1 ; \
	VADDSS     X1, X0, X0

// func dotQ4_KAVX2Asm(w, x *byte, nb int) float32
TEXT ·dotQ4_KAVX2Asm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ $0x3F3F3F3F3F3F3F3F, R8
	MOVQ $0x0303030303030303, R9
	MOVQ $0x0F0F0F0F0F0F0F0F, R10
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

loop:
	Q4_K_SCALES
	VPMOVZXBW   X0, X1
	VINSERTI128 $1, X1, Y1, Y1
	Q4_K_MINS
	VPXOR Y12, Y12, Y12
	VPXOR Y13, Y13, Y13
	Q4_K_AVX2_CHUNK(0)
	Q4_K_AVX2_CHUNK(1)
	Q4_K_AVX2_CHUNK(2)
	Q4_K_AVX2_CHUNK(3)
	VPADDD      Y13, Y12, Y12
	VCVTDQ2PS   Y12, Y12
	VCVTDQ2PS   Y2, Y2
	Q4_K_FLOATS(Y5, Y6)
	VFMADD231PS Y5, Y12, Y10
	VFMADD231PS Y6, Y2, Y11
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  loop

	VSUBPS Y11, Y10, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// 64 elements (chunk j) with AVX-512: the 32 nibble bytes are broadcast to
// both halves, shifted by 0 and 4 (Z20) and masked (Z21: 0x0F), so the low
// nibbles face y[64j:64j+32] and the high ones y[64j+32:64j+64]: one load of
// y. The word products are scaled and summed by VPDPWSSD. Z1: the scales as
// words in every 128-bit lane.
#define Q4_K_VNNI_CHUNK(j, acc) \
	VBROADCASTI64X4 (16+32*j)(SI), Z7 ; \
	VPSRLVQ    Z20, Z7, Z7 ; \
	VPANDD     Z21, Z7, Z7 ; \
	VPMADDUBSW (4+64*j)(DI), Z7, Z7 ; \
	VPSHUFB    q4_kShufZ<>+(64*j)(SB), Z1, Z9 ; \
	VPDPWSSD   Z9, Z7, acc

// func dotQ4_KVNNIAsm(w, x *byte, nb int) float32
TEXT ·dotQ4_KVNNIAsm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ $0x3F3F3F3F3F3F3F3F, R8
	MOVQ $0x0303030303030303, R9
	MOVQ $0x0F0F0F0F0F0F0F0F, R10
	MOVL $0xF0, AX
	KMOVW AX, K1
	MOVL $4, AX
	VPXORD Z20, Z20, Z20
	VPBROADCASTQ AX, K1, Z20
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z21
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17

loop:
	Q4_K_SCALES
	VPMOVZXBW  X0, X1
	VSHUFI32X4 $0, Z1, Z1, Z1
	Q4_K_MINS
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	Q4_K_VNNI_CHUNK(0, Z12)
	Q4_K_VNNI_CHUNK(1, Z13)
	Q4_K_VNNI_CHUNK(2, Z12)
	Q4_K_VNNI_CHUNK(3, Z13)
	VPADDD      Z13, Z12, Z12
	VCVTDQ2PS   Z12, Z12
	VCVTDQ2PS   Y2, Y2
	Q4_K_FLOATS(Z5, Y6)
	VFMADD231PS Z5, Z12, Z16
	VFMADD231PS Y6, Y2, Y17
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  loop

	VEXTRACTF64X4 $1, Z16, Y1
	VADDPS Y1, Y16, Y16
	VSUBPS Y17, Y16, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET
