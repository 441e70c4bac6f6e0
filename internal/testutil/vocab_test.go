package testutil

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSPMVocab(t *testing.T) {
	for _, size := range []int{MinVocab, 300, 320, 1000, 5000} {
		v, err := SPMVocab(size)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Tokens) != size || len(v.Scores) != size || len(v.Types) != size {
			t.Fatalf("size %d: %d tokens, %d scores, %d types", size, len(v.Tokens), len(v.Scores), len(v.Types))
		}
		want := []string{"<unk>", "<s>", "</s>"}
		wantTypes := []int32{TokenUnknown, TokenControl, TokenControl}
		for i := range want {
			if v.Tokens[i] != want[i] || v.Types[i] != wantTypes[i] {
				t.Errorf("token %d: %q type %d, want %q type %d", i, v.Tokens[i], v.Types[i], want[i], wantTypes[i])
			}
		}
		for b := range 256 {
			if tok := v.Tokens[3+b]; tok != fmt.Sprintf("<0x%02X>", b) || v.Types[3+b] != TokenByte {
				t.Errorf("token %d: %q type %d, want byte 0x%02X", 3+b, tok, v.Types[3+b], b)
			}
		}
		seen := map[string]bool{}
		for i, tok := range v.Tokens {
			if seen[tok] {
				t.Errorf("size %d: duplicate token %q", size, tok)
			}
			seen[tok] = true
			if i < MinVocab {
				continue
			}
			if v.Types[i] != TokenNormal {
				t.Errorf("token %q: type %d", tok, v.Types[i])
			}
			if i > MinVocab && v.Scores[i] >= v.Scores[i-1] {
				t.Errorf("token %q: score %v not below the previous %v", tok, v.Scores[i], v.Scores[i-1])
			}
			// Each piece's prefix minus its last rune must come earlier.
			if _, n := utf8.DecodeLastRuneInString(tok); n < len(tok) && !seen[tok[:len(tok)-n]] {
				t.Errorf("token %q: prefix %q missing or later", tok, tok[:len(tok)-n])
			}
		}
		var must []string
		switch {
		case size >= 1000:
			must = []string{"▁", "a", "z", "▁the", "▁The", "▁Once", "▁quick", "▁z", ".", "9", "▁ab", "ab"}
		case size >= 320:
			must = []string{"▁", "a", "z", "▁the", "▁a", "▁and"}
		}
		for _, tok := range must {
			if !seen[tok] {
				t.Errorf("size %d: no %q", size, tok)
			}
		}
	}
	if _, err := SPMVocab(MinVocab - 1); err == nil || !strings.Contains(err.Error(), "smaller") {
		t.Errorf("SPMVocab(%d): error %v", MinVocab-1, err)
	}
}
