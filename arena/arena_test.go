package arena

import (
	"testing"
	"unsafe"
)

// span is the byte range a slice occupies.
type span struct{ lo, hi uintptr }

func spanOf[T any](s []T) span {
	if cap(s) == 0 {
		return span{}
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return span{p, p + uintptr(cap(s))*unsafe.Sizeof(s[0])}
}

// fillChecked checks that s, which fn returned for n elements, has length
// and capacity n, fills it with v and returns its span.
func fillChecked[T any](t *testing.T, fn string, s []T, n int, v T) span {
	t.Helper()
	if len(s) != n || cap(s) != n {
		t.Fatalf("%s(%d): len %d cap %d", fn, n, len(s), cap(s))
	}
	for j := range s {
		s[j] = v
	}
	return spanOf(s)
}

func TestAlignment(t *testing.T) {
	a := New(4096)
	for _, n := range []int{1, 3, 7, 16, 17, 63, 64, 65, 1000} {
		for _, p := range []uintptr{
			spanOf(a.Bytes(n)).lo,
			spanOf(a.Float32s(n)).lo,
			spanOf(a.Zeroed32(n)).lo,
		} {
			if p%Align != 0 {
				t.Fatalf("n=%d: start %#x not %d-byte aligned", n, p, Align)
			}
		}
	}
	if a.Overflows() == 0 {
		t.Fatal("test meant to cover overflow blocks too, but none happened")
	}
}

func TestNoAliasing(t *testing.T) {
	a := New(1024)
	var spans []span
	// Mixed sizes and types, beyond the chunk so overflow blocks are included.
	for i := 1; i <= 40; i++ {
		if i%2 == 0 {
			spans = append(spans, fillChecked(t, "Float32s", a.Float32s(i*3), i*3, float32(i)))
		} else {
			spans = append(spans, fillChecked(t, "Bytes", a.Bytes(i*5), i*5, byte(i)))
		}
	}
	for i := range spans {
		for j := i + 1; j < len(spans); j++ {
			if spans[i].lo < spans[j].hi && spans[j].lo < spans[i].hi {
				t.Fatalf("slices %d %#x..%#x and %d %#x..%#x overlap",
					i, spans[i].lo, spans[i].hi, j, spans[j].lo, spans[j].hi)
			}
		}
	}
}

func TestContentsSurviveUntilReset(t *testing.T) {
	a := New(256)
	x := a.Float32s(10)
	for i := range x {
		x[i] = float32(i) + 0.5
	}
	y := a.Zeroed32(10)
	for i, v := range y {
		if v != 0 {
			t.Fatalf("Zeroed32[%d] = %v", i, v)
		}
	}
	b := a.Bytes(100) // 64+64+128 bytes: exactly fills the chunk
	for i := range b {
		b[i] = 0xff
	}
	for i, v := range x {
		if v != float32(i)+0.5 {
			t.Fatalf("x[%d] = %v after later requests", i, v)
		}
	}
	if a.Overflows() != 0 {
		t.Fatalf("Overflows %d, want 0", a.Overflows())
	}
}

func TestZeroed32AfterReset(t *testing.T) {
	a := New(128)
	x := a.Float32s(32)
	for i := range x {
		x[i] = 7
	}
	a.Reset()
	y := a.Zeroed32(32)
	if spanOf(x) != spanOf(y) {
		t.Fatal("expected the same memory after Reset")
	}
	for i, v := range y {
		if v != 0 {
			t.Fatalf("Zeroed32[%d] = %v, want 0", i, v)
		}
	}
}

func TestNonPositive(t *testing.T) {
	a := New(128)
	if s := a.Float32s(0); s != nil {
		t.Errorf("Float32s(0) = %v, want nil", s)
	}
	if s := a.Zeroed32(-1); s != nil {
		t.Errorf("Zeroed32(-1) = %v, want nil", s)
	}
	if b := a.Bytes(-5); b != nil {
		t.Errorf("Bytes(-5) = %v, want nil", b)
	}
	if a.Used() != 0 || a.HighWater() != 0 || a.Overflows() != 0 {
		t.Errorf("Used %d HighWater %d Overflows %d, want all 0", a.Used(), a.HighWater(), a.Overflows())
	}
	if New(-10).Cap() != 0 {
		t.Error("New(-10).Cap() != 0")
	}
}

func TestAccounting(t *testing.T) {
	type req struct {
		float bool
		n     int
	}
	tests := []struct {
		name string
		size int
		reqs []req
		used int // after the requests
		cap  int // New's rounding
		over int // overflow count after the requests
	}{
		{"empty", 100, nil, 0, 128, 0},
		{"one byte", 128, []req{{false, 1}}, 64, 128, 0},
		{"exact fit", 128, []req{{true, 16}, {false, 64}}, 128, 128, 0},
		{"rounding", 1024, []req{{true, 17}, {false, 65}, {true, 1}}, 128 + 128 + 64, 1024, 0},
		{"overflow", 128, []req{{true, 16}, {true, 17}, {false, 1}}, 64 + 128 + 64, 128, 1},
		{"zero chunk", 0, []req{{false, 10}, {true, 100}}, 64 + 448, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(tt.size)
			if a.Cap() != tt.cap {
				t.Fatalf("Cap = %d, want %d", a.Cap(), tt.cap)
			}
			for _, r := range tt.reqs {
				if r.float {
					a.Float32s(r.n)
				} else {
					a.Bytes(r.n)
				}
			}
			if a.Used() != tt.used || a.HighWater() != tt.used {
				t.Fatalf("Used %d HighWater %d, want %d", a.Used(), a.HighWater(), tt.used)
			}
			if a.Overflows() != tt.over {
				t.Fatalf("Overflows %d, want %d", a.Overflows(), tt.over)
			}
			a.Reset()
			if a.Used() != 0 || a.HighWater() != tt.used {
				t.Fatalf("after Reset: Used %d HighWater %d, want 0 and %d", a.Used(), a.HighWater(), tt.used)
			}
			wantCap := max(tt.cap, tt.used)
			if a.Cap() != wantCap {
				t.Fatalf("after Reset: Cap %d, want %d", a.Cap(), wantCap)
			}
		})
	}
}

func TestHighWaterIsMaximumOverSteps(t *testing.T) {
	a := New(1 << 12)
	for _, n := range []int{10, 300, 20, 299, 5} { // in float32s: 64, 1216, 128, 1216, 64 bytes
		a.Reset()
		a.Float32s(n)
	}
	if want := 1216; a.HighWater() != want {
		t.Fatalf("HighWater %d, want %d", a.HighWater(), want)
	}
	if a.Used() != 64 {
		t.Fatalf("Used %d, want 64", a.Used())
	}
}

func TestOverflowConsolidates(t *testing.T) {
	a := New(256)
	step := func() {
		a.Reset()
		a.Float32s(50)  // 256 bytes: fills the chunk
		a.Bytes(1000)   // 1024: overflow until consolidated
		a.Zeroed32(300) // 1216: overflow until consolidated
		a.Bytes(1)      // 64
	}
	step()
	if a.Overflows() != 3 { // the Bytes(1) overflows too: the chunk is full
		t.Fatalf("Overflows after first step %d, want 3", a.Overflows())
	}
	if want := 256 + 1024 + 1216 + 64; a.Used() != want || a.HighWater() != want {
		t.Fatalf("Used %d HighWater %d, want %d", a.Used(), a.HighWater(), want)
	}
	step()
	if a.Cap() != a.HighWater() {
		t.Fatalf("Cap %d after consolidation, want HighWater %d", a.Cap(), a.HighWater())
	}
	if a.Overflows() != 3 {
		t.Fatalf("Overflows %d after warm-up, want still 3", a.Overflows())
	}
}

func TestNoAllocationsAfterWarmUp(t *testing.T) {
	a := New(64) // deliberately too small
	step := func() {
		a.Reset()
		x := a.Float32s(4096)
		y := a.Zeroed32(1000)
		q := a.Bytes(4352)
		x[0], y[0], q[0] = 1, 2, 3
	}
	step() // warm-up: overflows
	step() // consolidating Reset
	if got := testing.AllocsPerRun(100, step); got != 0 {
		t.Fatalf("%v allocations per step after warm-up, want 0", got)
	}
	if a.Overflows() != 3 {
		t.Fatalf("Overflows %d, want 3 (first step only)", a.Overflows())
	}
}

func BenchmarkStep(b *testing.B) {
	a := New(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		a.Reset()
		for range 16 {
			a.Float32s(4096)
			a.Bytes(4352)
		}
	}
}
