package tokenizer

import (
	"fmt"
	"strings"
	"testing"
)

// TestCheckDraft: a draft vocabulary is refused as llama.cpp's
// common_speculative_are_compatible refuses it, naming the difference;
// the first ids' texts, and the sizes within 128, may differ.
func TestCheckDraft(t *testing.T) {
	vocab := func(n int, change func(v *Vocab)) *Tokenizer {
		v := Vocab{Model: "llama", Tokens: make([]string, n)}
		v.ClearSpecial()
		for i := range v.Tokens {
			v.Tokens[i] = fmt.Sprintf("t%d", i)
		}
		v.BOS, v.EOS, v.AddBOS = 1, 2, true
		return edited(t, v, change)
	}
	target := vocab(300, nil)
	for _, tc := range []struct {
		name  string
		draft *Tokenizer
		want  string // "" accepts
	}{
		{"same", vocab(300, nil), ""},
		{"special texts before 5", vocab(300, func(v *Vocab) { v.Tokens[4] = "<x>" }), ""},
		{"128 fewer", vocab(172, nil), ""},
		{"129 more", vocab(429, nil), "429 tokens, the model's 300"},
		{"tokenizer model", vocab(300, func(v *Vocab) { v.Model = "bert" }), "tokenizer is bert"},
		{"BOS id", vocab(300, func(v *Vocab) { v.BOS = 3 }), "BOS differs"},
		{"BOS added", vocab(300, func(v *Vocab) { v.AddBOS = false }), "BOS differs"},
		{"EOS added", vocab(300, func(v *Vocab) { v.AddEOS = true }), "EOS differs"},
		{"token text", vocab(300, func(v *Vocab) { v.Tokens[200], v.Tokens[250] = "x", "y" }), `token 200 is "x"`},
	} {
		err := target.CheckDraft(tc.draft)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}
