//go:build amd64 && !purego

#include "textflag.h"

// Weight block (18 bytes): fp16 d at 0, 16 bytes of nibbles at 2.
// Activation block (34 bytes): fp16 d at 0, int8 qs[32] at 2.
//
// Σ(q-8)·y is computed as Σq·y - Σ8·y: the nibbles q stay unsigned, which
// is what VPMADDUBSW and VPDPBUSD want, and no sign trick is needed.

// One block into acc. Y11: bytes 0x0F; Y10: bytes 8; Y14: words 1.
#define Q4_0_AVX2_BLOCK(woff, xoff, acc) \
	VMOVDQU      (woff+2)(SI), X0 ; \
	VPSRLW       $4, X0, X1 ; \
	VINSERTI128  $1, X1, Y0, Y0 ; \
	VPAND        Y11, Y0, Y0 ; \
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

// Horizontal sum of Y0 into X0.
#define HSUM_Y0 \
	VEXTRACTF128 $1, Y0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVHLPS   X0, X0, X1 ; \
	VADDPS     X1, X0, X0 ; \
	VMOVSHDUP  X0, X1 ; \
	VADDSS     X1, X0, X0

// Four halves at base+off, base+off+stride, ... packed into the 64-bit dst.
#define GATHER4(base, off, stride, dst, t) \
	MOVWQZX off(base), dst ; \
	MOVWQZX (off+stride)(base), t ; \
	SHLQ    $16, t ; \
	ORQ     t, dst ; \
	MOVWQZX (off+2*stride)(base), t ; \
	SHLQ    $32, t ; \
	ORQ     t, dst ; \
	MOVWQZX (off+3*stride)(base), t ; \
	SHLQ    $48, t ; \
	ORQ     t, dst

// One block of a run of eight whose scales are at 0(SP): the integer part
// as in Q4_0_AVX2_BLOCK, the scale a broadcast load.
#define Q4_0_AVX2_BLOCK8(woff, xoff, i, acc) \
	VMOVDQU      (woff+2)(SI), X0 ; \
	VPSRLW       $4, X0, X1 ; \
	VINSERTI128  $1, X1, Y0, Y0 ; \
	VPAND        Y11, Y0, Y0 ; \
	VMOVDQU      (xoff+2)(DI), Y1 ; \
	VPMADDUBSW   Y1, Y0, Y0 ; \
	VPMADDUBSW   Y1, Y10, Y2 ; \
	VPSUBW       Y2, Y0, Y0 ; \
	VPMADDWD     Y14, Y0, Y0 ; \
	VCVTDQ2PS    Y0, Y0 ; \
	VBROADCASTSS (4*i)(SP), Y3 ; \
	VFMADD231PS  Y3, Y0, acc

// func dotQ4_0AVX2Asm(w, x *byte, nb int) float32
// Runs of eight blocks take their sixteen fp16 scales through integer
// registers into two VCVTPH2PS, and park the eight products on the stack,
// which is cheaper than converting and broadcasting each block's pair.
TEXT ·dotQ4_0AVX2Asm(SB), NOSPLIT, $32-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x0F0F0F0F, AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11
	MOVL $0x08080808, AX
	VMOVD AX, X10
	VPBROADCASTD X10, Y10
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	CMPQ CX, $8
	JLT  loop2

loop8:
	GATHER4(SI, 0, 18, AX, BX)
	GATHER4(SI, 72, 18, DX, R8)
	VMOVQ     AX, X4
	VPINSRQ   $1, DX, X4, X4
	VCVTPH2PS X4, Y4
	GATHER4(DI, 0, 34, R9, R10)
	GATHER4(DI, 136, 34, R11, R12)
	VMOVQ     R9, X5
	VPINSRQ   $1, R11, X5, X5
	VCVTPH2PS X5, Y5
	VMULPS    Y5, Y4, Y4
	VMOVUPS   Y4, (SP)
	Q4_0_AVX2_BLOCK8(0, 0, 0, Y12)
	Q4_0_AVX2_BLOCK8(18, 34, 1, Y13)
	Q4_0_AVX2_BLOCK8(36, 68, 2, Y12)
	Q4_0_AVX2_BLOCK8(54, 102, 3, Y13)
	Q4_0_AVX2_BLOCK8(72, 136, 4, Y12)
	Q4_0_AVX2_BLOCK8(90, 170, 5, Y13)
	Q4_0_AVX2_BLOCK8(108, 204, 6, Y12)
	Q4_0_AVX2_BLOCK8(126, 238, 7, Y13)
	ADDQ $144, SI
	ADDQ $272, DI
	SUBQ $8, CX
	CMPQ CX, $8
	JGE  loop8

loop2:
	CMPQ CX, $2
	JLT  tail
	Q4_0_AVX2_BLOCK(0, 0, Y12)
	Q4_0_AVX2_BLOCK(18, 34, Y13)
	ADDQ $36, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP  loop2

tail:
	TESTQ CX, CX
	JEQ   done
	Q4_0_AVX2_BLOCK(0, 0, Y12)

done:
	VADDPS Y13, Y12, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Word indexes for VPERMT2W that pick the fp16 scales of eight blocks out
// of 128 bytes: every 9th word for the 18-byte weight blocks, every 17th for
// the 34-byte activation blocks (four blocks per 128 bytes).
DATA q4_0WIdx<>+0(SB)/8, $0x001B001200090000
DATA q4_0WIdx<>+8(SB)/8, $0x003F0036002D0024
GLOBL q4_0WIdx<>(SB), RODATA|NOPTR, $64
DATA q4_0XIdx<>+0(SB)/8, $0x0033002200110000
GLOBL q4_0XIdx<>(SB), RODATA|NOPTR, $64

// VPERMB indexes for the VBMI kernel: from 64 bytes starting at a pair's
// first nibble byte, the 16 nibble bytes of its first block in 128-bit lanes
// 0-1 and those of its second block (18 bytes on) in lanes 2-3; the B
// variant serves the last pair of eight, loaded 30 bytes earlier so as not
// to read past the eighth block.
DATA q4_0BIdxA<>+0(SB)/8, $0x0706050403020100
DATA q4_0BIdxA<>+8(SB)/8, $0x0F0E0D0C0B0A0908
DATA q4_0BIdxA<>+16(SB)/8, $0x0706050403020100
DATA q4_0BIdxA<>+24(SB)/8, $0x0F0E0D0C0B0A0908
DATA q4_0BIdxA<>+32(SB)/8, $0x1918171615141312
DATA q4_0BIdxA<>+40(SB)/8, $0x21201F1E1D1C1B1A
DATA q4_0BIdxA<>+48(SB)/8, $0x1918171615141312
DATA q4_0BIdxA<>+56(SB)/8, $0x21201F1E1D1C1B1A
GLOBL q4_0BIdxA<>(SB), RODATA|NOPTR, $64
DATA q4_0BIdxB<>+0(SB)/8, $0x2524232221201F1E
DATA q4_0BIdxB<>+8(SB)/8, $0x2D2C2B2A29282726
DATA q4_0BIdxB<>+16(SB)/8, $0x2524232221201F1E
DATA q4_0BIdxB<>+24(SB)/8, $0x2D2C2B2A29282726
DATA q4_0BIdxB<>+32(SB)/8, $0x3736353433323130
DATA q4_0BIdxB<>+40(SB)/8, $0x3F3E3D3C3B3A3938
DATA q4_0BIdxB<>+48(SB)/8, $0x3736353433323130
DATA q4_0BIdxB<>+56(SB)/8, $0x3F3E3D3C3B3A3938
GLOBL q4_0BIdxB<>(SB), RODATA|NOPTR, $64

// Two blocks per 512-bit register: the nibble bytes of block 0 go to 128-bit
// lanes 0 and 1, those of block 1 to lanes 2 and 3 (a merge-masked
// broadcast), and a per-lane shift of 0 or 4 followed by &0x0F leaves the
// low nibbles in lanes 0 and 2 and the high ones in lanes 1 and 3, which is
// the order of the two activation blocks loaded side by side. The result is
// the pair's integer sums, in Z2, 8 dwords per block.
// K1: dwords 8-15. Z20: qword shift counts 0,0,4,4 per 256 bits. Z22: bytes
// 0x0F. Z23: bytes 8.
#define Q4_0_VNNI_PAIR(woff, xoff) \
	VBROADCASTI32X4 (woff+2)(SI), Z0 ; \
	VBROADCASTI32X4 (woff+20)(SI), K1, Z0 ; \
	VPSRLVQ      Z20, Z0, Z0 ; \
	VPANDD       Z22, Z0, Z0 ; \
	VMOVDQU      (xoff+2)(DI), Y1 ; \
	VINSERTI64X4 $1, (xoff+36)(DI), Z1, Z1 ; \
	VPXORD       Z2, Z2, Z2 ; \
	VPDPBUSD     Z1, Z0, Z2 ; \
	VPXORD       Z3, Z3, Z3 ; \
	VPDPBUSD     Z1, Z23, Z3 ; \
	VPSUBD       Z3, Z2, Z2 ; \
	VCVTDQ2PS    Z2, Z2

