package seq

import (
	"math/rand/v2"
	"strings"
	"testing"
)

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

// TestTextOutMatchesNaive checks textOut's incremental stop matching
// against a direct search of the whole text, on random pieces over a
// two-letter alphabet, where stop strings overlap themselves and each
// other: the same text released, the same stop found at the same place.
func TestTextOutMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab"[rng.IntN(2)]
		}
		return string(b)
	}
	for range 3000 {
		var stops []string
		for range 1 + rng.IntN(3) {
			stops = append(stops, word(1+rng.IntN(5)))
		}
		o := newTextOut(stops)
		text, released := "", ""
		for range 12 {
			p := word(rng.IntN(4))
			text += p
			got, stop := o.add([]byte(p))
			released += got
			// The stop that ends first in the text (the first listed on a tie).
			end, which := -1, ""
			for _, st := range stops {
				if i := strings.Index(text, st); i >= 0 && (end < 0 || i+len(st) < end) {
					end, which = i+len(st), st
				}
			}
			if end >= 0 {
				if !stop || released != text[:end-len(which)] {
					t.Fatalf("stops %q, text %q: released %q stop=%v, want %q and a stop", stops, text, released, stop, text[:end-len(which)])
				}
				break
			}
			keep := 0
			for _, st := range stops {
				for k := min(len(st)-1, len(text)); k > keep; k-- {
					if strings.HasPrefix(st, text[len(text)-k:]) {
						keep = k
						break
					}
				}
			}
			if stop || released != text[:len(text)-keep] {
				t.Fatalf("stops %q, text %q: released %q stop=%v, want %q", stops, text, released, stop, text[:len(text)-keep])
			}
		}
	}
}

// TestTextOutLongStop feeds a stop string of a mebibyte that the text keeps
// almost matching: each piece must cost time in its own length, not the
// stop's (the old search was quadratic in it).
func TestTextOutLongStop(t *testing.T) {
	stop := strings.Repeat("a", 1<<20) + "b"
	o := newTextOut([]string{stop})
	for i := range 1 << 12 {
		got, done := o.add([]byte("aaaa"))
		if got != "" || done {
			t.Fatalf("piece %d: released %q, stop %v", i, got, done)
		}
	}
	got, done := o.add([]byte("ac"))
	if done || len(got) != 4<<12+2 {
		t.Fatalf("after the mismatch: released %d bytes, stop %v", len(got), done)
	}
}
