package kv

import (
	"math"

	"github.com/lowmem/llm/quant"
)

// f16 widens an F16 value; quant's table lookup inlines to one load.
func f16(h uint16) float32 { return quant.FP16ToFP32(h) }

// roundFP16 returns f rounded to the nearest F16 value (ties to even, as
// F16C does), as a float32. Attention rounds every weight, so the common
// case, a result in F16's normal range, rounds the float32 bits in place;
// the rest go through quant's full conversion.
func roundFP16(f float32) float32 {
	b := math.Float32bits(f)
	// |f| in [2⁻¹⁴, 2¹⁵): the result is a normal F16 and cannot overflow.
	if e := b & 0x7f800000; e >= 113<<23 && e < 142<<23 {
		b += 0xfff + (b>>13)&1 // a carry out of the 10 kept mantissa bits bumps the exponent, as rounding requires
		return math.Float32frombits(b &^ 0x1fff)
	}
	return quant.FP16ToFP32(quant.FP32ToFP16(f))
}