// A pair whose two scales are lanes i and i+1 of Z4; idx spreads them.
#define Q4_0_VNNI_PAIR8(woff, xoff, idx, acc) \
	Q4_0_VNNI_PAIR(woff, xoff) ; \
	VPERMPS      Z4, idx, Z5 ; \
	VFMADD231PS  Z5, Z2, acc

// The same pair for CPUs with VBMI and GFNI: one 64-byte load and VPERMB
// place both blocks' nibble bytes, and VGF2P8AFFINEQB with a bit matrix per
// qword (Z19) keeps the low nibbles in lanes 0 and 2 and moves the high ones
// down in lanes 1 and 3, in place of a shift and a mask.
#define Q4_0_VBMI_PAIR8(wload, bidx, xoff, idx, acc) \
	VPERMB       wload(SI), bidx, Z0 ; \
	VGF2P8AFFINEQB $0, Z19, Z0, Z0 ; \
	VMOVDQU      (xoff+2)(DI), Y1 ; \
	VINSERTI64X4 $1, (xoff+36)(DI), Z1, Z1 ; \
	VPXORD       Z2, Z2, Z2 ; \
	VPDPBUSD     Z1, Z0, Z2 ; \
	VPXORD       Z3, Z3, Z3 ; \
	VPDPBUSD     Z1, Z23, Z3 ; \
	VPSUBD       Z3, Z2, Z2 ; \
	VCVTDQ2PS    Z2, Z2 ; \
	VPERMPS      Z4, idx, Z5 ; \
	VFMADD231PS  Z5, Z2, acc

// func dotQ4_0VNNIAsm(w, x *byte, nb int) float32
TEXT ·dotQ4_0VNNIAsm(SB), NOSPLIT, $0-28
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
	MOVL $0x08080808, AX
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
	VMOVDQU64 q4_0WIdx<>(SB), Z29
	VMOVDQU64 q4_0XIdx<>(SB), Z30
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	CMPQ CX, $8
	JLT  pair

loop8:
	VMOVDQU64   (SI), Z6
	VPERMT2W    64(SI), Z29, Z6
	VCVTPH2PS   X6, Y6
	VMOVDQU64   (DI), Z7
	VPERMT2W    64(DI), Z30, Z7
	VMOVDQU64   136(DI), Z8
	VPERMT2W    200(DI), Z30, Z8
	VPUNPCKLQDQ X8, X7, X7
	VCVTPH2PS   X7, Y7
	VMULPS      Y7, Y6, Y4
	Q4_0_VNNI_PAIR8(0, 0, Z24, Z16)
	Q4_0_VNNI_PAIR8(36, 68, Z25, Z17)
	Q4_0_VNNI_PAIR8(72, 136, Z26, Z16)
	Q4_0_VNNI_PAIR8(108, 204, Z27, Z17)
	ADDQ $144, SI
	ADDQ $272, DI
	SUBQ $8, CX
	CMPQ CX, $8
	JGE  loop8

pair:
	CMPQ CX, $2
	JLT  single
	Q4_0_VNNI_PAIR(0, 0)
	VCVTPH2PS    (SI), X4
	VCVTPH2PS    18(SI), X5
	VCVTPH2PS    (DI), X6
	VCVTPH2PS    34(DI), X7
	VMULSS       X6, X4, X4
	VMULSS       X7, X5, X5
	VINSERTPS    $0x10, X5, X4, X4
	VPERMPS      Z4, Z24, Z4
	VFMADD231PS  Z4, Z2, Z16
	ADDQ $36, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP  pair

single:
	VADDPS Z17, Z16, Z16
	VEXTRACTF64X4 $1, Z16, Y1
	VADDPS Y1, Y16, Y16
	TESTQ CX, CX
	JEQ   done
	VMOVDQU     2(SI), X0
	VPSRLW      $4, X0, X1
	VINSERTI128 $1, X1, Y0, Y0
	VPANDD      Y22, Y0, Y0
	VPXORD      Y2, Y2, Y2
	VPDPBUSD    2(DI), Y0, Y2
	VPXORD      Y3, Y3, Y3
	VPDPBUSD    2(DI), Y23, Y3
	VPSUBD      Y3, Y2, Y2
	VCVTDQ2PS   Y2, Y2
	VCVTPH2PS   (SI), X4
	VCVTPH2PS   (DI), X6
	VMULSS      X6, X4, X4
	VBROADCASTSS X4, Y4
	VFMADD231PS Y4, Y2, Y16

done:
	VMOVAPS Y16, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ4_0VBMIAsm(w, x *byte, nb int) float32
TEXT ·dotQ4_0VBMIAsm(SB), NOSPLIT, $0-28
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
	MOVL $0x08080808, AX
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
	VMOVDQU64 q4_0WIdx<>(SB), Z29
	VMOVDQU64 q4_0XIdx<>(SB), Z30
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	// Z19: GF(2) bit matrices, identity on bits 0-3 in lanes 0 and 2, bits
	// 4-7 to 0-3 in lanes 1 and 3.
	MOVQ $0x0102040800000000, AX
	VPBROADCASTQ AX, Z19
	MOVQ $0x1020408000000000, AX
	VPBROADCASTQ AX, K2, Z19
	VMOVDQU64 q4_0BIdxA<>(SB), Z12
	VMOVDQU64 q4_0BIdxB<>(SB), Z13
	CMPQ CX, $8
	JLT  pair

loop8:
	VMOVDQU64   (SI), Z6
	VPERMT2W    64(SI), Z29, Z6
	VCVTPH2PS   X6, Y6
	VMOVDQU64   (DI), Z7
	VPERMT2W    64(DI), Z30, Z7
	VMOVDQU64   136(DI), Z8
	VPERMT2W    200(DI), Z30, Z8
	VPUNPCKLQDQ X8, X7, X7
	VCVTPH2PS   X7, Y7
	VMULPS      Y7, Y6, Y4
	Q4_0_VBMI_PAIR8(2, Z12, 0, Z24, Z16)
	Q4_0_VBMI_PAIR8(38, Z12, 68, Z25, Z17)
	Q4_0_VBMI_PAIR8(74, Z12, 136, Z26, Z16)
	Q4_0_VBMI_PAIR8(80, Z13, 204, Z27, Z17)
	ADDQ $144, SI
	ADDQ $272, DI
	SUBQ $8, CX
	CMPQ CX, $8
	JGE  loop8

pair:
	CMPQ CX, $2
	JLT  single
	Q4_0_VNNI_PAIR(0, 0)
	VCVTPH2PS    (SI), X4
	VCVTPH2PS    18(SI), X5
	VCVTPH2PS    (DI), X6
	VCVTPH2PS    34(DI), X7
	VMULSS       X6, X4, X4
	VMULSS       X7, X5, X5
	VINSERTPS    $0x10, X5, X4, X4
	VPERMPS      Z4, Z24, Z4
	VFMADD231PS  Z4, Z2, Z16
	ADDQ $36, SI
	ADDQ $68, DI
	SUBQ $2, CX
	JMP  pair

single:
	VADDPS Z17, Z16, Z16
	VEXTRACTF64X4 $1, Z16, Y1
	VADDPS Y1, Y16, Y16
	TESTQ CX, CX
	JEQ   done
	VMOVDQU     2(SI), X0
	VPSRLW      $4, X0, X1
	VINSERTI128 $1, X1, Y0, Y0
	VPANDD      Y22, Y0, Y0
	VPXORD      Y2, Y2, Y2
	VPDPBUSD    2(DI), Y0, Y2
	VPXORD      Y3, Y3, Y3
	VPDPBUSD    2(DI), Y23, Y3
	VPSUBD      Y3, Y2, Y2
	VCVTDQ2PS   Y2, Y2
	VCVTPH2PS   (SI), X4
	VCVTPH2PS   (DI), X6
	VMULSS      X6, X4, X4
	VBROADCASTSS X4, Y4
	VFMADD231PS Y4, Y2, Y16

done:
	VMOVAPS Y16, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET
