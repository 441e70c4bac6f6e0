package gguf

import (
	"math"
	"testing"
)

// TestConvert: an integer converts when it fits in the target type, sign
// included, at both ends of each range; otherwise ok is false and the
// value 0.
func TestConvert(t *testing.T) {
	to32 := func(v int32, ok bool) any {
		if !ok {
			return v != 0 // false: refused with 0
		}
		return v
	}
	for name, tc := range map[string]struct{ got, want any }{
		"uint64 max":      {to32(convert[int32](uint64(math.MaxUint64))), false},
		"uint64 2^63":     {to32(convert[int32](uint64(1 << 63))), false},
		"uint32 2^31":     {to32(convert[int32](uint32(1 << 31))), false},
		"uint32 2^31-1":   {to32(convert[int32](uint32(math.MaxInt32))), int32(math.MaxInt32)},
		"int64 min int32": {to32(convert[int32](int64(math.MinInt32))), int32(math.MinInt32)},
		"int64 below":     {to32(convert[int32](int64(math.MinInt32 - 1))), false},
		"int64 2^32+5":    {to32(convert[int32](int64(1<<32 + 5))), false},
		"int8 -128":       {to32(convert[int32](int8(-128))), int32(-128)},
		"uint8 255":       {to32(convert[int32](uint8(255))), int32(255)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", name, tc.got, tc.want)
		}
	}
	if v, ok := convert[uint64](int8(-1)); ok || v != 0 {
		t.Errorf("uint64 of -1: %d, %v", v, ok)
	}
	if v, ok := convert[int64](uint64(math.MaxUint64)); ok || v != 0 {
		t.Errorf("int64 of 2^64-1: %d, %v", v, ok)
	}
}
