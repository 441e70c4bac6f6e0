package kv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lowmem/llm/quant"
)

// The Int4 families' variants against the pure-Go twins (kernels_int4.go):
// scores within the bound of a reordered float32 dot product; the
// multi-head scores bit for bit against the one-head kernel of the same
// level; values bit for bit across every variant past the twin (each
// element adds (w·d)·(c−8) with one FMA per row, in row order), and within
// a few roundings of the twin, which adds two rows' products before the
// output.

// q4Rows returns rows q4_0 rows of d elements, off bytes into a fresh
// slice: random codes, scales mostly moderate, some zero, negative,
// subnormal or the largest half.
func q4Rows(r *rand.Rand, rows, d, off int) []byte {
	rb := q4RowBytes(d)
	b := make([]byte, rows*rb+off)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	b = b[off:]
	for blk := 0; blk < rows*d/q4Block; blk++ {
		var h uint16
		switch r.IntN(16) {
		case 0:
			h = 0
		case 1:
			h = uint16(1 + r.IntN(0x3ff)) // subnormal
		case 2:
			h = 0x7bff // 65504
		default:
			h = quant.FP32ToFP16(float32(math.Exp2(r.Float64()*8 - 6)))
		}
		if r.IntN(2) == 0 {
			h |= 0x8000
		}
		b[blk*q4BlockBytes] = byte(h)
		b[blk*q4BlockBytes+1] = byte(h >> 8)
	}
	return b
}

// q4Elem is element j of a q4_0 row, in float64, and its code less 8.
func q4Elem(row []byte, j int) (float64, float64) {
	blk := row[j/q4Block*q4BlockBytes:]
	e := j % q4Block
	code := blk[2+e%16]
	if e >= 16 {
		code >>= 4
	}
	cm8 := float64(code&15) - 8
	return float64(q4Scale(blk)) * cm8, cm8
}

func testVariantsInt4(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, d := range []int{32, 64, 96, 128, 160, 256} {
		for _, rows := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 70} {
			t.Run(fmt.Sprintf("d%d/rows%d", d, rows), func(t *testing.T) {
				testInt4Rows(t, r, rows, d)
			})
		}
	}
}

func testInt4Rows(t *testing.T, r *rand.Rand, rows, d int) {
	rb := q4RowBytes(d)
	st := rows + 3
	k := q4Rows(r, rows, d, 1+rows%3)
	q := f32Row(r, 4*d, 2, 1)
	w := f32Row(r, 4*st, 1, 0.1)
	for i := range rows {
		switch i % 7 {
		case 1:
			w[2*st+i] = 0
		case 3:
			for h := range 4 {
				w[h*st+i] = 0
			}
		case 5:
			w[i] = float32(math.Copysign(0, -1))
			w[3*st+i] = 0
		}
	}

	// Scores: every level against the twin; xN against its level alone.
	alone := map[string][]float32{}
	for _, v := range kern.scoresQ4.all[1:] {
		if d%v.mult != 0 {
			continue
		}
		one := make([]float32, 4*st)
		for h := range 4 {
			qh := q[h*d : (h+1)*d]
			got := one[h*st : h*st+rows+1]
			got[rows] = 42
			v.f(got[:rows], k, qh)
			if got[rows] != 42 {
				t.Fatalf("scoresQ4 %s wrote past %d rows", v.name, rows)
			}
			want := make([]float32, rows)
			scoresQ4Rows(want, k, qh)
			for i := range rows {
				var abs float64
				for j := range d {
					e, _ := q4Elem(k[i*rb:], j)
					abs += math.Abs(e * float64(qh[j]))
				}
				if !closeDot(got[i], want[i], abs, d) {
					t.Fatalf("scoresQ4 %s head %d row %d = %v, Go %v (Σ|k·q| %g)", v.name, h, i, got[i], want[i], abs)
				}
			}
		}
		alone[v.name] = one
	}
	for heads := 2; heads <= 4 && rows > 0; heads++ {
		for _, v := range kern.scoresQ4xN.all[1:] {
			one, ok := alone[v.name]
			if !ok {
				t.Fatalf("scoresQ4xN %s has no one-head twin", v.name)
			}
			multi := make([]float32, 4*st)
			n := v.f(multi, st, rows, k, q[:heads*d], d)
			if want := xnHeads(v.name, heads); n != want {
				t.Fatalf("scoresQ4xN %s took %d heads of %d, want %d", v.name, n, heads, want)
			}
			for h := range n {
				for i := range rows {
					if a, b := math.Float32bits(multi[h*st+i]), math.Float32bits(one[h*st+i]); a != b {
						t.Fatalf("scoresQ4xN %s of %d head %d row %d = %v, alone %v", v.name, heads, h, i, multi[h*st+i], one[h*st+i])
					}
				}
			}
		}
	}

	// Values: the twin, then every variant's bits against the first.
	init := f32Row(r, 4*d, 0, 1)
	want := append([]float32(nil), init...)
	var bound []float64
	for h := range 4 {
		wh := w[h*st : h*st+rows]
		valuesQ4Rows(want[h*d:(h+1)*d], wh, k)
		for j := range d {
			b := math.Abs(float64(init[h*d+j]))
			for i := range rows {
				e, _ := q4Elem(k[i*rb:], j)
				b += math.Abs(float64(wh[i]) * e)
			}
			bound = append(bound, b)
		}
	}
	var ref []float32
	refName := ""
	check := func(name string, got []float32) {
		for j := range got {
			// Each row's addition rounds the running sum once (the twin's
			// pairs twice, and their products).
			if g, x := float64(got[j]), float64(want[j]); math.Abs(g-x) > 0x1p-23*float64(rows+2)*bound[j] {
				t.Fatalf("%s [%d] = %v, Go %v (bound %g)", name, j, got[j], want[j], bound[j])
			}
		}
		if ref == nil {
			ref, refName = got, name
			return
		}
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(ref[j]) {
				t.Fatalf("%s [%d] = %v, %s %v", name, j, got[j], refName, ref[j])
			}
		}
	}
	for _, v := range kern.valuesQ4.all[1:] {
		if d%v.mult != 0 {
			continue
		}
		got := append([]float32(nil), init...)
		for h := range 4 {
			v.f(got[h*d:(h+1)*d], w[h*st:h*st+rows], k[:rows*rb])
		}
		check("valuesQ4 "+v.name, got)
	}
	for heads := 2; heads <= 4 && rows > 0; heads++ {
		for _, v := range kern.valuesQ4xN.all[1:] {
			got := append([]float32(nil), init...)
			n := v.f(got[:heads*d], w, st, rows, k, d)
			if want := xnHeads(v.name, heads); n != want {
				t.Fatalf("valuesQ4xN %s took %d heads of %d, want %d", v.name, n, heads, want)
			}
			// The heads it did not take, as the one-head kernels leave them.
			for h := n; h < 4; h++ {
				valuesQ4(got[h*d:(h+1)*d], w[h*st:h*st+rows], k[:rows*rb])
			}
			check(fmt.Sprintf("valuesQ4xN %s of %d", v.name, heads), got)
		}
	}

	// What attention calls, whichever kernels it picks: the same bits as
	// its one-head kernels.
	if rows > 0 {
		a, b := make([]float32, 4*st), make([]float32, 4*st)
		scoresQ4Heads(a, st, rows, k, q, d)
		for h := range 4 {
			scoresQ4(b[h*st:h*st+rows], k, q[h*d:(h+1)*d])
		}
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("scoresQ4Heads [%d] = %v, one head at a time %v", i, a[i], b[i])
			}
		}
		oa, ob := append([]float32(nil), init...), append([]float32(nil), init...)
		valuesQ4Heads(oa, w, st, rows, k, d)
		for h := range 4 {
			valuesQ4(ob[h*d:(h+1)*d], w[h*st:h*st+rows], k[:rows*rb])
		}
		for i := range oa {
			if math.Float32bits(oa[i]) != math.Float32bits(ob[i]) {
				t.Fatalf("valuesQ4Heads [%d] = %v, one head at a time %v", i, oa[i], ob[i])
			}
		}
	}
}
