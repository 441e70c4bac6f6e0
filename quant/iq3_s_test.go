package quant

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"
)

// refElemIQ3_S decodes element j of an IQ3_S block: d, qs[64], qh[8],
// signs[32], scales[4].
func refElemIQ3_S(blk []byte, j int) (v, mag float64) {
	d := float64(FP16ToFP32(binary.LittleEndian.Uint16(blk)))
	ib, r := j/32, j%32
	sc := int(blk[106+ib/2]>>(4*(ib%2))) & 15
	k := r / 4
	idx := int(blk[2+8*ib+k]) | int(blk[66+ib]>>k)&1<<8
	g := float64(iq3sGrid[idx] >> (8 * (r % 4)) & 0xff)
	v = d * float64(1+2*sc) * g
	if blk[74+4*ib+r/8]>>(r%8)&1 != 0 {
		v = -v
	}
	return v, math.Abs(v)
}

func fillIQ3_S(b []byte, kind blockKind, scale func(int), setCodes func(lo, hi int)) {
	scale(0)
	if kind == kindMaxCodes {
		for i := 106; i < 110; i++ {
			b[i] = 0xff
		}
	}
	setCodes(2, 106) // all 0xff: index 511, every sign negative
}

// TestIQ3SGrid pins the lattice table. Its structure is checked here; that
// it is llama.cpp's table entry for entry was verified by dequantizing IQ3_S
// tensors of random bytes (every index) with llama-quantize
// --allow-requantize … F32 and with Dequantize, which agreed bit for bit,
// and the golden tests on tiny-llamaq-iq3_s exercise it end to end.
func TestIQ3SGrid(t *testing.T) {
	var buf [4 * 512]byte
	for i, g := range iq3sGrid {
		binary.LittleEndian.PutUint32(buf[4*i:], g)
		if i > 0 && g <= iq3sGrid[i-1] {
			t.Errorf("entry %d (%#08x) not above entry %d (%#08x)", i, g, i-1, iq3sGrid[i-1])
		}
		for k := 0; k < 4; k++ {
			if v := g >> (8 * k) & 0xff; v%2 != 1 || v > 15 {
				t.Errorf("entry %d (%#08x): byte %d is %d, not an odd number 1..15", i, g, k, v)
			}
		}
	}
	const want = "bd1af4945a1717c65610b0284e4628b9a1ba3b306fae3a06f6e5f597356e349f"
	sum := sha256.Sum256(buf[:])
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("SHA-256 of the grid %s, want %s", got, want)
	}
	if iq3_SBytes != 110 {
		t.Errorf("block of %d bytes, want 110", iq3_SBytes)
	}
}

func TestIQ3SSignMask(t *testing.T) {
	for s := 0; s < 256; s++ {
		for j := 0; j < 8; j++ {
			want := uint64(0)
			if s>>j&1 != 0 {
				want = 0xff
			}
			if got := iq3sSignMask[s] >> (8 * j) & 0xff; got != want {
				t.Fatalf("mask of %#02x byte %d: %#x", s, j, got)
			}
		}
	}
}

// TestIQ3_SLayout decodes a block built by hand.
func TestIQ3_SLayout(t *testing.T) {
	b := make([]byte, iq3_SBytes)
	put16(b, FP32ToFP16(0.5))
	b[106+1] = 3 << 4 // sub-block 3: scale code 3, factor 1+2·3 = 7
	// Sub-block 3, group 5 (elements 96+20..96+23): index 256+9.
	b[2+8*3+5] = 9
	b[66+3] = 1 << 5
	b[74+4*3+2] = 1 << 5 // sign of element 96+16+5 = 117
	g := iq3sGrid[256+9]
	got := mustDequantize(t, IQ3_S, b, QKK)
	for e := 0; e < 4; e++ {
		w := 0.5 * 7 * float32(g>>(8*e)&0xff)
		if e == 1 {
			w = -w
		}
		if got[116+e] != w {
			t.Errorf("element %d: %g, want %g", 116+e, got[116+e], w)
		}
	}
	// Sub-block 0, group 0: index 0, scale factor 1.
	if w := 0.5 * float32(iq3sGrid[0]&0xff); got[0] != w {
		t.Errorf("element 0: %g, want %g", got[0], w)
	}
}

func TestIQ3_SKnownBytes(t *testing.T) { checkKnownBytes(t, IQ3_S) }

// TestIQ3_SZeroSubBlock pins ggml's quirk: after an all-zero sub-block the
// lattice indexes and signs of the following sub-blocks are stored one
// slot early (the scales and high index bits stay in place).
func TestIQ3_SZeroSubBlock(t *testing.T) {
	r := newRand(61)
	x := make([]float32, QKK)
	for i := range x {
		if i/32 != 1 {
			x[i] = float32(r.NormFloat64())
		}
	}
	q := mustQuantize(t, IQ3_S, x)
	// Sub-block 1 is zero: its scale code is 0 and sub-block 2's indexes
	// and signs sit where sub-block 1's belong; the last slot stays empty.
	if q[106]>>4 != 0 {
		t.Errorf("scale code of the zero sub-block is %d", q[106]>>4)
	}
	var empty [8]byte
	if !bytes.Equal(q[2+8*7:2+8*8], empty[:]) || !bytes.Equal(q[74+4*7:74+4*8], empty[:4]) {
		t.Errorf("last index and sign slots are not empty: %x %x", q[2+8*7:2+8*8], q[74+4*7:74+4*8])
	}
	xs := make([]float32, QKK) // sub-block 2 on its own, in slot 0
	copy(xs, x[64:96])
	q2 := mustQuantize(t, IQ3_S, xs)
	if !bytes.Equal(q[2+8:2+16], q2[2:10]) || !bytes.Equal(q[74+4:74+8], q2[74:78]) {
		t.Errorf("sub-block 2 not stored in slot 1: %x %x, want %x %x", q[2+8:2+16], q[74+4:74+8], q2[2:10], q2[74:78])
	}
}
