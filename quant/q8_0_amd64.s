//go:build amd64 && !purego

#include "textflag.h"

// Block layout (34 bytes): fp16 d at 0, int8 qs[32] at 2.

// Sum of one block into the float accumulator acc (a Y register):
// VPMADDUBSW multiplies unsigned by signed bytes, so the weights go in as
// |w| and the activations take the weights' signs. Pairs stay below 2^15
// because |w| <= 128 and |y| <= 127.
#define Q8_0_AVX2_BLOCK(off, acc) \
	VMOVDQU    (off+2)(SI), Y0 ; \
	VMOVDQU    (off+2)(DI), Y1 ; \
	VPSIGNB    Y0, Y0, Y2 ; \
	VPSIGNB    Y0, Y1, Y1 ; \
	VPMADDUBSW Y1, Y2, Y2 ; \
	VPMADDWD   Y14, Y2, Y2 ; \
	VCVTDQ2PS  Y2, Y2 ; \
	VCVTPH2PS  off(SI), X3 ; \
	VCVTPH2PS  off(DI), X4 ; \
	VMULSS     X4, X3, X3 ; \
	VBROADCASTSS X3, Y3 ; \
	VFMADD231PS Y3, Y2, acc

// Horizontal sum of Y0 into X0.
#define HSUM_Y0 \
	VEXTRACTF128 $1, Y0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVHLPS   X0, X0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVSHDUP  X0, X1 ; \
	VADDSS     X1, X0, X0

// func dotQ8_0AVX2Asm(w, x *byte, nb int) float32
TEXT ·dotQ8_0AVX2Asm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	CMPQ CX, $2
	JLT  tail

loop:
	Q8_0_AVX2_BLOCK(0, Y12)
	Q8_0_AVX2_BLOCK(34, Y13)
	ADDQ $68, SI
	ADDQ $68, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE  loop

tail:
	TESTQ CX, CX
	JEQ   done
	Q8_0_AVX2_BLOCK(0, Y12)

done:
	VADDPS Y13, Y12, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Word indexes for VPERMT2W that pick the fp16 scales of four 34-byte blocks
// out of 128 bytes.
DATA q8_0Idx<>+0(SB)/8, $0x0033002200110000
GLOBL q8_0Idx<>(SB), RODATA|NOPTR, $64

// Two blocks per 512-bit register. VPDPBUSD multiplies unsigned by signed
// bytes; rather than the sign trick it is fed w+128 (w XOR 0x80) and the
// excess 128·Σy is subtracted, which is exact for every int8 input. The
// pair's integer sums end in Z2, 8 dwords per block. Z20: bytes 0x80.
#define Q8_0_VNNI_PAIR(off) \
	VMOVDQU      (off+2)(SI), Y0 ; \
	VINSERTI64X4 $1, (off+36)(SI), Z0, Z0 ; \
	VMOVDQU      (off+2)(DI), Y1 ; \
	VINSERTI64X4 $1, (off+36)(DI), Z1, Z1 ; \
	VPXORD       Z20, Z0, Z0 ; \
	VPXORD       Z2, Z2, Z2 ; \
	VPDPBUSD     Z1, Z0, Z2 ; \
	VPXORD       Z3, Z3, Z3 ; \
	VPDPBUSD     Z1, Z20, Z3 ; \
	VPSUBD       Z3, Z2, Z2 ; \
	VCVTDQ2PS    Z2, Z2

// A pair whose scales are lanes i and i+1 of Z4; idx spreads them over the
// pair's two halves.
#define Q8_0_VNNI_PAIR8(off, idx, acc) \
	Q8_0_VNNI_PAIR(off) ; \
	VPERMPS      Z4, idx, Z5 ; \
	VFMADD231PS  Z5, Z2, acc

// The fp16 scales of the eight blocks at base, as float32 in Y-register dst.
// Z30: q8_0Idx. zd, xd, yd and zt, xt name two registers.
#define Q8_0_SCALES8(base, zd, xd, yd, zt, xt) \
	VMOVDQU64   (base), zd ; \
	VPERMT2W    64(base), Z30, zd ; \
	VMOVDQU64   136(base), zt ; \
	VPERMT2W    200(base), Z30, zt ; \
	VPUNPCKLQDQ xt, xd, xd ; \
	VCVTPH2PS   xd, yd

// func dotQ8_0VNNIAsm(w, x *byte, nb int) float32
TEXT ·dotQ8_0VNNIAsm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z20
	MOVL $0xFF00, AX
	KMOVW AX, K1
	// Z24-Z27: dword indexes 2p in lanes 0-7 and 2p+1 in lanes 8-15.
	MOVL $1, AX
	VPXORD Z24, Z24, Z24
	VPBROADCASTD AX, K1, Z24
	MOVL $2, AX
	VPBROADCASTD AX, Z28
	VPADDD Z28, Z24, Z25
	VPADDD Z28, Z25, Z26
	VPADDD Z28, Z26, Z27
	VMOVDQU64 q8_0Idx<>(SB), Z30
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	CMPQ CX, $8
	JLT  pair

loop8:
	Q8_0_SCALES8(SI, Z6, X6, Y6, Z8, X8)
	Q8_0_SCALES8(DI, Z7, X7, Y7, Z9, X9)
	VMULPS Y7, Y6, Y4
	Q8_0_VNNI_PAIR8(0, Z24, Z16)
	Q8_0_VNNI_PAIR8(68, Z25, Z17)
	Q8_0_VNNI_PAIR8(136, Z26, Z16)
	Q8_0_VNNI_PAIR8(204, Z27, Z17)
	ADDQ $272, SI
	ADDQ $272, DI
	SUBQ $8, CX
	CMPQ CX, $8
	JGE  loop8

pair:
	CMPQ CX, $2
	JLT  single
	Q8_0_VNNI_PAIR(0)
	VCVTPH2PS    (SI), X4
	VCVTPH2PS    34(SI), X5
	VCVTPH2PS    (DI), X6
	VCVTPH2PS    34(DI), X7
	VMULSS       X6, X4, X4
	VMULSS       X7, X5, X5
	VINSERTPS    $0x10, X5, X4, X4
	VPERMPS      Z4, Z24, Z4
	VFMADD231PS  Z4, Z2, Z16
	ADDQ $68, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP  pair

single:
	VADDPS Z17, Z16, Z16
	VEXTRACTF64X4 $1, Z16, Y1
	VADDPS Y1, Y16, Y16
	TESTQ CX, CX
	JEQ   done
	VMOVDQU   2(SI), Y0
	VPXORD    Y20, Y0, Y0
	VPXORD    Y2, Y2, Y2
	VPDPBUSD  2(DI), Y0, Y2
	VPXORD    Y3, Y3, Y3
	VPDPBUSD  2(DI), Y20, Y3
	VPSUBD    Y3, Y2, Y2
	VCVTDQ2PS Y2, Y2
	VCVTPH2PS (SI), X4
	VCVTPH2PS (DI), X6
	VMULSS    X6, X4, X4
	VBROADCASTSS X4, Y4
	VFMADD231PS Y4, Y2, Y16

done:
	VMOVAPS Y16, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET
