//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 encoders for the activation types, bit for bit the Go ones
// (quantQ8_0, quantQ8_K): the same float32 operations in the same order,
// with the vector forms of their roundings.

// func quantQ8_0AVX512(dst *byte, src *float32, nb int)
// Per block of 32: amax = max|x| (NaNs skipped: VMAXPS returns its second
// operand, the running maximum, when the first is NaN), d = amax/127 as
// fp16, q = saturate8(round-to-even(x·(127/amax))); id = 0 when amax = 0.
TEXT ·quantQ8_0AVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         nb+16(FP), CX
	MOVL         $0x7FFFFFFF, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x42FE0000, AX // 127.0
	VMOVD        AX, X30
	VXORPS       X29, X29, X29

loop:
	VMOVUPS      (SI), Z0
	VMOVUPS      64(SI), Z1
	VANDPS       Z31, Z0, Z2
	VANDPS       Z31, Z1, Z3
	VXORPS       Z4, Z4, Z4
	VMAXPS       Z4, Z2, Z4
	VMAXPS       Z4, Z3, Z4
	VEXTRACTF64X4 $1, Z4, Y5
	VMAXPS       Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0x4E, X4, X5
	VMAXPS       X5, X4, X4
	VPERMILPS    $0xB1, X4, X5
	VMAXPS       X5, X4, X4
	VDIVSS       X30, X4, X6
	VCVTPS2PH    $0, X6, X7
	VPEXTRW      $0, X7, AX
	MOVW         AX, (DI)
	VDIVSS       X4, X30, X8
	VBROADCASTSS X4, Z9
	VCMPPS       $4, Z29, Z9, K1
	VBROADCASTSS.Z X8, K1, Z8
	VMULPS       Z8, Z0, Z0
	VMULPS       Z8, Z1, Z1
	VCVTPS2DQ.RN_SAE Z0, Z0
	VCVTPS2DQ.RN_SAE Z1, Z1
	VPMOVSDB     Z0, X0
	VPMOVSDB     Z1, X1
	VMOVDQU      X0, 2(DI)
	VMOVDQU      X1, 18(DI)
	ADDQ         $128, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          loop
	VZEROUPPER
	RET

// Group i of 16 (its floats in z): q = int8(min(127, nearestInt(x·iscale))) with nearestInt
// done as ggml does, by adding 1.5·2^23 and keeping the low mantissa bits.
// Z16: iscale, Z17: 1.5·2^23, Z18: 0x7FFFFF, Z19: 0x400000, Z20: 127.
#define Q8K_GROUP(z, i) \
	VMULPS   Z16, z, Z21 ; \
	VADDPS   Z17, Z21, Z21 ; \
	VPANDD   Z18, Z21, Z21 ; \
	VPSUBD   Z19, Z21, Z21 ; \
	VPMINSD  Z20, Z21, Z21 ; \
	VPMOVDB  Z21, (4+16*i)(DI)

// The sums of the four groups of 16 quants at off (64 bytes) as words, two
// per group, in x, offset by 8·128 each: the bytes go in as q XOR 0x80
// (q+128 unsigned) to VPSADBW, which sums eight at a time into qwords.
#define Q8K_SUMS4(off, z, x) \
	VPXORD   off(DI), Z22, z ; \
	VPSADBW  Z23, z, z ; \
	VPMOVQW  z, x

// func quantQ8_KAVX512(dst *byte, src *float32, nb int)
// Per super-block of 256: the element of largest magnitude, the first one
// on ties, with its sign, is max; iscale = -127/max, d = 1/iscale, and the
// sixteen int16 sums of 16 quants follow the quants. An all-zero (or
// all-NaN) block is all zero bytes.
TEXT ·quantQ8_KAVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         nb+16(FP), CX
	MOVL         $0x7FFFFFFF, AX
	VPBROADCASTD AX, Z31
	MOVL         $0x4B400000, AX // 1.5·2^23
	VPBROADCASTD AX, Z17
	MOVL         $0x007FFFFF, AX
	VPBROADCASTD AX, Z18
	MOVL         $0x00400000, AX
	VPBROADCASTD AX, Z19
	MOVL         $127, AX
	VPBROADCASTD AX, Z20
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z22
	VPXORD       Z23, Z23, Z23
	MOVL         $0x08000800, AX // words 2048
	VPBROADCASTD AX, X24
	MOVL         $0xC2FE0000, AX // -127.0
	VMOVD        AX, X25
	MOVL         $0x3F800000, AX // 1.0
	VMOVD        AX, X26

