//go:build !purego

package quant

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/lowmem/llm/internal/floatbits"
)

// TestArmIQExtremes runs the arm64 kernels of the lattice types whose
// kernels reorder the twin's integer sums (IQ1_S and IQ1_M sum 8·Σ grid·y
// plus the δ sum, IQ3_XXS builds its signs in vectors) on the extremes:
// weight blocks of one repeated byte (every index, sign, high bit and
// scale at its limit) against activations of one repeated quant and
// bsums at ±32768, with finite scales, bit for bit against the twin.
func TestArmIQExtremes(t *testing.T) {
	const nb = 3
	for _, typ := range []Type{IQ3_XXS, IQ1_S, IQ1_M} {
		ks := Kernels(typ)
		gen := ks[0].Dot
		for _, wb := range []byte{0x00, 0xff, 0x80, 0x7f, 0x55, 0xaa, 0x3c} {
			w := make([]byte, nb*typ.BlockBytes())
			for i := range w {
				w[i] = wb
			}
			for b := 0; b < nb; b++ {
				blk := w[b*typ.BlockBytes():]
				switch typ {
				case IQ1_M: // d's nibbles: 0x3c00 (1.0), keeping the scales
					for i, nib := range []uint16{0x0, 0xc, 0x0, 0x3} {
						v := binary.LittleEndian.Uint16(blk[48+2*i:])
						binary.LittleEndian.PutUint16(blk[48+2*i:], v&0x0fff|nib<<12)
					}
				default:
					binary.LittleEndian.PutUint16(blk, 0x3c00)
				}
			}
			for _, q := range []int8{-128, 127, -1, 1, 0} {
				for _, bsum := range []int16{-32768, 32767, 0} {
					x := make([]byte, nb*q8_KBytes)
					for b := 0; b < nb; b++ {
						blk := x[b*q8_KBytes:]
						binary.LittleEndian.PutUint32(blk, math.Float32bits(0.5))
						for i := 0; i < QKK; i++ {
							blk[4+i] = byte(q)
						}
						for i := 0; i < QKK/16; i++ {
							binary.LittleEndian.PutUint16(blk[4+QKK+2*i:], uint16(bsum))
						}
					}
					want := gen(nb*QKK, w, x)
					for _, k := range ks[1:] {
						if got := k.Dot(nb*QKK, w, x); !floatbits.Same(got, want) {
							t.Errorf("%v/%s, weights %#02x, quants %d, bsums %d: got %g, generic %g", typ, k.Name, wb, q, bsum, got, want)
						}
					}
				}
			}
		}
	}
}
