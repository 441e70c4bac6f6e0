package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// unitScales sets every float scale of a block of type t to 1, so that a
// dot product is a sum of exact integers whatever the order of additions
// or fused multiply-adds: the pure-Go tile kernels must then match the
// DotFunc bit for bit, which the tolerance of TestTilesAgree cannot show
// for an integer sum off by one.
func unitScales(t Type, b []byte) {
	const one = 0x3c00 // fp16 1.0
	put := func(off int) { binary.LittleEndian.PutUint16(b[off:], one) }
	switch t {
	case Q4_0, Q5_0, Q8_0:
		put(0)
	case Q4_1, Q5_1, Q8_1, Q4_K, Q5_K:
		put(0)
		put(2)
	case Q6_K:
		put(208)
	case Q8_K:
		binary.LittleEndian.PutUint32(b, math.Float32bits(1))
		for g := 0; g < QKK/16; g++ {
			var s int32
			for _, v := range b[4+16*g : 4+16*g+16] {
				s += int32(int8(v))
			}
			binary.LittleEndian.PutUint16(b[4+QKK+2*g:], uint16(int16(s)))
		}
	}
}

// extremeBytes fills the quant bytes of b with one of the patterns that
// push the lane sums to their bounds: every byte 0x00, 0xff or 0x80 (the
// most negative activation), or random.
func extremeBytes(r *rand.Rand, b []byte, pattern int) {
	for i := range b {
		switch pattern {
		case 0:
			b[i] = 0
		case 1:
			b[i] = 0xff
		case 2:
			b[i] = 0x80
		default:
			b[i] = byte(r.Uint32())
		}
	}
}

func TestSwarExactOnIntegers(t *testing.T) {
	for _, typ := range dotTypes {
		k, ok := swarKernel(typ)
		if !ok {
			continue
		}
		vt := typ.VecDotType()
		dot := opsOf(typ).dot
		for _, nb := range []int{1, 2, 3, 17, 40} {
			if typ.BlockElems() == QKK && nb > 5 {
				nb /= 8
			}
			n := nb * typ.BlockElems()
			rb, xb := nb*typ.BlockBytes(), nb*vt.BlockBytes()
			for pw := 0; pw < 4; pw++ {
				for px := 0; px < 4; px++ {
					r := newRand(uint64(typ)<<20 | uint64(nb)<<8 | uint64(pw)<<4 | uint64(px))
					rows, cols := 1+r.IntN(swarRows), 1+r.IntN(swarCols)
					w := make([]byte, rows*rb)
					x := make([]byte, cols*xb)
					extremeBytes(r, w, pw)
					extremeBytes(r, x, px)
					for i := 0; i < rows*nb; i++ {
						unitScales(typ, w[i*typ.BlockBytes():(i+1)*typ.BlockBytes()])
					}
					for i := 0; i < cols*nb; i++ {
						unitScales(vt, x[i*vt.BlockBytes():(i+1)*vt.BlockBytes()])
					}
					out := make([]float32, rows*cols)
					k.Tile(n, w, rb, rows, x, xb, cols, out, rows)
					for c := 0; c < cols; c++ {
						for ri := 0; ri < rows; ri++ {
							want := dot(n, w[ri*rb:(ri+1)*rb], x[c*xb:(c+1)*xb])
							if got := out[c*rows+ri]; got != want && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
								t.Fatalf("%v %d blocks, patterns %d/%d: row %d col %d: swar %v, generic %v", typ, nb, pw, px, ri, c, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestPackQ8 checks the lane layout against its definition.
func TestPackQ8(t *testing.T) {
	r := newRand(7)
	for iter := 0; iter < 100; iter++ {
		var q [QK]byte
		extremeBytes(r, q[:], iter%4)
		var p [8]uint64
		s0, s1 := packQ8(&p, &q)
		var w0, w1 int32
		for j := 0; j < QK; j++ {
			if j < 16 {
				w0 += int32(int8(q[j]))
			} else {
				w1 += int32(int8(q[j]))
			}
		}
		if s0 != w0 || s1 != w1 {
			t.Fatalf("sums %d, %d; want %d, %d", s0, s1, w0, w1)
		}
		for k := 0; k < 8; k++ {
			var want uint64
			for lane := 0; lane < 4; lane++ {
				e := 8*(k/2) + k%2 + 2*lane // element in lane, counted from the top
				want += uint64(int64(int8(q[e])) << (16 * (3 - lane)))
			}
			if p[k] != want {
				t.Fatalf("word %d: %#x, want %#x", k, p[k], want)
			}
		}
	}
}

// TestSwarTiles checks every pure-Go tile kernel, whether or not Tiles
// offers it on this platform, on random blocks, and on a tile larger than
// it takes, which goes through the dot products.
func TestSwarTiles(t *testing.T) {
	for _, typ := range dotTypes {
		k, ok := swarKernel(typ)
		if !ok {
			continue
		}
		r := newRand(uint64(typ))
		for _, sz := range [][3]int{{3, 7, 3}, {2, swarRows, swarCols}, {2, swarRows + 3, swarCols + 1}} {
			c := newTileCase(r, typ, sz[0], sz[1], sz[2], r.IntN(8), r.IntN(8), r.IntN(9))
			c.check(t, fmt.Sprintf("%v %d blocks %d×%d", typ, sz[0], sz[1], sz[2]), k.Tile)
		}
	}
}
