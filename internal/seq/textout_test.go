package seq

import "testing"

func TestTextOut(t *testing.T) {
	cases := []struct {
		name   string
		stops  []string
		pieces []string
		want   []string // released text after each piece
		stopAt int      // index of the piece that completes a stop, -1 for none
		rest   string
	}{
		{"plain", nil, []string{"a", "b"}, []string{"a", "b"}, -1, ""},
		{"stop inside one piece", []string{"END"}, []string{"xx", "yENDz"}, []string{"xx", "y"}, 1, ""},
		{"stop across pieces", []string{"END"}, []string{"aE", "N", "Dq"}, []string{"a", "", ""}, 2, ""},
		{"false start released", []string{"END"}, []string{"aE", "x"}, []string{"a", "Ex"}, -1, ""},
		{"held at the end", []string{"END"}, []string{"aEN"}, []string{"a"}, -1, "EN"},
		{"split utf-8", nil, []string{"\xe2\x82", "\xac!"}, []string{"", "€!"}, -1, ""},
	}
	for _, c := range cases {
		o := newTextOut(c.stops)
		for i, p := range c.pieces {
			got, stop := o.add([]byte(p))
			if got != c.want[i] || stop != (i == c.stopAt) {
				t.Errorf("%s: piece %d: got %q stop=%v, want %q stop=%v", c.name, i, got, stop, c.want[i], i == c.stopAt)
			}
			if stop {
				break
			}
		}
		if c.stopAt < 0 {
			if r := o.flush(); r != c.rest {
				t.Errorf("%s: flush %q, want %q", c.name, r, c.rest)
			}
		}
	}
}
