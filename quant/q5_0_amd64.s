//go:build amd64 && !purego

#include "textflag.h"

// Weight block (22 bytes): fp16 d at 0, uint32 qh at 2 (bit j is bit 4 of
// element j), 16 bytes of nibbles at 6. Activation block: Q8_0 (34 bytes).
// Σ(q-16)·y is computed as Σq·y - Σ16·y with q unsigned.

// Byte k of the broadcast qh word goes to bytes 8k..8k+7.
DATA q5_0Spread<>+0(SB)/8, $0x0000000000000000
DATA q5_0Spread<>+8(SB)/8, $0x0101010101010101
DATA q5_0Spread<>+16(SB)/8, $0x0202020202020202
DATA q5_0Spread<>+24(SB)/8, $0x0303030303030303
GLOBL q5_0Spread<>(SB), RODATA|NOPTR, $32

// Horizontal sum of Y0 into X0.
#define HSUM_Y0 \
	VEXTRACTF128 $1, Y0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVHLPS   X0, X0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVSHDUP  X0, X1 ; \
	VADDSS     X1, X0, X0

// One block with AVX2. The 32 qh bits become bytes 0x10 or 0 (spread the
// bytes, test one bit per byte, compare) and are or'ed into the nibbles.
// Y8: bytes 1,2,4..128; Y9: q5_0Spread; Y10: bytes 0x10; Y11: bytes 0x0F;
// Y14: words 1.
#define Q5_0_AVX2_BLOCK(woff, xoff, acc) \
	VMOVDQU      (woff+6)(SI), X0 ; \
	VPSRLW       $4, X0, X1 ; \
	VINSERTI128  $1, X1, Y0, Y0 ; \
	VPAND        Y11, Y0, Y0 ; \
	VPBROADCASTD (woff+2)(SI), Y5 ; \
	VPSHUFB      Y9, Y5, Y5 ; \
	VPAND        Y8, Y5, Y5 ; \
	VPCMPEQB     Y8, Y5, Y5 ; \
	VPAND        Y10, Y5, Y5 ; \
	VPOR         Y5, Y0, Y0 ; \
	VMOVDQU      (xoff+2)(DI), Y1 ; \
	VPMADDUBSW   Y1, Y0, Y0 ; \
	VPMADDUBSW   Y1, Y10, Y2 ; \
	VPSUBW       Y2, Y0, Y0 ; \
	VPMADDWD     Y14, Y0, Y0 ; \
	VCVTDQ2PS    Y0, Y0 ; \
	VCVTPH2PS    woff(SI), X3 ; \
	VCVTPH2PS    xoff(DI), X4 ; \
	VMULSS       X4, X3, X3 ; \
	VBROADCASTSS X3, Y3 ; \
	VFMADD231PS  Y3, Y0, acc

// func dotQ5_0AVX2Asm(w, x *byte, nb int) float32
TEXT ·dotQ5_0AVX2Asm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11
	MOVL $0x10101010, AX
	VMOVD AX, X10
	VPBROADCASTD X10, Y10
	MOVQ $0x8040201008040201, AX
	VMOVQ AX, X8
	VPBROADCASTQ X8, Y8
	VMOVDQU q5_0Spread<>(SB), Y9
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	CMPQ CX, $2
	JLT  tail

loop:
	Q5_0_AVX2_BLOCK(0, 0, Y12)
	Q5_0_AVX2_BLOCK(22, 34, Y13)
	ADDQ $44, SI
	ADDQ $68, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE  loop

tail:
	TESTQ CX, CX
	JEQ   done
	Q5_0_AVX2_BLOCK(0, 0, Y12)

done:
	VADDPS Y13, Y12, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// VPERMT2W word indexes gathering the fp16 d of four weight blocks from 128
// bytes (blocks 0-3 from offset 0, blocks 4-7 from offset 48 so as not to
// read past the eighth block), and of four activation blocks.
DATA q5_0WIdxA<>+0(SB)/8, $0x00210016000B0000
GLOBL q5_0WIdxA<>(SB), RODATA|NOPTR, $64
DATA q5_0WIdxB<>+0(SB)/8, $0x0035002A001F0014
GLOBL q5_0WIdxB<>(SB), RODATA|NOPTR, $64
DATA q5_0XIdx<>+0(SB)/8, $0x0033002200110000
GLOBL q5_0XIdx<>(SB), RODATA|NOPTR, $64

// The integer sums of two blocks into Z2 (8 dwords per block). Nibbles as
// in Q4_0 (see q4_0_amd64.s); the 64 qh bits of the pair, in element order,
// are a byte mask under which 0x10 is added. K1: dwords 8-15. Z20: qword
// shifts 0,0,4,4 per 256 bits. Z22: bytes 0x0F. Z23: bytes 0x10.
#define Q5_0_VNNI_PAIR(woff, xoff) \
	VBROADCASTI32X4 (woff+6)(SI), Z0 ; \
	VBROADCASTI32X4 (woff+28)(SI), K1, Z0 ; \
	VPSRLVQ      Z20, Z0, Z0 ; \
	VPANDD       Z22, Z0, Z0 ; \
	MOVL         (woff+2)(SI), AX ; \
	MOVL         (woff+24)(SI), BX ; \
	SHLQ         $32, BX ; \
	ORQ          BX, AX ; \
	KMOVQ        AX, K2 ; \
	VPADDB       Z23, Z0, K2, Z0 ; \
	VMOVDQU      (xoff+2)(DI), Y1 ; \
	VINSERTI64X4 $1, (xoff+36)(DI), Z1, Z1 ; \
	VPXORD       Z2, Z2, Z2 ; \
	VPDPBUSD     Z1, Z0, Z2 ; \
	VPXORD       Z3, Z3, Z3 ; \
	VPDPBUSD     Z1, Z23, Z3 ; \
	VPSUBD       Z3, Z2, Z2 ; \
	VCVTDQ2PS    Z2, Z2

// A pair whose scales are lanes i and i+1 of Z4; idx spreads them.
#define Q5_0_VNNI_PAIR8(woff, xoff, idx, acc) \
	Q5_0_VNNI_PAIR(woff, xoff) ; \
	VPERMPS      Z4, idx, Z5 ; \
	VFMADD231PS  Z5, Z2, acc

// func dotQ5_0VNNIAsm(w, x *byte, nb int) float32
TEXT ·dotQ5_0VNNIAsm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVL $0xFF00, AX
	KMOVW AX, K1
	MOVL $0xCC, AX
	KMOVW AX, K2
	MOVL $4, AX
	VPXORD Z20, Z20, Z20
	VPBROADCASTQ AX, K2, Z20
	MOVL $0x0F0F0F0F, AX
	VPBROADCASTD AX, Z22
	MOVL $0x10101010, AX
	VPBROADCASTD AX, Z23
	// Z24-Z27: dword indexes 2p in lanes 0-7 and 2p+1 in lanes 8-15.
	MOVL $1, AX
	VPXORD Z24, Z24, Z24
	VPBROADCASTD AX, K1, Z24
	MOVL $2, AX
	VPBROADCASTD AX, Z28
	VPADDD Z28, Z24, Z25
	VPADDD Z28, Z25, Z26
	VPADDD Z28, Z26, Z27
	VMOVDQU64 q5_0WIdxA<>(SB), Z28
	VMOVDQU64 q5_0WIdxB<>(SB), Z29
	VMOVDQU64 q5_0XIdx<>(SB), Z30
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	CMPQ CX, $8
	JLT  pair

loop8:
	VMOVDQU64   (SI), Z6
	VPERMT2W    64(SI), Z28, Z6
	VMOVDQU64   48(SI), Z8
	VPERMT2W    112(SI), Z29, Z8
	VPUNPCKLQDQ X8, X6, X6
	VCVTPH2PS   X6, Y6
	VMOVDQU64   (DI), Z7
	VPERMT2W    64(DI), Z30, Z7
	VMOVDQU64   136(DI), Z9
	VPERMT2W    200(DI), Z30, Z9
	VPUNPCKLQDQ X9, X7, X7
	VCVTPH2PS   X7, Y7
	VMULPS      Y7, Y6, Y4
	Q5_0_VNNI_PAIR8(0, 0, Z24, Z16)
	Q5_0_VNNI_PAIR8(44, 68, Z25, Z17)
	Q5_0_VNNI_PAIR8(88, 136, Z26, Z16)
	Q5_0_VNNI_PAIR8(132, 204, Z27, Z17)
	ADDQ $176, SI
	ADDQ $272, DI
	SUBQ $8, CX
	CMPQ CX, $8
	JGE  loop8

pair:
	CMPQ CX, $2
	JLT  single
	Q5_0_VNNI_PAIR(0, 0)
	VCVTPH2PS    (SI), X4
	VCVTPH2PS    22(SI), X5
	VCVTPH2PS    (DI), X6
	VCVTPH2PS    34(DI), X7
	VMULSS       X6, X4, X4
	VMULSS       X7, X5, X5
	VINSERTPS    $0x10, X5, X4, X4
	VPERMPS      Z4, Z24, Z4
	VFMADD231PS  Z4, Z2, Z16
	ADDQ $44, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP  pair

single:
	VADDPS Z17, Z16, Z16
	VEXTRACTF64X4 $1, Z16, Y1
	VADDPS Y1, Y16, Y16
	TESTQ CX, CX
	JEQ   done
	VMOVDQU      6(SI), X0
	VPSRLW       $4, X0, X1
	VINSERTI128  $1, X1, Y0, Y0
	VPANDD       Y22, Y0, Y0
	MOVL         2(SI), AX
	KMOVD        AX, K2
	VPADDB       Y23, Y0, K2, Y0
	VPXORD       Y2, Y2, Y2
	VPDPBUSD     2(DI), Y0, Y2
	VPXORD       Y3, Y3, Y3
	VPDPBUSD     2(DI), Y23, Y3
	VPSUBD       Y3, Y2, Y2
	VCVTDQ2PS    Y2, Y2
	VCVTPH2PS    (SI), X4
	VCVTPH2PS    (DI), X6
	VMULSS       X6, X4, X4
	VBROADCASTSS X4, Y4
	VFMADD231PS  Y4, Y2, Y16

done:
	VMOVAPS Y16, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET
