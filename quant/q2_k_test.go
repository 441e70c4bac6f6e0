package quant

import (
	"encoding/binary"
	"math"
	"testing"
)

// refElemQ2_K decodes element j of a Q2_K block from the layout as ggml's
// header describes it: 16 scale bytes, 64 quant bytes, d, dmin.
func refElemQ2_K(blk []byte, j int) (v, mag float64) {
	d := float64(FP16ToFP32(binary.LittleEndian.Uint16(blk[80:])))
	dmin := float64(FP16ToFP32(binary.LittleEndian.Uint16(blk[82:])))
	g := j / 16
	sc, m := float64(blk[g]&15), float64(blk[g]>>4)
	half, r := j/128, j%128
	q := float64(blk[16+32*half+r%32] >> (2 * (r / 32)) & 3)
	a := d * sc * q
	c := dmin * m
	return a - c, math.Abs(a) + math.Abs(c)
}

// fillQ2_K makes a random Q2_K block of the given kind; b holds random
// bytes on entry.
func fillQ2_K(b []byte, kind blockKind, scale func(int), setCodes func(lo, hi int)) {
	if kind == kindMaxCodes {
		for i := 0; i < 16; i++ {
			b[i] = 0xff
		}
	}
	setCodes(16, 80)
	scale(80)
	scale(82)
}

// TestQ2_KLayout decodes a block built by hand, element by element.
func TestQ2_KLayout(t *testing.T) {
	b := make([]byte, q2_KBytes)
	put16(b[80:], FP32ToFP16(0.5))   // d
	put16(b[82:], FP32ToFP16(0.125)) // dmin
	for g := 0; g < 16; g++ {
		b[g] = byte(g) | byte(15-g)<<4 // scale g, min 15-g
	}
	// Element 128h + 32j + l lives in bits 2j of byte 16 + 32h + l.
	b[16+5] = 3 << 2      // element 32+5 = 37: q=3
	b[16+32+20] = 2 << 6  // element 128+96+20 = 244: q=2
	b[16+31] = 1 | 1<<4   // elements 31 (q=1) and 64+31=95 (q=1)
	b[16+32+0] = 3 | 3<<2 // elements 128 (q=3) and 160 (q=3)
	want := map[int]float32{
		0:   0 - 0.125*15,       // group 0: scale 0, min 15
		37:  0.5*2*3 - 0.125*13, // group 2
		31:  0.5*1*1 - 0.125*14, // group 1
		95:  0.5*5*1 - 0.125*10, // group 5
		128: 0.5*8*3 - 0.125*7,  // group 8
		160: 0.5*10*3 - 0.125*5, // group 10
		244: 0.5*15*2 - 0.125*0, // group 15
		255: 0.5*15*0 - 0,
	}
	got := mustDequantize(t, Q2_K, b, QKK)
	for i, w := range want {
		if got[i] != w {
			t.Errorf("element %d: %g, want %g", i, got[i], w)
		}
	}
}

// TestQ2_KExactGrid: values a Q2_K block can represent exactly, with both
// extreme codes in every group and the largest scale and min code in use,
// survive a round trip bit for bit.
func TestQ2_KExactGrid(t *testing.T) {
	const d, dmin = 0.0625, 0.03125
	r := newRand(21)
	const nb = 8
	x := make([]float32, nb*QKK)
	for blk := 0; blk < nb; blk++ {
		for g := 0; g < 16; g++ {
			sc := 1 + r.IntN(15)
			m := r.IntN(16)
			if g == 3 {
				sc = 15
			}
			if g == 7 {
				m = 15
			}
			xs := x[blk*QKK+16*g : blk*QKK+16*g+16]
			for i := range xs {
				xs[i] = float32(d*float64(sc)*float64(r.IntN(4)) - dmin*float64(m))
			}
			xs[r.IntN(8)] = float32(-dmin * float64(m))
			xs[8+r.IntN(8)] = float32(d*float64(sc)*3 - dmin*float64(m))
		}
	}
	checkExactRoundTrip(t, Q2_K, x)
}

// TestQ2_KKnownBytes pins the quantizer's output for a fixed input to the
// bytes llama-quantize (llama.cpp d32676d77, no importance matrix) writes
// for it.
func TestQ2_KKnownBytes(t *testing.T) {
	checkKnownBytes(t, Q2_K)
}
