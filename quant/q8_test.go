package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// Hand-computed activation blocks. They pin the details where llama.cpp's
// x86 path differs from its portable reference: ties round to even, the
// multiplier is 127/amax, and Q8_K keeps the sign of its extreme element.

func TestQuantizeQ8_0Bytes(t *testing.T) {
	tests := []struct {
		name string
		x    map[int]float32 // the rest of the 32 elements are 0
		d    uint16
		q    map[int]int8 // the rest are 0
		sum  int          // Σq, for Q8_1
		s    uint16       // fp16(d·Σq), for Q8_1
	}{
		{
			// amax 127: d = 1 (0x3c00), multiplier exactly 1, so each
			// quant is its input rounded half to even; roundf would give
			// 1, 3, -1, -3 and 101 for the ties.
			name: "unit scale",
			x:    map[int]float32{0: 127, 1: 0.5, 2: 1.5, 3: 2.5, 4: -0.5, 5: -1.5, 6: -2.5, 7: 3.49, 8: -127, 31: 100.5},
			d:    0x3c00,
			q:    map[int]int8{0: 127, 1: 0, 2: 2, 3: 2, 4: 0, 5: -2, 6: -2, 7: 3, 8: -127, 31: 100},
			sum:  103,
			s:    0x5670, // 103 = 1.609375·2^6
		},
		{
			// amax 2: d = 2/127 = 0.0157480… → fp16 0x2408 (2^-6·(1+8/1024));
			// multiplier 63.5 exactly.
			name: "scale 2/127",
			x:    map[int]float32{0: 2, 1: 1, 2: -1, 3: 0.5, 4: 1.5, 5: -0.25, 6: 0x1p-7, 7: 0x1p-6, 8: 3 * 0x1p-7, 9: -2},
			d:    0x2408,
			// 127, 63.5→64, -63.5→-64, 31.75→32, 95.25→95, -15.875→-16,
			// 0.49609375→0, 0.9921875→1, 1.48828125→1, -127
			q:   map[int]int8{0: 127, 1: 64, 2: -64, 3: 32, 4: 95, 5: -16, 6: 0, 7: 1, 8: 1, 9: -127},
			sum: 113,
			// d·113 = 1.7795275… = 1 + 798.24/1024 → 0x3c00+798 = 0x3f1e
			s: 0x3f1e,
		},
		{
			name: "all zero",
			x:    map[int]float32{},
			d:    0,
			q:    map[int]int8{},
			sum:  0,
			s:    0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float32, QK)
			for i, v := range tc.x {
				x[i] = v
			}
			var qs [QK]byte
			sum := 0
			for i, v := range tc.q {
				qs[i] = byte(v)
				sum += int(v)
			}
			if sum != tc.sum {
				t.Fatalf("test table: Σq = %d, table says %d", sum, tc.sum)
			}
			want0 := binary.LittleEndian.AppendUint16(nil, tc.d)
			want0 = append(want0, qs[:]...)
			if got := mustQuantize(t, Q8_0, x); !bytes.Equal(got, want0) {
				t.Errorf("Q8_0:\n got %x\nwant %x", got, want0)
			}
			want1 := binary.LittleEndian.AppendUint16(nil, tc.d)
			want1 = binary.LittleEndian.AppendUint16(want1, tc.s)
			want1 = append(want1, qs[:]...)
			if got := mustQuantize(t, Q8_1, x); !bytes.Equal(got, want1) {
				t.Errorf("Q8_1:\n got %x\nwant %x", got, want1)
			}
		})
	}
}

func TestQuantizeQ8_KBytes(t *testing.T) {
	tests := []struct {
		name  string
		x     map[int]float32 // the rest of the 256 elements are 0
		d     float32
		q     map[int]int8
		bsums map[int]int16
	}{
		{
			// The element of largest magnitude is -127 (the later 127 ties
			// in magnitude, and the first wins), so iscale = -127/-127 = 1
			// and d = 1. nearest_int rounds ties to even.
			name:  "negative extreme",
			x:     map[int]float32{0: -127, 1: 2.5, 2: -0.5, 3: 3.5, 4: 127, 17: 1.5, 255: -126.5},
			d:     1,
			q:     map[int]int8{0: -127, 1: 2, 2: 0, 3: 4, 4: 127, 17: 2, 255: -126},
			bsums: map[int]int16{0: 6, 1: 2, 15: -126},
		},
		{
			// A positive extreme flips every sign: iscale = -127/4 = -31.75,
			// d = 1/iscale = -4/127.
			name:  "positive extreme",
			x:     map[int]float32{0: 4, 1: -4, 2: 1, 3: -2, 4: 2, 100: 0.5},
			d:     float32(-4.0 / 127.0),
			q:     map[int]int8{0: -127, 1: 127, 2: -32, 3: 64, 4: -64, 100: -16},
			bsums: map[int]int16{0: -32, 6: -16},
		},
		{
			name:  "all zero",
			x:     map[int]float32{},
			d:     0,
			q:     map[int]int8{},
			bsums: map[int]int16{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := sparseFloats(QKK, tc.x)
			want := make([]byte, q8_KBytes)
			binary.LittleEndian.PutUint32(want, math.Float32bits(tc.d))
			for i, v := range tc.q {
				want[4+i] = byte(v)
			}
			for g, v := range tc.bsums {
				binary.LittleEndian.PutUint16(want[4+QKK+2*g:], uint16(v))
			}
			if got := mustQuantize(t, Q8_K, x); !bytes.Equal(got, want) {
				t.Errorf("Q8_K:\n got %x\nwant %x", got, want)
			}
		})
	}
}

// The x86 code multiplies by 127/amax where the reference multiplies by
// 1/d = 1/(amax/127); in float32 these differ for amax = 11: 127/11 =
// 11.545455 (0x4138ba2f) but 1/(11/127) = 11.545454 (0x4138ba2e). For the
// inputs below the first gives exactly 1.5 and 7.5 (to even: 2 and 8), the
// second 1.4999999 and 7.4999995 (1 and 7).
func TestQuantizeQ8_0Multiplier(t *testing.T) {
	x := make([]float32, QK)
	x[0] = 11
	x[1] = math.Float32frombits(0x3e050a14) // 0.12992126
	x[2] = math.Float32frombits(0x3f264c99) // 0.6496063
	for _, typ := range []Type{Q8_0, Q8_1} {
		got := mustQuantize(t, typ, x)
		qs := got[typ.BlockBytes()-QK:]
		if qs[0] != 127 || qs[1] != 2 || qs[2] != 8 {
			t.Errorf("%v quants %d %d %d, want 127 2 8", typ, int8(qs[0]), int8(qs[1]), int8(qs[2]))
		}
	}
}
