//go:build amd64 && !purego

#include "textflag.h"

// Horizontal sum of Y0 into X0.
#define HSUM_Y0 \
	VEXTRACTF128 $1, Y0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVHLPS   X0, X0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVSHDUP  X0, X1 ; \
	VADDSS     X1, X0, X0

// 8 halves from each row at offset off, converted and multiplied into acc.
#define F16_AVX2_STEP(off, acc) \
	VCVTPH2PS   off(SI), Y8 ; \
	VCVTPH2PS   off(DI), Y9 ; \
	VFMADD231PS Y9, Y8, acc

// func dotF16AVX2Asm(w, x *byte, n int) float32
// Both rows are widened to float32 (exactly) and multiplied in float32, as
// ggml_vec_dot_f16 does with F16C; the last n%8 elements are done one at a
// time after the vector sum.
TEXT ·dotF16AVX2Asm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	CMPQ CX, $64
	JLT  loop8

loop64:
	F16_AVX2_STEP(0, Y0)
	F16_AVX2_STEP(16, Y1)
	F16_AVX2_STEP(32, Y2)
	F16_AVX2_STEP(48, Y3)
	F16_AVX2_STEP(64, Y4)
	F16_AVX2_STEP(80, Y5)
	F16_AVX2_STEP(96, Y6)
	F16_AVX2_STEP(112, Y7)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $64, CX
	CMPQ CX, $64
	JGE  loop64

loop8:
	CMPQ CX, $8
	JLT  reduce
	F16_AVX2_STEP(0, Y0)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $8, CX
	JMP  loop8

reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y5, Y4, Y4
	VADDPS Y7, Y6, Y6
	VADDPS Y2, Y0, Y0
	VADDPS Y6, Y4, Y4
	VADDPS Y4, Y0, Y0
	HSUM_Y0
	TESTQ CX, CX
	JEQ   done

loop1:
	MOVWLZX     (SI), AX
	VMOVD       AX, X8
	VCVTPH2PS   X8, X8
	MOVWLZX     (DI), AX
	VMOVD       AX, X9
	VCVTPH2PS   X9, X9
	VFMADD231SS X9, X8, X0
	ADDQ $2, SI
	ADDQ $2, DI
	DECQ CX
	JNZ  loop1

done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// 16 halves from each row at offset off into acc.
#define F16_AVX512_STEP(off, acc) \
	VCVTPH2PS   off(SI), Z8 ; \
	VCVTPH2PS   off(DI), Z9 ; \
	VFMADD231PS Z9, Z8, acc

// func dotF16AVX512Asm(w, x *byte, n int) float32
// The last n%16 elements are loaded with a masked 16-bit move (which never
// touches memory past the end) and then converted.
TEXT ·dotF16AVX512Asm(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	CMPQ CX, $64
	JLT  loop16

loop64:
	F16_AVX512_STEP(0, Z0)
	F16_AVX512_STEP(32, Z1)
	F16_AVX512_STEP(64, Z2)
	F16_AVX512_STEP(96, Z3)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $64, CX
	CMPQ CX, $64
	JGE  loop64

loop16:
	CMPQ CX, $16
	JLT  tail
	F16_AVX512_STEP(0, Z0)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JMP  loop16

tail:
	TESTQ CX, CX
	JEQ   reduce
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVDQU16.Z (SI), K1, Y8
	VMOVDQU16.Z (DI), K1, Y9
	VCVTPH2PS   Y8, Z8
	VCVTPH2PS   Y9, Z9
	VFMADD231PS Z9, Z8, Z1

reduce:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS Y1, Y0, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET
