package quant

import (
	"encoding/binary"
	"math"
	"testing"
)

// refElemIQ4_XS decodes element j of an IQ4_XS block: d, scales_h,
// scales_l, then 16 code bytes per 32 elements.
func refElemIQ4_XS(blk []byte, j int) (v, mag float64) {
	d := float64(FP16ToFP32(binary.LittleEndian.Uint16(blk)))
	sh := binary.LittleEndian.Uint16(blk[2:])
	ib := j / 32
	ls := int(blk[4+ib/2]>>(4*(ib%2)))&15 | int(sh>>(2*ib))&3<<4
	r := j % 32
	c := blk[8+16*ib+r%16] & 15
	if r >= 16 {
		c = blk[8+16*ib+r%16] >> 4
	}
	v = d * float64(ls-32) * refIQ4Levels[c]
	return v, math.Abs(v)
}

func fillIQ4_XS(b []byte, kind blockKind, scale func(int), setCodes func(lo, hi int)) {
	scale(0)
	if kind == kindMaxCodes {
		for i := 2; i < 8; i++ {
			b[i] = 0xff // every scale 63-32 = 31
		}
	}
	setCodes(8, len(b))
}

func TestIQ4_XSLayout(t *testing.T) {
	b := make([]byte, iq4_XSBytes)
	put16(b, FP32ToFP16(0.25))
	// Sub-block scale codes 32+ib-4 (-4..3): low nibbles in scales_l, top
	// bits in scales_h.
	var sh uint16
	for ib := 0; ib < 8; ib++ {
		c := byte(32 + ib - 4)
		b[4+ib/2] |= (c & 15) << (4 * (ib % 2))
		sh |= uint16(c>>4) << (2 * ib)
	}
	put16(b[2:], sh)
	b[8+16*3+5] = 0x0f        // element 96+5: level 15; element 96+21: level 0
	b[8+16*7+15] = 0x8<<4 | 2 // element 224+15: level 2; element 224+31: level 8
	want := map[int]float32{
		0:      0.25 * -4 * -127,
		96 + 5: 0.25 * -1 * 113, 96 + 21: 0.25 * -1 * -127,
		224 + 15: 0.25 * 3 * -83, 224 + 31: 0.25 * 3 * 1,
	}
	got := mustDequantize(t, IQ4_XS, b, QKK)
	for i, w := range want {
		if got[i] != w {
			t.Errorf("element %d: %g, want %g", i, got[i], w)
		}
	}
	bb := (*[iq4_XSBytes]byte)(b)
	for ib := 0; ib < 8; ib++ {
		if s := iq4XSScale(bb, ib); s != int32(ib-4) {
			t.Errorf("sub-block %d: scale %d, want %d", ib, s, ib-4)
		}
	}
}

// TestIQ4_XSExactGrid: D·code·level, with scale code -32 in every block and
// level -127 in every sub-block, survives a round trip.
func TestIQ4_XSExactGrid(t *testing.T) {
	r := newRand(43)
	x := superGrid(r, 32,
		func() float64 { return math.Ldexp(1, -8-r.IntN(6)) },
		func() float64 { return refIQ4Levels[r.IntN(16)] }, -127)
	checkExactRoundTrip(t, IQ4_XS, x)
}

func TestIQ4_XSKnownBytes(t *testing.T) { checkKnownBytes(t, IQ4_XS) }
