package kv

import "github.com/lowmem/llm/quant"

// f16 widens an F16 value; quant's table lookup inlines to one load.
func f16(h uint16) float32 { return quant.FP16ToFP32(h) }

// roundFP16 returns f rounded to the nearest F16 value (ties to even, as
// F16C does), as a float32.
func roundFP16(f float32) float32 { return quant.FP16ToFP32(quant.FP32ToFP16(f)) }
