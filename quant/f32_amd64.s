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

// func dotF32AVX2Asm(w, x *byte, n int) float32
// Eight accumulators hide the FMA latency; the last n%8 elements are done
// one at a time after the vector sum.
TEXT ·dotF32AVX2Asm(SB), NOSPLIT, $0-28
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
	VMOVUPS     (SI), Y8
	VMOVUPS     32(SI), Y9
	VMOVUPS     64(SI), Y10
	VMOVUPS     96(SI), Y11
	VFMADD231PS (DI), Y8, Y0
	VFMADD231PS 32(DI), Y9, Y1
	VFMADD231PS 64(DI), Y10, Y2
	VFMADD231PS 96(DI), Y11, Y3
	VMOVUPS     128(SI), Y8
	VMOVUPS     160(SI), Y9
	VMOVUPS     192(SI), Y10
	VMOVUPS     224(SI), Y11
	VFMADD231PS 128(DI), Y8, Y4
	VFMADD231PS 160(DI), Y9, Y5
	VFMADD231PS 192(DI), Y10, Y6
	VFMADD231PS 224(DI), Y11, Y7
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $64, CX
	CMPQ CX, $64
	JGE  loop64

loop8:
	CMPQ CX, $8
	JLT  reduce
	VMOVUPS     (SI), Y8
	VFMADD231PS (DI), Y8, Y0
	ADDQ $32, SI
	ADDQ $32, DI
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
	VMOVSS      (SI), X8
	VFMADD231SS (DI), X8, X0
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JNZ  loop1

done:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotF32AVX512Asm(w, x *byte, n int) float32
// Four 512-bit accumulators; the last n%16 elements are loaded under a mask,
// which never touches memory past the end.
TEXT ·dotF32AVX512Asm(SB), NOSPLIT, $0-28
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
	VMOVUPS     (SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VFMADD231PS (DI), Z4, Z0
	VFMADD231PS 64(DI), Z5, Z1
	VFMADD231PS 128(DI), Z6, Z2
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $64, CX
	CMPQ CX, $64
	JGE  loop64

loop16:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS     (SI), Z4
	VFMADD231PS (DI), Z4, Z0
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop16

tail:
	TESTQ CX, CX
	JEQ   reduce
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z (SI), K1, Z4
	VMOVUPS.Z (DI), K1, Z5
	VFMADD231PS Z5, Z4, Z1

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
