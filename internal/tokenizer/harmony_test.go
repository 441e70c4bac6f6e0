package tokenizer

import (
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// gpt-oss's vocabulary (o200k_harmony) marks its chat markers as control
// tokens and names <|return|> as EOS. llama.cpp's loader then ends
// generation at <|return|>, <|call|> and <|endoftext|> but not at <|end|>
// (which closes a channel message the model goes on after), and makes
// <|end|> and the channel markers user-defined, so that they are parsed in
// prompts and show in generated text. A synthetic byte-level vocabulary
// with the gpt-4o pre-tokenizer and those tokens checks all of it.
func TestHarmonySpecialTokens(t *testing.T) {
	bpe, err := testutil.BPEVocab(600)
	if err != nil {
		t.Fatal(err)
	}
	markers := []string{"<|startoftext|>", "<|return|>", "<|constrain|>", "<|channel|>", "<|start|>", "<|end|>", "<|message|>", "<|call|>"}
	v := Vocab{Model: "gpt2", Pre: "gpt-4o", Tokens: slices.Clone(bpe.Tokens), Types: slices.Clone(bpe.Types), Merges: bpe.Merges}
	id := map[string]int32{"<|endoftext|>": testutil.BPEEndOfText}
	for _, m := range markers {
		id[m] = int32(len(v.Tokens))
		v.Tokens = append(v.Tokens, m)
		v.Types = append(v.Types, TypeControl)
	}
	v.ClearSpecial()
	v.BOS, v.EOS = id["<|startoftext|>"], id["<|return|>"]
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{id["<|endoftext|>"], id["<|return|>"], id["<|call|>"]}
	slices.Sort(want)
	if got := tok.EOG(); !slices.Equal(got, want) {
		t.Errorf("EOG = %v, want %v (<|endoftext|>, <|return|>, <|call|>)", got, want)
	}
	for _, c := range []struct {
		text         string
		eog, control bool
		output       string
	}{
		{"<|return|>", true, true, ""},
		{"<|call|>", true, true, ""},
		{"<|endoftext|>", true, true, ""},
		{"<|end|>", false, false, "<|end|>"},
		{"<|start|>", false, false, "<|start|>"},
		{"<|channel|>", false, false, "<|channel|>"},
		{"<|message|>", false, false, "<|message|>"},
		{"<|constrain|>", false, false, "<|constrain|>"},
		{"<|startoftext|>", false, true, ""},
	} {
		j := id[c.text]
		if got := tok.IsEOG(j); got != c.eog {
			t.Errorf("IsEOG(%s) = %v, want %v", c.text, got, c.eog)
		}
		if got := tok.IsControl(j); got != c.control {
			t.Errorf("IsControl(%s) = %v, want %v", c.text, got, c.control)
		}
		if got := string(tok.OutputPiece(j)); got != c.output {
			t.Errorf("OutputPiece(%s) = %q, want %q", c.text, got, c.output)
		}
	}
	// A rendered prompt's markers are single tokens, user-defined or not.
	prompt := "<|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>final<|message|>"
	ids := tok.EncodeSpecial(prompt, false)
	var marks []int32
	for _, j := range ids {
		if j >= id[markers[0]] {
			marks = append(marks, j)
		}
	}
	wantMarks := []int32{id["<|start|>"], id["<|message|>"], id["<|end|>"], id["<|start|>"], id["<|channel|>"], id["<|message|>"]}
	if !slices.Equal(marks, wantMarks) {
		t.Errorf("EncodeSpecial(%q) markers %v, want %v (all ids %v)", prompt, marks, wantMarks, ids)
	}
	if got := tok.Decode(ids); got != prompt {
		t.Errorf("Decode(EncodeSpecial) = %q, want %q", got, prompt)
	}
	// Without <|call|> the workaround does not apply: <|end|> ends generation.
	v.Tokens[id["<|call|>"]] = "<|nocall|>"
	tok, err = New(v)
	if err != nil {
		t.Fatal(err)
	}
	if !tok.IsEOG(id["<|end|>"]) || !tok.IsControl(id["<|end|>"]) {
		t.Errorf("without <|call|>: <|end|> EOG %v control %v, want both", tok.IsEOG(id["<|end|>"]), tok.IsControl(id["<|end|>"]))
	}
}
