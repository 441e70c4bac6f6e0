package quant

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// refElemTQ1_0 decodes element j of a TQ1_0 block from the layout as
// ggml's header describes it: a byte q holds the base-3 number v =
// ⌊q·243/256⌋ (the encoder stores ⌈v·256/243⌉), digit n the n-th most
// significant of its five; digit n of byte m of qs[0:32] is element
// m+32n, of qs[32:48] element 160+m+16n, of qh element 240+m+4n.
func refElemTQ1_0(blk []byte, j int) (v, mag float64) {
	var at, digit int
	switch {
	case j < 160:
		at, digit = j%32, j/32
	case j < 240:
		at, digit = 32+(j-160)%16, (j-160)/16
	default:
		at, digit = 48+(j-240)%4, (j-240)/4
	}
	num := int(blk[at]) * 243 / 256
	for n := 4; n > digit; n-- {
		num /= 3
	}
	v = float64(FP16ToFP32(binary.LittleEndian.Uint16(blk[52:]))) * float64(num%3-1)
	return v, math.Abs(v)
}

// refElemTQ2_0 decodes element j of a TQ2_0 block: code c in bits
// 2·(j%128/32) of byte 32·(j/128) + j%32, value (c-1)·d.
func refElemTQ2_0(blk []byte, j int) (v, mag float64) {
	c := int(blk[32*(j/128)+j%32]>>(2*(j%128/32))) & 3
	v = float64(FP16ToFP32(binary.LittleEndian.Uint16(blk[64:]))) * float64(c-1)
	return v, math.Abs(v)
}

// TestTQLayout decodes blocks built by hand, element by element.
func TestTQLayout(t *testing.T) {
	b1 := make([]byte, tq1_0Bytes)
	put16(b1[52:], FP32ToFP16(0.5))
	// Codes 2,0,1,2,1 (elements 3, 35, 67, 99, 131): 2·81+0·27+1·9+2·3+1
	// = 178, stored as ⌈178·256/243⌉ = 188. A byte of codes all 1
	// (elements 160+m+16n for m = 7) is 121 → 128; qh byte 2 holds codes
	// 0,2,2,0 (elements 242, 246, 250, 254) and a fifth digit 0:
	// (0·27+2·9+2·3+0)·3 = 72 → 76.
	b1[3], b1[32+7], b1[48+2] = 188, 128, 76
	want1 := map[int]float32{
		3: 0.5, 35: -0.5, 67: 0, 99: 0.5, 131: 0,
		0: -0.5, 159: -0.5, // a zero byte: codes 0
		167: 0, 183: 0, 199: 0, 215: 0, 231: 0,
		242: -0.5, 246: 0.5, 250: 0.5, 254: -0.5, 255: -0.5,
	}
	got1 := mustDequantize(t, TQ1_0, b1, QKK)
	for i, w := range want1 {
		if got1[i] != w {
			t.Errorf("TQ1_0 element %d: %g, want %g", i, got1[i], w)
		}
	}

	b2 := make([]byte, tq2_0Bytes)
	put16(b2[64:], FP32ToFP16(0.25))
	b2[5] = 2 << 2     // element 32+5: code 2
	b2[32+20] = 1 << 6 // element 128+96+20: code 1
	b2[31] = 3 | 1<<4  // elements 31 (code 3, which decodes to 2·d) and 64+31 (code 1)
	want2 := map[int]float32{0: -0.25, 37: 0.25, 244: 0, 31: 0.5, 95: 0, 63: -0.25}
	got2 := mustDequantize(t, TQ2_0, b2, QKK)
	for i, w := range want2 {
		if got2[i] != w {
			t.Errorf("TQ2_0 element %d: %g, want %g", i, got2[i], w)
		}
	}
}

// TestTQExactGrid: values d·{-1, 0, 1} with d = max |x| an fp16 number
// survive a round trip bit for bit, and a value exactly half way rounds
// away from zero, as lroundf does (ties to even would give 0 for both).
func TestTQExactGrid(t *testing.T) {
	r := newRand(35)
	const nb = 4
	x := make([]float32, nb*QKK)
	for i := range x {
		x[i] = 0.375 * float32(r.IntN(3)-1)
	}
	x[0], x[QKK] = 0.375, -0.375 // every block's d is 0.375
	for _, typ := range []Type{TQ1_0, TQ2_0} {
		if got := mustDequantize(t, typ, mustQuantize(t, typ, x), len(x)); !slices.Equal(got, x) {
			t.Errorf("%v: the grid did not survive a round trip", typ)
		}
		half := make([]float32, QKK)
		half[0], half[1], half[2] = 1, 0.5, -0.5
		got := mustDequantize(t, typ, mustQuantize(t, typ, half), QKK)
		if got[1] != 1 || got[2] != -1 {
			t.Errorf("%v: ±0.5 of d = 1 decode to %g, %g; want 1, -1", typ, got[1], got[2])
		}
	}
}

func TestTQ1_0KnownBytes(t *testing.T) { checkKnownBytes(t, TQ1_0) }
func TestTQ2_0KnownBytes(t *testing.T) { checkKnownBytes(t, TQ2_0) }

// TestTQKernelsExact: every kernel of the ternary types sums each block's
// integers exactly and scales them as the pure-Go one does, so all return
// its bits (NaN for NaN), whatever the lengths and alignments.
func TestTQKernelsExact(t *testing.T) {
	kinds := []blockKind{kindRandom, kindZero, kindMaxCodes, kindMinCodes, kindNegScale, kindMixed}
	for _, typ := range []Type{TQ1_0, TQ2_0} {
		ks := Kernels(typ)
		if len(ks) < 2 {
			t.Logf("%v: only %s on this CPU", typ, ks[0].Name)
		}
		for i, kind := range kinds {
			for _, nb := range []int{1, 2, 5, 33} {
				r := newRand(uint64(typ)<<16 | uint64(i)<<8 | uint64(nb))
				w := randBlocks(typ, nb, r, kind)
				x := randBlocks(Q8_K, nb, r, kind)
				n := nb * QKK
				want := ks[0].Dot(n, w, x)
				for _, k := range ks[1:] {
					got := k.Dot(n, unaligned(w, nb%8), unaligned(x, 3))
					if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
						t.Errorf("%v/%s, %d blocks of kind %d: %g, generic %g", typ, k.Name, nb, kind, got, want)
					}
				}
			}
		}
	}
}
