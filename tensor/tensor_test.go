package tensor

import (
	"testing"

	"github.com/lowmem/llm/quant"
)

func TestViewChecksSize(t *testing.T) {
	cases := []struct {
		name  string
		typ   quant.Type
		shape []int
		bytes int
		ok    bool
	}{
		{"f32 exact", quant.F32, []int{4, 3}, 48, true},
		{"f32 short", quant.F32, []int{4, 3}, 47, false},
		{"q8_0 exact", quant.Q8_0, []int{64, 2}, 2 * 2 * 34, true},
		{"q8_0 partial block", quant.Q8_0, []int{48, 2}, 0, false},
		{"q4_k", quant.Q4_K, []int{256, 5}, 5 * 144, true},
		{"zero dim", quant.F32, []int{4, 0}, 0, false},
		{"no dims", quant.F32, nil, 0, false},
		{"unknown type", quant.Type(99), []int{4}, 16, false},
	}
	for _, c := range cases {
		tt, err := View(c.name, c.typ, c.shape, make([]byte, c.bytes))
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok=%v", c.name, err, c.ok)
			continue
		}
		if c.ok && (!tt.Borrowed() || tt.Bytes() != int64(c.bytes)) {
			t.Errorf("%s: borrowed=%v bytes=%d", c.name, tt.Borrowed(), tt.Bytes())
		}
	}
}

func TestRows(t *testing.T) {
	tt, err := New("w", quant.Q8_0, []int{64, 3, 2})
	if err != nil {
		t.Fatal(err)
	}
	if tt.Rows() != 6 || tt.Cols() != 64 || tt.RowBytes() != 68 {
		t.Fatalf("rows %d cols %d rowbytes %d", tt.Rows(), tt.Cols(), tt.RowBytes())
	}
	tt.Row(5)[0] = 7
	if tt.Data[5*68] != 7 || len(tt.Row(2)) != 68 || cap(tt.Row(2)) != 68 {
		t.Fatal("Row does not share memory or leaks capacity")
	}
}
