//go:build amd64 && !purego

#include "textflag.h"

// Weight super-block (176 bytes): fp16 d at 0, fp16 dmin at 2, scales[12]
// at 4 (packed as in Q4_K), qh[32] at 16, qs[128] at 48. Element 64j+l
// (l < 32) is the low nibble of qs[32j+l] plus bit 2j of qh[l] as bit 4;
// element 64j+32+l the high nibble plus bit 2j+1. Scales, mins and the
// activation side are as in Q4_K (see q4_k_amd64.s).

// VPSHUFB masks for AVX2: mask k (32 bytes) repeats word k of each lane.
DATA q5_kShuf<>+0(SB)/8, $0x0100010001000100
DATA q5_kShuf<>+8(SB)/8, $0x0100010001000100
DATA q5_kShuf<>+16(SB)/8, $0x0100010001000100
DATA q5_kShuf<>+24(SB)/8, $0x0100010001000100
DATA q5_kShuf<>+32(SB)/8, $0x0302030203020302
DATA q5_kShuf<>+40(SB)/8, $0x0302030203020302
DATA q5_kShuf<>+48(SB)/8, $0x0302030203020302
DATA q5_kShuf<>+56(SB)/8, $0x0302030203020302
DATA q5_kShuf<>+64(SB)/8, $0x0504050405040504
DATA q5_kShuf<>+72(SB)/8, $0x0504050405040504
DATA q5_kShuf<>+80(SB)/8, $0x0504050405040504
DATA q5_kShuf<>+88(SB)/8, $0x0504050405040504
DATA q5_kShuf<>+96(SB)/8, $0x0706070607060706
DATA q5_kShuf<>+104(SB)/8, $0x0706070607060706
DATA q5_kShuf<>+112(SB)/8, $0x0706070607060706
DATA q5_kShuf<>+120(SB)/8, $0x0706070607060706
DATA q5_kShuf<>+128(SB)/8, $0x0908090809080908
DATA q5_kShuf<>+136(SB)/8, $0x0908090809080908
DATA q5_kShuf<>+144(SB)/8, $0x0908090809080908
DATA q5_kShuf<>+152(SB)/8, $0x0908090809080908
DATA q5_kShuf<>+160(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q5_kShuf<>+168(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q5_kShuf<>+176(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q5_kShuf<>+184(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q5_kShuf<>+192(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q5_kShuf<>+200(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q5_kShuf<>+208(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q5_kShuf<>+216(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q5_kShuf<>+224(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q5_kShuf<>+232(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q5_kShuf<>+240(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q5_kShuf<>+248(SB)/8, $0x0F0E0F0E0F0E0F0E
GLOBL q5_kShuf<>(SB), RODATA|NOPTR, $256

// VPSHUFB masks for AVX-512: mask j (64 bytes) repeats word 2j in 128-bit
// lanes 0-1 and word 2j+1 in lanes 2-3.
DATA q5_kShufZ<>+0(SB)/8, $0x0100010001000100
DATA q5_kShufZ<>+8(SB)/8, $0x0100010001000100
DATA q5_kShufZ<>+16(SB)/8, $0x0100010001000100
DATA q5_kShufZ<>+24(SB)/8, $0x0100010001000100
DATA q5_kShufZ<>+32(SB)/8, $0x0302030203020302
DATA q5_kShufZ<>+40(SB)/8, $0x0302030203020302
DATA q5_kShufZ<>+48(SB)/8, $0x0302030203020302
DATA q5_kShufZ<>+56(SB)/8, $0x0302030203020302
DATA q5_kShufZ<>+64(SB)/8, $0x0504050405040504
DATA q5_kShufZ<>+72(SB)/8, $0x0504050405040504
DATA q5_kShufZ<>+80(SB)/8, $0x0504050405040504
DATA q5_kShufZ<>+88(SB)/8, $0x0504050405040504
DATA q5_kShufZ<>+96(SB)/8, $0x0706070607060706
DATA q5_kShufZ<>+104(SB)/8, $0x0706070607060706
DATA q5_kShufZ<>+112(SB)/8, $0x0706070607060706
DATA q5_kShufZ<>+120(SB)/8, $0x0706070607060706
DATA q5_kShufZ<>+128(SB)/8, $0x0908090809080908
DATA q5_kShufZ<>+136(SB)/8, $0x0908090809080908
DATA q5_kShufZ<>+144(SB)/8, $0x0908090809080908
DATA q5_kShufZ<>+152(SB)/8, $0x0908090809080908
DATA q5_kShufZ<>+160(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q5_kShufZ<>+168(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q5_kShufZ<>+176(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q5_kShufZ<>+184(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q5_kShufZ<>+192(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q5_kShufZ<>+200(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q5_kShufZ<>+208(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q5_kShufZ<>+216(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q5_kShufZ<>+224(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q5_kShufZ<>+232(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q5_kShufZ<>+240(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q5_kShufZ<>+248(SB)/8, $0x0F0E0F0E0F0E0F0E
GLOBL q5_kShufZ<>(SB), RODATA|NOPTR, $256

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

// The fifth bits of chunk j's low and high halves at bit 4 of each byte of
// Y8 and Y9, from qh in Y4: the byte's bit 2j (2j+1) is shifted to bit 4 by
// a word shift, whose spill into the neighbouring byte is masked off by
// Y14 (bytes 0x10).
#define Q5_K_HB_L(n, dst) \
	VPSLLW $n, Y4, dst ; \
	VPAND  Y14, dst, dst

#define Q5_K_HB_R(n, dst) \
	VPSRLW $n, Y4, dst ; \
	VPAND  Y14, dst, dst

// 64 elements (chunk j) with AVX2, the fifth bits already in Y8 and Y9.
// Y1: the 8 scales as words in both lanes; Y15: bytes 0x0F.
#define Q5_K_AVX2_CHUNK(j) \
	VMOVDQU    (48+32*j)(SI), Y7 ; \
	VPSRLW     $4, Y7, Y6 ; \
	VPAND      Y15, Y7, Y7 ; \
	VPAND      Y15, Y6, Y6 ; \
	VPOR       Y8, Y7, Y7 ; \
	VPOR       Y9, Y6, Y6 ; \
	VPMADDUBSW (4+64*j)(DI), Y7, Y7 ; \
	VPMADDUBSW (36+64*j)(DI), Y6, Y6 ; \
	VPSHUFB    q5_kShuf<>+(64*j)(SB), Y1, Y9 ; \
	VPMADDWD   Y9, Y7, Y7 ; \
	VPSHUFB    q5_kShuf<>+(64*j+32)(SB), Y1, Y9 ; \
	VPMADDWD   Y9, Y6, Y6 ; \
	VPADDD     Y7, Y12, Y12 ; \
	VPADDD     Y6, Y13, Y13

// Horizontal sum of Y0 into X0.
#define HSUM_Y0 \
	VEXTRACTF128 $1, Y0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVHLPS   X0, X0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVSHDUP  X0, X1 ; \
	VADDSS     X1, X0, X0

// func dotQ5_KAVX2Asm(w, x *byte, nb int) float32
TEXT ·dotQ5_KAVX2Asm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ $0x3F3F3F3F3F3F3F3F, R8
	MOVQ $0x0303030303030303, R9
	MOVQ $0x0F0F0F0F0F0F0F0F, R10
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x10101010, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

loop:
	Q4_K_SCALES
	VPMOVZXBW   X0, X1
	VINSERTI128 $1, X1, Y1, Y1
	Q4_K_MINS
	VPXOR   Y12, Y12, Y12
	VPXOR   Y13, Y13, Y13
	VMOVDQU 16(SI), Y4
	Q5_K_HB_L(4, Y8)
	Q5_K_HB_L(3, Y9)
	Q5_K_AVX2_CHUNK(0)
	Q5_K_HB_L(2, Y8)
	Q5_K_HB_L(1, Y9)
	Q5_K_AVX2_CHUNK(1)
	VPAND   Y14, Y4, Y8
	Q5_K_HB_R(1, Y9)
	Q5_K_AVX2_CHUNK(2)
	Q5_K_HB_R(2, Y8)
	Q5_K_HB_R(3, Y9)
	Q5_K_AVX2_CHUNK(3)
	VPADDD      Y13, Y12, Y12
	VCVTDQ2PS   Y12, Y12
	VCVTDQ2PS   Y2, Y2
	Q4_K_FLOATS(Y5, Y6)
	VFMADD231PS Y5, Y12, Y10
	VFMADD231PS Y6, Y2, Y11
	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  loop

	VSUBPS Y11, Y10, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// 64 elements (chunk j) with AVX-512: the nibbles as in Q4_K, then 0x10
// added under the byte mask of qh bits 2j (low half) and 2j+1 (high half).
// Z18: qh in both 256-bit halves. bits: bytes 1<<2j and 1<<(2j+1) in the
// two halves. Z20: qword shifts 0 and 4 per half. Z21: bytes 0x0F. Z22:
// bytes 0x10. Z1: the scales as words in every 128-bit lane.
#define Q5_K_VNNI_CHUNK(j, bits, acc) \
	VBROADCASTI64X4 (48+32*j)(SI), Z7 ; \
	VPSRLVQ    Z20, Z7, Z7 ; \
	VPANDD     Z21, Z7, Z7 ; \
	VPTESTMB   bits, Z18, K2 ; \
	VPADDB     Z22, Z7, K2, Z7 ; \
	VPMADDUBSW (4+64*j)(DI), Z7, Z7 ; \
	VPSHUFB    q5_kShufZ<>+(64*j)(SB), Z1, Z9 ; \
	VPDPWSSD   Z9, Z7, acc

// func dotQ5_KVNNIAsm(w, x *byte, nb int) float32
TEXT ·dotQ5_KVNNIAsm(SB), NOSPLIT, $0-28
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
	MOVL $0x10101010, AX
	VPBROADCASTD AX, Z22
	// Z24-Z27: bytes 1<<2j in the low 256 bits and 1<<(2j+1) in the high.
	MOVL $0x01010101, AX
	VPBROADCASTD AX, Z24
	MOVL $0xFF00, AX
	KMOVW AX, K3
	MOVL $0x02020202, AX
	VPBROADCASTD AX, K3, Z24
	VPSLLW $2, Z24, Z25
	VPSLLW $2, Z25, Z26
	VPSLLW $2, Z26, Z27
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17

loop:
	Q4_K_SCALES
	VPMOVZXBW  X0, X1
	VSHUFI32X4 $0, Z1, Z1, Z1
	Q4_K_MINS
	VBROADCASTI64X4 16(SI), Z18
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	Q5_K_VNNI_CHUNK(0, Z24, Z12)
	Q5_K_VNNI_CHUNK(1, Z25, Z13)
	Q5_K_VNNI_CHUNK(2, Z26, Z12)
	Q5_K_VNNI_CHUNK(3, Z27, Z13)
	VPADDD      Z13, Z12, Z12
	VCVTDQ2PS   Z12, Z12
	VCVTDQ2PS   Y2, Y2
	Q4_K_FLOATS(Z5, Y6)
	VFMADD231PS Z5, Z12, Z16
	VFMADD231PS Y6, Y2, Y17
	ADDQ $176, SI
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