block:
	VXORPS Z28, Z28, Z28
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	VMOVUPS 256(SI), Z4
	VMOVUPS 320(SI), Z5
	VMOVUPS 384(SI), Z6
	VMOVUPS 448(SI), Z7
	VMOVUPS 512(SI), Z8
	VMOVUPS 576(SI), Z9
	VMOVUPS 640(SI), Z10
	VMOVUPS 704(SI), Z11
	VMOVUPS 768(SI), Z12
	VMOVUPS 832(SI), Z13
	VMOVUPS 896(SI), Z14
	VMOVUPS 960(SI), Z15
	VANDPS  Z31, Z0, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z1, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z2, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z3, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z4, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z5, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z6, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z7, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z8, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z9, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z10, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z11, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z12, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z13, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z14, Z21
	VMAXPS  Z28, Z21, Z28
	VANDPS  Z31, Z15, Z21
	VMAXPS  Z28, Z21, Z28
	VEXTRACTF64X4 $1, Z28, Y21
	VMAXPS  Y21, Y28, Y28
	VEXTRACTF32X4 $1, Y28, X21
	VMAXPS  X21, X28, X28
	VPERMILPS $0x4E, X28, X21
	VMAXPS  X21, X28, X28
	VPERMILPS $0xB1, X28, X21
	VMAXPS  X21, X28, X28
	VBROADCASTSS X28, Z28
	VXORPS  X21, X21, X21
	VUCOMISS X21, X28
	JEQ     zero

	// The first element whose magnitude is amax.
	XORQ    BX, BX
find:
	VMOVUPS (SI)(BX*4), Z21
	VANDPS  Z31, Z21, Z21
	VCMPPS  $0, Z28, Z21, K1
	KMOVW   K1, AX
	TESTL   AX, AX
	JNZ     found
	ADDQ    $16, BX
	JMP     find
found:
	BSFL    AX, AX
	ADDQ    AX, BX
	VMOVSS  (SI)(BX*4), X21
	VDIVSS  X21, X25, X16
	VDIVSS  X16, X26, X21
	VMOVSS  X21, (DI)
	VBROADCASTSS X16, Z16
	Q8K_GROUP(Z0, 0)
	Q8K_GROUP(Z1, 1)
	Q8K_GROUP(Z2, 2)
	Q8K_GROUP(Z3, 3)
	Q8K_GROUP(Z4, 4)
	Q8K_GROUP(Z5, 5)
	Q8K_GROUP(Z6, 6)
	Q8K_GROUP(Z7, 7)
	Q8K_GROUP(Z8, 8)
	Q8K_GROUP(Z9, 9)
	Q8K_GROUP(Z10, 10)
	Q8K_GROUP(Z11, 11)
	Q8K_GROUP(Z12, 12)
	Q8K_GROUP(Z13, 13)
	Q8K_GROUP(Z14, 14)
	Q8K_GROUP(Z15, 15)
	Q8K_SUMS4(4, Z0, X0)
	Q8K_SUMS4(68, Z1, X1)
	Q8K_SUMS4(132, Z2, X2)
	Q8K_SUMS4(196, Z3, X3)
	VPHADDW X1, X0, X0
	VPHADDW X3, X2, X2
	VPSUBW  X24, X0, X0
	VPSUBW  X24, X2, X2
	VMOVDQU X0, 260(DI)
	VMOVDQU X2, 276(DI)
	JMP     next

zero:
	VPXORD    Z21, Z21, Z21
	VMOVDQU64 Z21, (DI)
	VMOVDQU64 Z21, 64(DI)
	VMOVDQU64 Z21, 128(DI)
	VMOVDQU64 Z21, 192(DI)
	VMOVDQU64 Y21, 256(DI)
	MOVL      $0, 288(DI)

next:
	ADDQ $1024, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  block
	VZEROUPPER
	RET
