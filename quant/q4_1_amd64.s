//go:build amd64 && !purego

#include "textflag.h"

// Weight block (20 bytes): fp16 d at 0, fp16 m at 2, 16 bytes of nibbles at
// 4. Activation block (36 bytes): fp16 d at 0, fp16 s at 2, int8 qs[32] at 4.
// A block contributes d·d_x·Σq·y + m·s.
//
// The fp16 pairs (d, m) and (d_x, s) are converted and multiplied together,
// giving d·d_x and m·s side by side; the m·s products are summed in a
// separate accumulator in which only the odd lanes count.

// Horizontal sum of Y0 into X0.
#define HSUM_Y0 \
	VEXTRACTF128 $1, Y0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVHLPS   X0, X0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVSHDUP  X0, X1 ; \
	VADDSS     X1, X0, X0

// One block with AVX2: Y11 bytes 0x0F, Y14 words 1. VINSERTPS $0x5D keeps
// only lane 1 (m·s) of X3.
#define Q4_1_AVX2_BLOCK(woff, xoff, acc, macc) \
	VMOVDQU      (woff+4)(SI), X0 ; \
	VPSRLW       $4, X0, X1 ; \
	VINSERTI128  $1, X1, Y0, Y0 ; \
	VPAND        Y11, Y0, Y0 ; \
	VPMADDUBSW   (xoff+4)(DI), Y0, Y0 ; \
	VPMADDWD     Y14, Y0, Y0 ; \
	VCVTDQ2PS    Y0, Y0 ; \
	VCVTPH2PS    woff(SI), X3 ; \
	VCVTPH2PS    xoff(DI), X4 ; \
	VMULPS       X4, X3, X3 ; \
	VBROADCASTSS X3, Y5 ; \
	VFMADD231PS  Y5, Y0, acc ; \
	VINSERTPS    $0x5D, X3, X3, X5 ; \
	VADDPS       Y5, macc, macc

// func dotQ4_1AVX2Asm(w, x *byte, nb int) float32
TEXT ·dotQ4_1AVX2Asm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y10, Y10, Y10
	VXORPS Y9, Y9, Y9
	CMPQ CX, $2
	JLT  tail

loop:
	Q4_1_AVX2_BLOCK(0, 0, Y12, Y10)
	Q4_1_AVX2_BLOCK(20, 36, Y13, Y9)
	ADDQ $40, SI
	ADDQ $72, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE  loop

tail:
	TESTQ CX, CX
	JEQ   done
	Q4_1_AVX2_BLOCK(0, 0, Y12, Y10)

done:
	VADDPS Y13, Y12, Y12
	VADDPS Y9, Y10, Y10
	VADDPS Y10, Y12, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// VPERMT2W word indexes gathering (d, m) of four weight blocks from 128
// bytes: blocks 0-3 from offset 0, blocks 4-7 from offset 32 (so as not to
// read past the eighth block); and (d, s) of four activation blocks.
DATA q4_1WIdxA<>+0(SB)/8, $0x000B000A00010000
DATA q4_1WIdxA<>+8(SB)/8, $0x001F001E00150014
GLOBL q4_1WIdxA<>(SB), RODATA|NOPTR, $64
DATA q4_1WIdxB<>+0(SB)/8, $0x0023002200190018
DATA q4_1WIdxB<>+8(SB)/8, $0x00370036002D002C
GLOBL q4_1WIdxB<>(SB), RODATA|NOPTR, $64
DATA q4_1XIdx<>+0(SB)/8, $0x0013001200010000
DATA q4_1XIdx<>+8(SB)/8, $0x0037003600250024
GLOBL q4_1XIdx<>(SB), RODATA|NOPTR, $64

// The integer sums of two blocks into Z2 (8 dwords per block), nibbles laid
// out as in Q4_0 (see q4_0_amd64.s). K1: dwords 8-15. Z20: qword shifts
// 0,0,4,4 per 256 bits. Z22: bytes 0x0F.
#define Q4_1_VNNI_PAIR(woff, xoff) \
	VBROADCASTI32X4 (woff+4)(SI), Z0 ; \
	VBROADCASTI32X4 (woff+24)(SI), K1, Z0 ; \
	VPSRLVQ      Z20, Z0, Z0 ; \
	VPANDD       Z22, Z0, Z0 ; \
	VMOVDQU      (xoff+4)(DI), Y1 ; \
	VINSERTI64X4 $1, (xoff+40)(DI), Z1, Z1 ; \
	VPXORD       Z2, Z2, Z2 ; \
	VPDPBUSD     Z1, Z0, Z2 ; \
	VCVTDQ2PS    Z2, Z2

