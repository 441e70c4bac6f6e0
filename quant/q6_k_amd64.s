//go:build amd64 && !purego

#include "textflag.h"

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
// The values are used unsigned (0..63) and the -32 is taken off at the end
// as 32·Σ scale[g]·bsums[g].

// VPSHUFB masks for AVX2: mask k (32 bytes) repeats word 2k in the low lane
// and word 2k+1 in the high lane.
DATA q6_kShuf<>+0(SB)/8, $0x0100010001000100
DATA q6_kShuf<>+8(SB)/8, $0x0100010001000100
DATA q6_kShuf<>+16(SB)/8, $0x0302030203020302
DATA q6_kShuf<>+24(SB)/8, $0x0302030203020302
DATA q6_kShuf<>+32(SB)/8, $0x0504050405040504
DATA q6_kShuf<>+40(SB)/8, $0x0504050405040504
DATA q6_kShuf<>+48(SB)/8, $0x0706070607060706
DATA q6_kShuf<>+56(SB)/8, $0x0706070607060706
DATA q6_kShuf<>+64(SB)/8, $0x0908090809080908
DATA q6_kShuf<>+72(SB)/8, $0x0908090809080908
DATA q6_kShuf<>+80(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q6_kShuf<>+88(SB)/8, $0x0B0A0B0A0B0A0B0A
DATA q6_kShuf<>+96(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q6_kShuf<>+104(SB)/8, $0x0D0C0D0C0D0C0D0C
DATA q6_kShuf<>+112(SB)/8, $0x0F0E0F0E0F0E0F0E
DATA q6_kShuf<>+120(SB)/8, $0x0F0E0F0E0F0E0F0E
GLOBL q6_kShuf<>(SB), RODATA|NOPTR, $128

// VPERMW indexes for AVX-512: index p (64 bytes) repeats word 4p+i in
// 128-bit lane i, the scale of the 16 elements that lane meets.
DATA q6_kIdx<>+0(SB)/8, $0x0000000000000000
DATA q6_kIdx<>+8(SB)/8, $0x0000000000000000
DATA q6_kIdx<>+16(SB)/8, $0x0001000100010001
DATA q6_kIdx<>+24(SB)/8, $0x0001000100010001
DATA q6_kIdx<>+32(SB)/8, $0x0002000200020002
DATA q6_kIdx<>+40(SB)/8, $0x0002000200020002
DATA q6_kIdx<>+48(SB)/8, $0x0003000300030003
DATA q6_kIdx<>+56(SB)/8, $0x0003000300030003
DATA q6_kIdx<>+64(SB)/8, $0x0004000400040004
DATA q6_kIdx<>+72(SB)/8, $0x0004000400040004
DATA q6_kIdx<>+80(SB)/8, $0x0005000500050005
DATA q6_kIdx<>+88(SB)/8, $0x0005000500050005
DATA q6_kIdx<>+96(SB)/8, $0x0006000600060006
DATA q6_kIdx<>+104(SB)/8, $0x0006000600060006
DATA q6_kIdx<>+112(SB)/8, $0x0007000700070007
DATA q6_kIdx<>+120(SB)/8, $0x0007000700070007
DATA q6_kIdx<>+128(SB)/8, $0x0008000800080008
DATA q6_kIdx<>+136(SB)/8, $0x0008000800080008
DATA q6_kIdx<>+144(SB)/8, $0x0009000900090009
DATA q6_kIdx<>+152(SB)/8, $0x0009000900090009
DATA q6_kIdx<>+160(SB)/8, $0x000A000A000A000A
DATA q6_kIdx<>+168(SB)/8, $0x000A000A000A000A
DATA q6_kIdx<>+176(SB)/8, $0x000B000B000B000B
DATA q6_kIdx<>+184(SB)/8, $0x000B000B000B000B
DATA q6_kIdx<>+192(SB)/8, $0x000C000C000C000C
DATA q6_kIdx<>+200(SB)/8, $0x000C000C000C000C
DATA q6_kIdx<>+208(SB)/8, $0x000D000D000D000D
DATA q6_kIdx<>+216(SB)/8, $0x000D000D000D000D
DATA q6_kIdx<>+224(SB)/8, $0x000E000E000E000E
DATA q6_kIdx<>+232(SB)/8, $0x000E000E000E000E
DATA q6_kIdx<>+240(SB)/8, $0x000F000F000F000F
DATA q6_kIdx<>+248(SB)/8, $0x000F000F000F000F
GLOBL q6_kIdx<>(SB), RODATA|NOPTR, $256

// 32 elements with AVX2: lo holds the low nibbles in its low 4 bits, hi the
// two high bits in bits 4-5 after the shift (garbage elsewhere is masked).
// Y15: bytes 0x0F. Y14: bytes 0x30. Y1: the half's 8 scales in both lanes.
#define Q6_K_AVX2_PIECE(lo, hi, yoff, k, acc) \
	VPAND      Y15, lo, Y6 ; \
	VPAND      Y14, hi, Y7 ; \
	VPOR       Y7, Y6, Y6 ; \
	VPMADDUBSW yoff, Y6, Y6 ; \
	VPSHUFB    q6_kShuf<>+(32*k)(SB), Y1, Y7 ; \
	VPMADDWD   Y7, Y6, Y6 ; \
	VPADDD     Y6, acc, acc

// Half h of the super-block with AVX2.
#define Q6_K_AVX2_HALF(h) \
	VPMOVSXBW   (192+8*h)(SI), X1 ; \
	VINSERTI128 $1, X1, Y1, Y1 ; \
	VMOVDQU     (64*h)(SI), Y3 ; \
	VMOVDQU     (64*h+32)(SI), Y4 ; \
	VMOVDQU     (128+32*h)(SI), Y5 ; \
	VPSLLW      $4, Y5, Y8 ; \
	Q6_K_AVX2_PIECE(Y3, Y8, (4+128*h)(DI), 0, Y12) ; \
	VPSLLW      $2, Y5, Y8 ; \
	Q6_K_AVX2_PIECE(Y4, Y8, (36+128*h)(DI), 1, Y13) ; \
	VPSRLW      $4, Y3, Y3 ; \
	Q6_K_AVX2_PIECE(Y3, Y5, (68+128*h)(DI), 2, Y12) ; \
	VPSRLW      $4, Y4, Y4 ; \
	VPSRLW      $2, Y5, Y8 ; \
	Q6_K_AVX2_PIECE(Y4, Y8, (100+128*h)(DI), 3, Y13)

// Horizontal sum of Y0 into X0.
#define HSUM_Y0 \
	VEXTRACTF128 $1, Y0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVHLPS   X0, X0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVSHDUP  X0, X1 ; \
	VADDSS     X1, X0, X0

// d·y.d broadcast into dst (its X form is xd); the fp16 d is the last two
// bytes of the block, so it is loaded alone rather than with VCVTPH2PS's
// 8-byte read.
#define Q6_K_SCALE(xd, dst) \
	MOVWLZX      208(SI), AX ; \
	VMOVD        AX, xd ; \
	VCVTPH2PS    xd, xd ; \
	VMULSS       (DI), xd, xd ; \
	VBROADCASTSS xd, dst

// func dotQ6_KAVX2Asm(w, x *byte, nb int) float32
TEXT ·dotQ6_KAVX2Asm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x30303030, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	VXORPS Y10, Y10, Y10

loop:
	// 32·Σ scale·bsums, to subtract.
	VPMOVSXBW 192(SI), Y2
	VPMADDWD  260(DI), Y2, Y2
	VPSLLD    $5, Y2, Y12
	VPXOR     Y13, Y13, Y13
	VPSUBD    Y12, Y13, Y12
	Q6_K_AVX2_HALF(0)
	Q6_K_AVX2_HALF(1)
	VPADDD      Y13, Y12, Y12
	VCVTDQ2PS   Y12, Y12
	Q6_K_SCALE(X3, Y3)
	VFMADD231PS Y3, Y12, Y10
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  loop

	VMOVAPS Y10, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// 64 elements with AVX-512. lo: ql bytes with the low nibbles in bits 0-3;
// hi: qh bytes with the two high bits in bits 4-5. Z29: bytes 0x30, Z30:
// bytes 0x0F. VPTERNLOGD $0xF8 computes hi | (lo & 0x0F).
#define Q6_K_VNNI_PIECE(lo, hi, yoff, idx, acc) \
	VPANDD     Z29, hi, hi ; \
	VPTERNLOGD $0xF8, Z30, lo, hi ; \
	VPMADDUBSW yoff, hi, hi ; \
	VPERMW     Z1, idx, Z7 ; \
	VPDPWSSD   Z7, hi, acc

// Half h: Z3 = ql[64h:64h+64] (elements l and l+32 below 64 as low nibbles,
// 64.. as high ones), Z5 = qh[32h:] in both halves, shifted per 256 bits so
// that bits 4-5 hold the high bits each element needs. Z26/Z27: qword shift
// counts 4,2 (left) and 0,2 (right) for the two 256-bit halves.
#define Q6_K_VNNI_HALF(h, i0, i1) \
	VMOVDQU64       (64*h)(SI), Z3 ; \
	VBROADCASTI64X4 (128+32*h)(SI), Z5 ; \
	VPSLLVQ         Z26, Z5, Z6 ; \
	Q6_K_VNNI_PIECE(Z3, Z6, (4+128*h)(DI), i0, Z12) ; \
	VPSRLQ          $4, Z3, Z3 ; \
	VPSRLVQ         Z27, Z5, Z5 ; \
	Q6_K_VNNI_PIECE(Z3, Z5, (68+128*h)(DI), i1, Z13)

// func dotQ6_KVNNIAsm(w, x *byte, nb int) float32
TEXT ·dotQ6_KVNNIAsm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVL $0xF0, AX
	KMOVW AX, K1
	MOVL $4, AX
	VPBROADCASTQ AX, Z26
	MOVL $2, AX
	VPBROADCASTQ AX, K1, Z26
	VPXORD Z27, Z27, Z27
	VPBROADCASTQ AX, K1, Z27
	MOVL $0x30303030, AX
	VPBROADCASTD AX, Z29
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z30
	VMOVDQU64 q6_kIdx<>+0(SB), Z20
	VMOVDQU64 q6_kIdx<>+64(SB), Z21
	VMOVDQU64 q6_kIdx<>+128(SB), Z22
	VMOVDQU64 q6_kIdx<>+192(SB), Z23
	VPXORD Z16, Z16, Z16

loop:
	VPMOVSXBW 192(SI), Y1
	VPMADDWD  260(DI), Y1, Y2
	VPSLLD    $5, Y2, Y2
	VPXORD    Z13, Z13, Z13
	VPSUBD    Z2, Z13, Z12
	Q6_K_VNNI_HALF(0, Z20, Z21)
	Q6_K_VNNI_HALF(1, Z22, Z23)
	VPADDD      Z13, Z12, Z12
	VCVTDQ2PS   Z12, Z12
	Q6_K_SCALE(X3, Z3)
	VFMADD231PS Z3, Z12, Z16
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  loop

	VEXTRACTF64X4 $1, Z16, Y1
	VADDPS Y1, Y16, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET
