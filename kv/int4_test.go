package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestHadamardKnownValues(t *testing.T) {
	for _, tc := range []struct {
		n       int
		in, out []float32
	}{
		{2, []float32{1, 0}, []float32{1 / math.Sqrt2, 1 / math.Sqrt2}},
		{2, []float32{3, 1, -2, 2}, []float32{4 / math.Sqrt2, 2 / math.Sqrt2, 0, -4 / math.Sqrt2}}, // two blocks
		{4, []float32{1, 2, 3, 4}, []float32{5, -1, -2, 0}},
		{4, []float32{0, 0, 1, 0}, []float32{0.5, 0.5, -0.5, -0.5}},
		{8, []float32{8, 0, 0, 0, 0, 0, 0, 0}, slices.Repeat([]float32{8 / float32(math.Sqrt(8))}, 8)},
		{0, []float32{1, 2, 3}, []float32{1, 2, 3}}, // order 0: not rotated
	} {
		x := slices.Clone(tc.in)
		hadamard(x, tc.n)
		for i := range x {
			if math.Abs(float64(x[i]-tc.out[i])) > 1e-6 {
				t.Errorf("H%d %v = %v, want %v", tc.n, tc.in, x, tc.out)
				break
			}
		}
	}
}

// TestHadamardMatchesMatrix checks the fast transform against the matrix
// product with Sylvester's matrix, orthonormality (norms and inner products
// kept) and that applying it twice gives the input back.
func TestHadamardMatchesMatrix(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 2; n <= MaxHeadDim; n *= 2 {
		x, y := randVec(r, 2*n, 1), randVec(r, 2*n, 1)
		x[3] = 40 // an outlier
		hx, hy := slices.Clone(x), slices.Clone(y)
		hadamard(hx, n)
		hadamard(hy, n)
		want := refRotate(f64s(x), n)
		var dot, hdot, norm, hnorm float64
		for i := range x {
			if d := math.Abs(float64(hx[i]) - want[i]); d > 1e-5*math.Sqrt(float64(n)) {
				t.Fatalf("n=%d: element %d = %v, matrix product %v", n, i, hx[i], want[i])
			}
			dot += float64(x[i]) * float64(y[i])
			hdot += float64(hx[i]) * float64(hy[i])
			norm += float64(x[i]) * float64(x[i])
			hnorm += float64(hx[i]) * float64(hx[i])
		}
		if math.Abs(hnorm-norm) > 1e-5*norm || math.Abs(hdot-dot) > 1e-5*norm {
			t.Errorf("n=%d: |x|² %v → %v, x·y %v → %v", n, norm, hnorm, dot, hdot)
		}
		hadamard(hx, n)
		for i := range x {
			if math.Abs(float64(hx[i]-x[i])) > 1e-5*(1+math.Abs(float64(x[i]))) {
				t.Fatalf("n=%d: H·H·x element %d = %v, want %v", n, i, hx[i], x[i])
			}
		}
	}
	// The matrix itself: its rows are orthonormal and it is symmetric.
	for _, n := range []int{2, 4, 64} {
		h := refHadamard(n)
		for i := range n {
			e := make([]float32, n)
			e[i] = 1
			hadamard(e, n)
			for j := range n {
				if math.Abs(float64(e[j])-h[j][i]) > 1e-7 || h[i][j] != h[j][i] {
					t.Fatalf("n=%d: column %d of the transform differs from Sylvester's matrix", n, i)
				}
			}
			for j := range n {
				var d float64
				for k := range n {
					d += h[i][k] * h[j][k]
				}
				if want := b2f(i == j); math.Abs(d-want) > 1e-12 {
					t.Fatalf("n=%d: row %d · row %d = %v", n, i, j, d)
				}
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func f64s(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func TestHadamardAllocs(t *testing.T) {
	x := make([]float32, 1024)
	if a := testing.AllocsPerRun(10, func() { hadamard(x, 128) }); a != 0 {
		t.Errorf("hadamard allocates %v times", a)
	}
}

func TestRotationOrders(t *testing.T) {
	for _, tc := range []struct{ dk, dv, rk, rv int }{
		{64, 64, 64, 64},
		{128, 128, 128, 64},
		{256, 512, 256, 64},
		{192, 128, 64, 64}, // 192 = 3·64: blocks of 64
		{320, 64, 64, 64},
		{96, 96, 0, 0}, // not multiples of 64: no rotation
		{32, 128, 0, 64},
		{1024, 96, 1024, 0},
	} {
		rk, rv := rotationOrders(tc.dk, tc.dv)
		if rk != tc.rk || rv != tc.rv {
			t.Errorf("rotationOrders(%d, %d) = %d, %d, want %d, %d", tc.dk, tc.dv, rk, rv, tc.rk, tc.rv)
		}
		if rk, rv := refRotationOrders(tc.dk, tc.dv); rk != tc.rk || rv != tc.rv {
			t.Errorf("refRotationOrders(%d, %d) = %d, %d, want %d, %d", tc.dk, tc.dv, rk, rv, tc.rk, tc.rv)
		}
	}
}

func TestNewInt4HeadDims(t *testing.T) {
	for _, tc := range []struct {
		dk, dv int
		ok     bool
	}{
		{64, 64, true}, {96, 32, true}, {256, 512, true},
		{80, 64, false}, {64, 48, false}, {8, 8, false}, {16, 32, false},
	} {
		c, err := New(Config{Layers: 1, KVHeads: 2, HeadDimK: tc.dk, HeadDimV: tc.dv, Cells: 4, Type: Int4})
		switch {
		case tc.ok && err != nil:
			t.Errorf("dims %d/%d: %v", tc.dk, tc.dv, err)
		case !tc.ok && !errors.Is(err, ErrInvalid):
			t.Errorf("dims %d/%d: err = %v, want ErrInvalid", tc.dk, tc.dv, err)
		case tc.ok && c.Bytes() != 2*4*int64(tc.dk+tc.dv)/32*18:
			t.Errorf("dims %d/%d: Bytes() = %d", tc.dk, tc.dv, c.Bytes())
		}
	}
}

// TestStoreInt4 checks the stored blocks bit for bit against refQ4Fit in
// llama.cpp's q4_0 layout, unrotated (head size 32) and rotated (64: keys and values
// by H64), in the layout [head][cell][blocks].
func TestStoreInt4(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, d := range []int{32, 64} {
		c, err := New(Config{Layers: 1, KVHeads: 2, HeadDimK: d, HeadDimV: d, Cells: 3, Type: Int4})
		if err != nil {
			t.Fatal(err)
		}
		order, _ := cacheRotationOrders(d, d)
		l := &c.layers[0]
		rb := q4RowBytes(d)
		for pos := range 3 {
			k, v := randVec(r, 2*d, 1), randVec(r, 2*d, 2)
			k[5], v[d+7] = -9, 30 // outliers
			if err := c.Store(0, pos, k, v); err != nil {
				t.Fatal(err)
			}
			for h := range 2 {
				row := h*l.cells + pos
				for _, kv := range []struct {
					src    []float32
					stored []byte
				}{{k[h*d : (h+1)*d], l.k4[row*rb : (row+1)*rb]}, {v[h*d : (h+1)*d], l.v4[row*rb : (row+1)*rb]}} {
					x := slices.Clone(kv.src)
					hadamard(x, order)
					codes, scales := refQ4Fit(x)
					for b := range d / 32 {
						blk := kv.stored[b*18 : (b+1)*18]
						if got := float64(q4Scale(blk)); got != scales[b] {
							t.Fatalf("d=%d pos %d head %d block %d: scale %v, want %v", d, pos, h, b, got, scales[b])
						}
						for j := range 16 {
							lo, hi := int(blk[2+j]&15), int(blk[2+j]>>4)
							if lo != codes[b*32+j] || hi != codes[b*32+j+16] {
								t.Fatalf("d=%d pos %d head %d block %d byte %d: codes %d,%d, want %d,%d",
									d, pos, h, b, j, lo, hi, codes[b*32+j], codes[b*32+j+16])
							}
						}
					}
				}
			}
		}
	}
}

// TestAttendInt4MatchesReference compares Int4 attention with a float64
// computation over the rows the cache holds (refInt4Row: the exact
// dequantized, un-rotated rows), so that only float32 arithmetic separates
// them: |out − reference| ≤ 1e-5. Head sizes cover the whole-head rotation
// (64, 128), blockwise keys (192 = 3·64), no rotation (96 and 32), and K and
// V of different sizes; GQA with 4 query heads per KV head, windows,
// soft-capping and batched stores as the other types.
func TestAttendInt4MatchesReference(t *testing.T) {
	cells := 150
	if testing.Short() {
		cells = 70 // still past the window; -race is slow on the reference
	}
	for _, dims := range [][2]int{{64, 64}, {128, 64}, {192, 128}, {96, 32}} {
		for _, win := range []int{0, 64} {
			for _, softcap := range []float32{0, 2} {
				batch := 1
				if softcap > 0 {
					batch = 16
				}
				name := fmt.Sprintf("dims%dx%d/window%d/softcap%v/batch%d", dims[0], dims[1], win, softcap, batch)
				t.Run(name, func(t *testing.T) {
					testAttendReference(t, Int4, win, AttnParams{Softcap: softcap}, batch, 8, 2, dims[0], dims[1], cells, 0)
				})
			}
		}
	}
}

// TestAttendInt4RecentMatchesReference is TestAttendInt4MatchesReference
// for a cache with Config.Recent: the sinks and the newest positions come
// from F16 copies of the rotated rows, the others from q4_0 blocks.
func TestAttendInt4RecentMatchesReference(t *testing.T) {
	cells := 150
	if testing.Short() {
		cells = 70
	}

	for _, tc := range []struct{ dk, dv, win, batch, recent int }{
		{64, 64, 0, 1, 16},
		{64, 64, 0, 16, 16}, // a chunk's stores take slots the chunk's first queries see
		{128, 64, 64, 1, 8},
		{96, 32, 64, 16, 40},
		{64, 64, 0, 1, 1000}, // an eighth of the cells
	} {
		name := fmt.Sprintf("dims%dx%d/window%d/batch%d/recent%d", tc.dk, tc.dv, tc.win, tc.batch, tc.recent)
		t.Run(name, func(t *testing.T) {
			testAttendReference(t, Int4, tc.win, AttnParams{}, tc.batch, 8, 2, tc.dk, tc.dv, cells, tc.recent)
		})
	}
}

// newRecentRefToken is a token as an Int4 cache's F16 slots hold it, in the
// model's basis: each head's row rotated, rounded to F16, rotated back.
func newRecentRefToken(k, v []float32, kvHeads int) refToken {
	t := refToken{k: k, v: v}
	dk, dv := len(k)/kvHeads, len(v)/kvHeads
	rk, rv := cacheRotationOrders(dk, dv)
	row := func(x []float32, order int) []float64 {
		y := slices.Clone(x)
		hadamard(y, order)
		f := make([]float64, len(y))
		for i, e := range y {
			f[i] = ref16(e)
		}
		return refRotate(f, order)
	}
	for g := range kvHeads {
		t.kc = append(t.kc, row(k[g*dk:(g+1)*dk], rk)...)
		t.vc = append(t.vc, row(v[g*dv:(g+1)*dv], rv)...)
	}
	return t
}

// TestInt4Accuracy bounds what the 4-bit rows cost against exact float64
// attention over the unquantized keys and values, on keys like a model's
// after RoPE: Gaussian with a few channels of much larger magnitude (the
// outliers that make per-block scales coarse). With llama.cpp's rotation
// the relative RMS error of the attention output must stay below 0.12; the
// same cache without rotation is checked to be clearly worse (at least 1.5×
// the error), which is why the rotation is on.
func TestInt4Accuracy(t *testing.T) {
	if !rotateInt4 {
		t.Skip("built with -tags kvnorotate")
	}
	const (
		heads, kvHeads, d, n = 8, 2, 128, 200
	)
	r := rand.New(rand.NewPCG(31, 32))
	outlier := []int{3, 17, 70} // channels 8× the others
	gen := func(sd float64) []float32 {
		x := randVec(r, kvHeads*d, sd)
		for h := range kvHeads {
			for _, c := range outlier {
				x[h*d+c] *= 8
			}
		}
		return x
	}
	ks, vs := make([][]float32, n), make([][]float32, n)
	for i := range n {
		ks[i], vs[i] = gen(1), gen(1)
	}
	q := randVec(r, heads*d, 0.3)
	p := AttnParams{Heads: heads, Scale: float32(1 / math.Sqrt(d))}
	exact := make([]refToken, n)
	for i := range n {
		exact[i] = refToken{kc: f64s(ks[i]), vc: f64s(vs[i])}
	}
	relErr := func(rotate bool) float64 {
		c, err := New(Config{Layers: 1, KVHeads: kvHeads, HeadDimK: d, HeadDimV: d, Cells: n, Type: Int4})
		if err != nil {
			t.Fatal(err)
		}
		l := &c.layers[0]
		if !rotate {
			l.rotK, l.rotV = 0, 0
		} else if l.rotK != 128 || l.rotV != 64 {
			t.Fatalf("rotation orders %d, %d; want 128, 64", l.rotK, l.rotV)
		}
		for i := range n {
			if err := c.Store(0, i, ks[i], vs[i]); err != nil {
				t.Fatal(err)
			}
		}
		out := make([]float32, heads*d)
		if err := c.Attend(0, n-1, q, out, p, 0, heads, make([]float32, n)); err != nil {
			t.Fatal(err)
		}
		var se, ss float64
		for h := range heads {
			want, _ := refAttend(exact, 0, n-1, q, p, kvHeads, d, d, h, false, false)
			for j, x := range want {
				e := float64(out[h*d+j]) - x
				se += e * e
				ss += x * x
			}
		}
		return math.Sqrt(se / ss)
	}
	rot, plain := relErr(true), relErr(false)
	t.Logf("relative RMS error of the attention output: rotated %.4f, not rotated %.4f", rot, plain)
	if rot > 0.12 {
		t.Errorf("rotated Int4: relative RMS error %.4f > 0.12", rot)
	}
	if plain < 1.5*rot {
		t.Errorf("without rotation the error is %.4f, with it %.4f: the rotation should help more", plain, rot)
	}
}

// TestStateInt4Errors checks what a saved Int4 cache refuses besides what
// every type does (TestStateErrors): another rotation, and a block scale
// that is not finite.
func TestStateInt4Errors(t *testing.T) {
	cfg := seqCaseFor(Int4)
	cfg.Cells = 32
	src, _ := New(cfg)
	for pos, tok := range randTokens(rand.New(rand.NewPCG(15, 16)), cfg, 2, 7) {
		step(t, src, tok, pos, 2)
	}
	var buf bytes.Buffer
	if _, err := src.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()

	other, _ := New(cfg)
	other.rotK ^= 64 // as a build that rotates otherwise
	if _, err := other.ReadFrom(bytes.NewReader(data)); !errors.Is(err, ErrBadState) {
		t.Errorf("other rotation: err = %v, want ErrBadState", err)
	}
	// The first stored block follows the header (4+20 bytes, then 16 of
	// Int4's rotation orders, Recent and sinks) and two layers' records
	// (28 bytes each); its scale is its first two bytes.
	bad := slices.Clone(data)
	bad[4+20+16+56+1] = 0x7e // F16 NaN
	dst, _ := New(cfg)
	if _, err := dst.ReadFrom(bytes.NewReader(bad)); !errors.Is(err, ErrBadState) || dst.Len() != 0 {
		t.Errorf("NaN scale: err = %v, Len %d; want ErrBadState and an empty cache", err, dst.Len())
	}
	if _, err := dst.ReadFrom(bytes.NewReader(data)); err != nil || dst.Len() != 7 {
		t.Errorf("the unchanged stream: err = %v, Len %d", err, dst.Len())
	}
}

func TestTypeHeadDims(t *testing.T) {
	for _, tc := range []struct {
		typ    Type
		dk, dv int
		want   bool
	}{
		{F16, 8, 6, true}, {Int8, 80, 80, true}, {Int4, 64, 128, true}, {Int4, 96, 32, true},
		{Int4, 80, 64, false}, {Int4, 64, 8, false},
	} {
		if got := tc.typ.HeadDims(tc.dk, tc.dv); got != tc.want {
			t.Errorf("%v.HeadDims(%d, %d) = %v, want %v", tc.typ, tc.dk, tc.dv, got, tc.want)
		}
	}
}

// TestInt4RecentParts checks which positions an Int4 cache with
// Config.Recent reads from F16 as Truncate, Shift and new stores change
// its slots: the sinks still held (positions lo..a-1) and the newest
// positions whose slots hold them (b..pos).
func TestInt4RecentParts(t *testing.T) {
	c, err := New(Config{Layers: 1, KVHeads: 1, HeadDimK: 32, HeadDimV: 32, Cells: 64, Type: Int4, Recent: 8})
	if err != nil {
		t.Fatal(err)
	}
	k := make([]float32, 32)
	store := func(from, to int) {
		for p := from; p < to; p++ {
			if err := c.Store(0, p, k, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(what string, pos, wantA, wantB int) {
		t.Helper()
		if a, b := c.int4Parts(&c.layers[0], 0, pos); a != wantA || b != wantB {
			t.Errorf("%s: position %d reads F16 for 0..%d and %d..%d, want 0..%d and %d..%d", what, pos, a-1, b, pos, wantA-1, wantB, pos)
		}
	}
	const S = recentSinks // positions 0..S-1 have slots of their own; 8 share the rest
	store(0, 3)
	check("3 stored", 2, 3, 3)
	store(3, S+16)
	check("S+16 stored", S+15, S, S+8)
	check("S+16 stored, an earlier query", S+11, S, S+8) // S+8..S+15 hold the slots
	c.Truncate(S + 11)
	check("truncated to S+11", S+10, S, S+8) // S+11..S+15 forgotten; their slots held S+3..S+7 before
	store(S+11, S+13)
	check("S+12 stored again", S+12, S, S+8)
	if err := c.Shift(2, 5, nil); err != nil {
		t.Fatal(err)
	}
	check("shifted", S+7, 2, S+8) // moved positions are read from q4_0
	store(S+8, S+10)
	check("stored after the shift", S+9, 2, S+8)
	c.Truncate(0)
	store(0, 1)
	check("emptied", 0, 1, 1)
}

// TestQuantizeQ4Error holds the cache's q4_0 quantizer to what its scale
// search is for: no block of rotated-like (Gaussian) or outlier data worse
// than llama.cpp's d = m/−8 (refQ4) beyond F16 rounding of the scale, and
// clearly less squared error over many blocks. Degenerate blocks (all
// zero, NaN, infinities) give in-range codes and no panic.
func TestQuantizeQ4Error(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	blockErr := func(x []float32, codes []int, d float64) float64 {
		var e float64
		for i, v := range x {
			q := float64(v) - d*float64(codes[i]-8)
			e += q * q
		}
		return e
	}
	var ours, theirs float64
	buf := make([]byte, q4BlockBytes)
	for n := range 4000 {
		x := randVec(r, q4Block, 1)
		if n%4 == 0 {
			x[r.IntN(q4Block)] *= 6 // an outlier the rotation missed
		}
		quantizeQ4(buf, x)
		codes := make([]int, q4Block)
		for j := range 16 {
			codes[j], codes[j+16] = int(buf[2+j]&15), int(buf[2+j]>>4)
		}
		rc, rs := refQ4(x)
		e, re := blockErr(x, codes, float64(q4Scale(buf))), blockErr(x, rc, rs[0])
		if e > re*(1+1e-3)+1e-12 {
			t.Fatalf("block %d: squared error %.6g, llama.cpp's scale gives %.6g", n, e, re)
		}
		ours, theirs = ours+e, theirs+re
	}
	t.Logf("squared error over 4000 blocks: %.4g, with d = m/−8 %.4g (%.1f%% less)", ours, theirs, 100*(1-ours/theirs))
	if ours > 0.95*theirs {
		t.Errorf("squared error %.4g is not 5%% below d = m/−8's %.4g", ours, theirs)
	}
	inf := float32(math.Inf(1))
	for _, x := range [][]float32{
		make([]float32, q4Block),
		append(make([]float32, q4Block-1), 3),
		append(make([]float32, q4Block-1), float32(math.NaN())),
		append(make([]float32, q4Block-1), inf),
		append(make([]float32, q4Block-2), -inf, 1e30),
	} {
		quantizeQ4(buf, x) // bytes cannot hold an out-of-range code: no panic is the check
		if x[q4Block-1] == 0 && (q4Scale(buf) != 0 || buf[2] != 0x88) {
			t.Errorf("all-zero block: scale %v, codes %#x", q4Scale(buf), buf[2:])
		}
	}
}

func BenchmarkQuantizeQ4(b *testing.B) {
	x := randVec(rand.New(rand.NewPCG(1, 2)), 128, 1)
	dst := make([]byte, q4RowBytes(128))
	b.SetBytes(128 * 4)
	for b.Loop() {
		quantizeQ4(dst, x)
	}
}
