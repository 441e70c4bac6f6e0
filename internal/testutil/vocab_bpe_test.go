package testutil

import (
	"strings"
	"testing"
)

func TestBPEVocab(t *testing.T) {
	if _, err := BPEVocab(MinBPEVocab - 1); err == nil {
		t.Error("BPEVocab below the minimum succeeded")
	}
	for _, size := range []int{MinBPEVocab, 300, 1000, 5000} {
		v, err := BPEVocab(size)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Tokens) != size || len(v.Types) != size || v.Scores != nil {
			t.Fatalf("size %d: %d tokens, %d types, %d scores", size, len(v.Tokens), len(v.Types), len(v.Scores))
		}
		if v.Tokens[BPEEndOfText] != "<|endoftext|>" || v.Types[BPEEndOfText] != TokenControl {
			t.Errorf("token %d is %q", BPEEndOfText, v.Tokens[BPEEndOfText])
		}
		ids := map[string]int{}
		for i, tok := range v.Tokens {
			if _, dup := ids[tok]; dup {
				t.Fatalf("duplicate token %q", tok)
			}
			ids[tok] = i
		}
		for i, m := range v.Merges {
			l, r, ok := strings.Cut(m, " ")
			_, okl := ids[l]
			_, okr := ids[r]
			j, okm := ids[l+r]
			if !ok || !okl || !okr || !okm || j < ids[l] || j < ids[r] {
				t.Errorf("merge %d %q: parts or result missing or later", i, m)
			}
		}
	}
}

func TestWPMVocab(t *testing.T) {
	v := WPMVocab()
	want := map[int32]string{WPMPad: "[PAD]", WPMUnk: "[UNK]", WPMCLS: "[CLS]", WPMSEP: "[SEP]", WPMMask: "[MASK]"}
	for id, s := range want {
		if v.Tokens[id] != s || v.Types[id] != TokenControl {
			t.Errorf("token %d is %q type %d, want control %q", id, v.Tokens[id], v.Types[id], s)
		}
	}
	seen := map[string]bool{}
	for _, tok := range v.Tokens {
		if seen[tok] {
			t.Fatalf("duplicate token %q", tok)
		}
		seen[tok] = true
	}
	for _, s := range []string{"▁the", "▁a", "a", "▁!", "!", "ing"} {
		if !seen[s] {
			t.Errorf("token %q missing", s)
		}
	}
}
