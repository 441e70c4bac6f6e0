package quant

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"
)

// gemmTypes are the types with GEMM kernels, in the row layout and in
// the X8 one; rowGemmTypes adds those with one in the row layout only.
var (
	gemmTypes    = []Type{Q4_0, Q8_0, Q4_K, Q5_K, Q6_K}
	rowGemmTypes = append(gemmTypes[:len(gemmTypes):len(gemmTypes)], TQ1_0, TQ2_0)
)

// TestGemmsAgree checks every GEMM kernel, the pure-Go one included,
// against the generic dot product on random blocks, for row counts around
// the kernels' four and column counts that fill and part-fill each of the
// assembly's loop widths (4, 8, 16 and 32 columns).
func TestGemmsAgree(t *testing.T) {
	for _, typ := range rowGemmTypes {
		ks := Gemms(typ)
		if len(ks) == 0 || ks[0].Name != "generic" {
			t.Fatalf("%v: Gemms does not start with the generic kernel: %v", typ, ks)
		}
		for ki, k := range ks {
			i := 0
			nbs := []int{1, 2, 3, 8, 13}
			if typ.BlockElems() == QKK {
				nbs = []int{1, 2, 3}
			}
			for _, nb := range nbs {
				for _, rows := range []int{1, 3, 4, 5, 8, 11} {
					for _, cols := range []int{1, 2, 3, 4, 5, 8, 9, 12, 16, 17, 24, 31, 32} {
						if i++; !sampled(raceEnabled, ki, i-1, 8) {
							continue
						}
						seed := uint64(typ)<<40 | uint64(nb)<<16 | uint64(rows)<<8 | uint64(cols)
						r := newRand(seed)
						c := newTileCase(r, typ, nb, rows, cols, r.IntN(8), r.IntN(8), r.IntN(9))
						name := fmt.Sprintf("%v/%s %d blocks %d×%d", typ, k.Name, nb, rows, cols)
						c.check(t, name, func(n int, w []byte, wStride, rows int, x []byte, xStride, cols int, out []float32, outStride int) {
							p := make([]byte, k.PanelBytes(n))
							for i := range p {
								p[i] = 0xA5 // Pack must write every byte it is read by
							}
							k.Pack(n, x, xStride, cols, p)
							k.Mul(n, w, wStride, rows, p, cols, out, outStride)
						})
					}
				}
			}
		}
	}
}

func TestGemmNoAllocs(t *testing.T) {
	for _, typ := range rowGemmTypes {
		for _, k := range Gemms(typ)[1:] {
			r := newRand(uint64(typ))
			c := newTileCase(r, typ, 2048/typ.BlockElems(), 16, GemmCols, 0, 0, 0)
			p := make([]byte, k.PanelBytes(c.n))
			out := make([]float32, GemmCols*c.outStride)
			if a := testing.AllocsPerRun(10, func() {
				k.Pack(c.n, c.x, c.xStride, c.cols, p)
				k.Mul(c.n, c.w, c.wStride, c.rows, p, c.cols, out, c.outStride)
			}); a != 0 {
				t.Errorf("%v/%s allocates %v times", typ, k.Name, a)
			}
		}
	}
}

// TestGemmNarrowExact checks that a GEMM kernel's narrow loops, which the
// kernel runs for panels of at most 4, 8 or 16 columns, give the bits its
// 32-column loop gives those columns: every column count of a panel, the
// wide loop run on the same panel with cols = 32.
func TestGemmNarrowExact(t *testing.T) {
	for _, typ := range []Type{Q4_0, Q8_0, Q4_K, Q6_K, TQ1_0, TQ2_0} {
		for _, k := range Gemms(typ)[1:] {
			r := newRand(uint64(typ) << 8)
			nb := 3
			if typ.BlockElems() != QKK {
				nb = 9
			}
			c := newTileCase(r, typ, nb, 5, GemmCols, 0, 0, 0)
			wide := make([]float32, GemmCols*c.outStride)
			narrow := make([]float32, GemmCols*c.outStride)
			p := make([]byte, k.PanelBytes(c.n))
			for cols := 1; cols <= GemmCols; cols++ {
				k.Pack(c.n, c.x, c.xStride, cols, p)
				k.Mul(c.n, c.w, c.wStride, c.rows, p, GemmCols, wide, c.outStride)
				clear(narrow)
				k.Mul(c.n, c.w, c.wStride, c.rows, p, cols, narrow, c.outStride)
				for i := range narrow {
					col, row := i/c.outStride, i%c.outStride
					want := wide[i]
					if col >= cols || row >= c.rows {
						want = 0
					}
					if math.Float32bits(narrow[i]) != math.Float32bits(want) {
						t.Errorf("%v/%s %d columns: row %d col %d: %v, the 32-column loop %v", typ, k.Name, cols, row, col, narrow[i], want)
					}
				}
			}
		}
	}
}

// TestKPanelPack checks the k-quant panels' packer against packRef, the
// field-by-field statement of the layout, for full and partial panels.
func TestKPanelPack(t *testing.T) {
	const n = 512
	r := newRand(7)
	xb := n / QKK * q8_KBytes
	x := randBlocks(Q8_K, GemmCols*n/QKK, r, kindRandom)
	for _, p := range []kPanel{panelQ4_K, panelQ6_K, panelTQ} {
		for _, cols := range []int{1, 7, 31, 32} {
			got, want := make([]byte, p.panelBytes(n)), make([]byte, p.panelBytes(n))
			for i := range got {
				got[i] = 0xAA
			}
			p.pack(n, x, xb, cols, got)
			p.packRef(n, x, xb, cols, want)
			if !bytes.Equal(got, want) {
				t.Errorf("panel sub %d, %d columns: packed bytes differ from packRef", p.sub, cols)
			}
		}
	}
}

// packRef is kPanel.pack written field by field, every column of every
// super-block.
func (p kPanel) packRef(n int, x []byte, xStride, cols int, out []byte) {
	nb := n / QKK
	out = out[:nb*p.block()]
	cols = min(cols, GemmCols)
	subs := QKK / int(p.sub)
	for b := 0; b < nb; b++ {
		blk := out[b*p.block() : (b+1)*p.block()]
		for c := 0; c < GemmCols; c++ {
			put := func(off int, v uint32) { binary.LittleEndian.PutUint32(blk[off+4*c:], v) }
			if c >= cols {
				for j := 0; j < subs; j++ {
					for g := 0; g <= p.groups(); g++ {
						put(j*p.subBytes()+128*g, 0)
					}
				}
				put(p.dxOff(), 0)
				if p.mins {
					for k := 0; k < 4; k++ {
						put(p.pairsOff()+128*k, 0)
					}
				}
				continue
			}
			xb := (*[q8_KBytes]byte)(x[c*xStride+b*q8_KBytes:])
			d := f32At(xb[:])
			for j := 0; j < subs; j++ {
				sb := j * p.subBytes()
				for g := 0; g < p.groups(); g++ {
					copy(blk[sb+128*g+4*c:sb+128*g+4*c+4], xb[4+int(p.sub)*j+4*g:])
				}
				var s int32
				for k := int(p.sub) * j / 16; k < int(p.sub)*(j+1)/16; k++ {
					s += int32(int16(binary.LittleEndian.Uint16(xb[260+2*k:])))
				}
				if p.mins {
					put(sb+128*p.groups(), math.Float32bits(d*float32(s)))
				} else {
					put(sb+128*p.groups(), uint32(-p.bias*s))
				}
			}
			put(p.dxOff(), math.Float32bits(d))
			if p.mins {
				for k := 0; k < 4; k++ {
					lo, hi := bsumPair(xb[:], 2*k), bsumPair(xb[:], 2*k+1)
					put(p.pairsOff()+128*k, uint32(uint16(lo))|uint32(uint16(hi))<<16)
				}
			}
		}
	}
}