// A pair whose d·d_x are lanes i and i+2 of scales; idx spreads them.
#define Q4_1_VNNI_PAIR8(woff, xoff, scales, idx, acc) \
	Q4_1_VNNI_PAIR(woff, xoff) ; \
	VPERMPS      scales, idx, Z5 ; \
	VFMADD231PS  Z5, Z2, acc

// (d·d_x, m·s) of four blocks into ydst: weight blocks at woff with index
// widx, activation blocks at xoff.
#define Q4_1_SCALES4(woff, widx, xoff, zd, xd, yd, zt, xt, yt) \
	VMOVDQU64 woff(SI), zd ; \
	VPERMT2W  (woff+64)(SI), widx, zd ; \
	VCVTPH2PS xd, yd ; \
	VMOVDQU64 xoff(DI), zt ; \
	VPERMT2W  (xoff+64)(DI), Z30, zt ; \
	VCVTPH2PS xt, yt ; \
	VMULPS    yt, yd, yd ; \
	VADDPS    yd, Y18, Y18

// func dotQ4_1VNNIAsm(w, x *byte, nb int) float32
TEXT ·dotQ4_1VNNIAsm(SB), NOSPLIT, $0-28
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
	// Z24: dword index 0 in lanes 0-7, 2 in lanes 8-15; Z25: 4 and 6.
	MOVL $2, AX
	VPXORD Z24, Z24, Z24
	VPBROADCASTD AX, K1, Z24
	MOVL $4, AX
	VPBROADCASTD AX, Z25
	VPADDD Z24, Z25, Z25
	VMOVDQU64 q4_1WIdxA<>(SB), Z28
	VMOVDQU64 q4_1WIdxB<>(SB), Z29
	VMOVDQU64 q4_1XIdx<>(SB), Z30
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	CMPQ CX, $8
	JLT  pair

loop8:
	Q4_1_SCALES4(0, Z28, 0, Z6, X6, Y6, Z8, X8, Y8)
	Q4_1_SCALES4(32, Z29, 144, Z7, X7, Y7, Z9, X9, Y9)
	Q4_1_VNNI_PAIR8(0, 0, Z6, Z24, Z16)
	Q4_1_VNNI_PAIR8(40, 72, Z6, Z25, Z17)
	Q4_1_VNNI_PAIR8(80, 144, Z7, Z24, Z16)
	Q4_1_VNNI_PAIR8(120, 216, Z7, Z25, Z17)
	ADDQ $160, SI
	ADDQ $288, DI
	SUBQ $8, CX
	CMPQ CX, $8
	JGE  loop8

pair:
	CMPQ CX, $2
	JLT  single
	Q4_1_VNNI_PAIR(0, 0)
	VCVTPH2PS   (SI), X4
	VCVTPH2PS   20(SI), X5
	VCVTPH2PS   (DI), X6
	VCVTPH2PS   36(DI), X7
	VMULPS      X6, X4, X4
	VMULPS      X7, X5, X5
	VUNPCKLPD   X5, X4, X4
	VADDPS      Y4, Y18, Y18
	VPERMPS     Z4, Z24, Z4
	VFMADD231PS Z4, Z2, Z16
	ADDQ $40, SI
	ADDQ $72, DI
	SUBQ $2, CX
	JMP  pair

single:
	VADDPS Z17, Z16, Z16
	VEXTRACTF64X4 $1, Z16, Y1
	VADDPS Y1, Y16, Y16
	TESTQ CX, CX
	JEQ   done
	VMOVDQU      4(SI), X0
	VPSRLW       $4, X0, X1
	VINSERTI128  $1, X1, Y0, Y0
	VPANDD       Y22, Y0, Y0
	VPXORD       Y2, Y2, Y2
	VPDPBUSD     4(DI), Y0, Y2
	VCVTDQ2PS    Y2, Y2
	VCVTPH2PS    (SI), X4
	VCVTPH2PS    (DI), X6
	VMULPS       X6, X4, X4
	VINSERTPS    $0x5D, X4, X4, X5
	VADDPS       Y5, Y18, Y18
	VBROADCASTSS X4, Y4
	VFMADD231PS  Y4, Y2, Y16

done:
	// Lanes 1, 3, 5, 7 of Y18 hold m·s sums; VMOVSHDUP doubles each into
	// the even lane below, so half of its sum is theirs.
	VMOVSHDUP    Y18, Y1
	MOVL         $0x3F000000, AX
	VMOVD        AX, X2
	VBROADCASTSS X2, Y2
	VFMADD231PS  Y2, Y1, Y16
	VMOVAPS      Y16, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET
