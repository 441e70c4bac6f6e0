package quant

import (
	"encoding/binary"
	"math"
	"testing"
)

// refElemQ3_K decodes element j of a Q3_K block from the layout as ggml's
// header describes it: hmask, qs, 12 bytes of 6-bit scales, d.
func refElemQ3_K(blk []byte, j int) (v, mag float64) {
	d := float64(FP16ToFP32(binary.LittleEndian.Uint16(blk[108:])))
	g := j / 16
	var lo, hi int
	if g < 8 {
		lo = int(blk[96+g] & 15)
	} else {
		lo = int(blk[96+g-8] >> 4)
	}
	hi = int(blk[96+8+g%4]>>(2*(g/4))) & 3
	sc := float64(lo|hi<<4) - 32
	half, r := j/128, j%128
	q := int(blk[32+32*half+r%32]>>(2*(r/32))) & 3
	if blk[j%32]>>(j/32)&1 == 0 {
		q -= 4
	}
	v = d * sc * float64(q)
	return v, math.Abs(v)
}

func fillQ3_K(b []byte, kind blockKind, scale func(int), setCodes func(lo, hi int)) {
	if kind == kindMaxCodes {
		for i := 96; i < 108; i++ {
			b[i] = 0xff // every scale 63-32 = 31
		}
	}
	setCodes(0, 96)
	scale(108)
}

// TestQ3_KLayout decodes a block built by hand.
func TestQ3_KLayout(t *testing.T) {
	b := make([]byte, q3_KBytes)
	put16(b[108:], FP32ToFP16(0.25))
	// Scale codes: group g gets 32+g-8 (so -8..7 after the -32), written
	// through the packing: low nibbles in bytes 0..7 (groups 8..15 in the
	// high nibble), top two bits in bytes 8..11.
	for g := 0; g < 16; g++ {
		c := byte(32 + g - 8)
		b[96+g%8] |= (c & 15) << (4 * (g / 8))
		b[96+8+g%4] |= (c >> 4) << (2 * (g / 4))
	}
	// Element 128h+32j+l: low bits at bits 2j of qs[32h+l], high bit at
	// bit 4h+j of hmask[l]; a clear high bit subtracts 4.
	b[32+7] = 2 << 4     // element 64+7 = 71: low 2, no high bit → -2
	b[7] |= 1 << 2       //   … now with the high bit: 2
	b[32+32+30] = 3 << 6 // element 128+96+30 = 254: low 3, no high → -1
	b[30] |= 1 << 6      // element 128+64+30 = 222: low 0, high → 0
	want := map[int]float32{
		0:   0.25 * -8 * -4, // group 0, code 0
		71:  0.25 * -4 * 2,  // group 4
		254: 0.25 * 7 * -1,  // group 15
		222: 0,              // group 13, q = 0
		223: 0.25 * 5 * -4,  // group 13, code 0
	}
	got := mustDequantize(t, Q3_K, b, QKK)
	for i, w := range want {
		if got[i] != w {
			t.Errorf("element %d: %g, want %g", i, got[i], w)
		}
	}
	for g := 0; g < 16; g++ {
		if s := q3KScale((*[12]byte)(b[96:]), g) - 32; s != int32(g-8) {
			t.Errorf("group %d: scale %d, want %d", g, s, g-8)
		}
	}
}

// TestQ3_KExactGrid: values on the Q3_K grid, with code 0 (-4) in every
// group and the scale code 0 (-32) in every block, survive a round trip.
func TestQ3_KExactGrid(t *testing.T) {
	const d = 0.0078125
	r := newRand(31)
	x := superGrid(r, 16,
		func() float64 { return d },
		func() float64 { return float64(r.IntN(8) - 4) }, -4)
	checkExactRoundTrip(t, Q3_K, x)
}

func TestQ3_KKnownBytes(t *testing.T) { checkKnownBytes(t, Q3_K) }
