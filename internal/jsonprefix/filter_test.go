package jsonprefix

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/internal/tokenizer"
)

// pieces is a vocabulary given by its tokens' text; "" is a control token.
type pieces []string

func (p pieces) OutputPiece(id int32) []byte { return []byte(p[id]) }

// TestFilter walks a small vocabulary through an object token by token
// and checks which tokens are allowed at each step.
func TestFilter(t *testing.T) {
	vocab := pieces{"", "{", "}", `"`, "a", `{"`, `":`, "1}", " ", "}x", "\n\n", ","}
	inValue := []int32{1, 2, 3, 4, 5, 7, 8, 9, 11}  // in a string value: all with text but `":` and raw line feeds
	inKey := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 11} // in a key, `":` ends it
	steps := []struct {
		accept  int32   // the token taken before the check (-1: none)
		allowed []int32 // then allowed
	}{
		{-1, []int32{1, 5}},            // the start: the opening brace
		{5, inKey},                     // in a key
		{4, inKey},                     // still in it
		{6, []int32{1, 3, 5, 6, 7, 8}}, // a value: `":` opens a string, "1}" is a number and closes the object
		{8, []int32{1, 3, 5, 6, 7, 8}}, // a value after a space
		{3, inValue},                   // in a string value
	}
	f := NewFilter(vocab, len(vocab), nil)
	for i, st := range steps {
		if st.accept >= 0 && !f.Accept(st.accept) {
			t.Fatalf("step %d: token %d (%q) refused", i, st.accept, vocab[st.accept])
		}
		var got []int32
		for id := range int32(len(vocab)) {
			if f.Allowed(id) {
				got = append(got, id)
			}
		}
		if !slices.Equal(got, st.allowed) {
			t.Fatalf("step %d: allowed %v, want %v", i, got, st.allowed)
		}
	}
	// Close the string, then the object: done, and nothing is allowed.
	for _, id := range []int32{3, 2} {
		if !f.Accept(id) {
			t.Fatalf("token %d (%q) refused", id, vocab[id])
		}
	}
	if !f.Done() {
		t.Fatal("the object is closed but Done is false")
	}
	for id := range int32(len(vocab)) {
		if f.Allowed(id) || f.Accept(id) {
			t.Fatalf("token %d (%q) allowed after the object", id, vocab[id])
		}
	}
}

// TestFilterAcceptRefused: a refused token leaves the filter where it was.
func TestFilterAcceptRefused(t *testing.T) {
	f := NewFilter(pieces{"", "{", "}x", `"`}, 4, nil)
	f.Accept(1)
	before := f.m.cursor
	for _, id := range []int32{0, 2} {
		if f.Accept(id) {
			t.Fatalf("token %d accepted", id)
		}
		if f.m.cursor != before {
			t.Fatalf("refusing token %d moved the filter", id)
		}
	}
}

// realVocab is a tokenizer from the test data, or a skip.
func realVocab(tb testing.TB, name string) *tokenizer.Tokenizer {
	tb.Helper()
	tok, err := tokenizer.FromGGUF(testutil.ReadHeader(tb, testutil.Testdata(tb, "vocab/"+name)))
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// states are texts that leave the machine in the places a generation
// spends its time, for the filter's cost over a whole vocabulary.
var states = []struct{ name, text string }{
	{"start", ``},
	{"key", `{"na`},
	{"value", `{"name": `},
	{"string", `{"name": "Ada `},
	{"after", `{"name": "Ada"`},
	{"number", `{"n": 12`},
}

// TestFilterRealVocabs: over real vocabularies, in every state, with and
// without a schema, Allowed (which settles most tokens from tables)
// agrees with feeding each token's text to the machine, and some token is
// allowed.
func TestFilterRealVocabs(t *testing.T) {
	type state struct {
		name, text string
		schema     string // "" for none
		framed     bool   // between <tool_call> and </tool_call>
	}
	var cases []state
	for _, st := range states {
		cases = append(cases, state{name: st.name, text: st.text})
	}
	cases = append(cases,
		state{name: "mid character", text: "{\"a\": \"\xE2\x82"},
		state{name: "escape", text: `{"a": "\`},
		state{name: "unicode escape", text: `{"a": "\u00`},
		state{name: "literal", text: `{"a": tr`},
		state{name: "exponent", text: `{"a": 1e`},
		state{name: "array", text: `{"a": [`},
		state{name: "space run", text: "{\"a\":\n" + strings.Repeat(" ", MaxSpace-2)},
		state{name: "schema start", text: ``, schema: person},
		state{name: "schema key", text: `{"`, schema: person},
		state{name: "schema key begun", text: `{"na`, schema: person},
		state{name: "schema string", text: `{"name": "A`, schema: person},
		state{name: "schema integer", text: `{"name":"A","age": 1`, schema: person},
		state{name: "schema enum", text: `{"name":"A","age":1,"kind":"c`, schema: person},
		state{name: "schema array", text: `{"name":"A","age":1,"tags":[`, schema: person},
		state{name: "schema after", text: `{"name":"A","age":1`, schema: person},
		state{name: "schema optional", text: `{"v":1,"note":`, schema: tree},
		state{name: "schema other property", text: `{"v":1,"xy`, schema: tree},
		state{name: "discriminator", text: `{"kind":"c`, schema: pets},
		state{name: "after the discriminator", text: `{"kind":"cat",`, schema: pets},
		state{name: "framed start", text: ``, schema: person, framed: true},
		state{name: "framed prefix", text: `<tool`, schema: person, framed: true},
		state{name: "framed before suffix", text: "<tool_call>\n{\"name\":\"A\",\"age\":1}", schema: person, framed: true},
	)
	vocabs := []string{"ggml-vocab-llama3_1.gguf", "ggml-vocab-llama-spm.gguf", "ggml-vocab-qwen3.gguf", "ggml-vocab-gemma3.gguf"}
	if testing.Short() {
		vocabs = vocabs[:2] // one BPE, one SentencePiece
	}
	for _, name := range vocabs {
		tok := realVocab(t, name)
		for _, st := range cases {
			var s *Schema
			if st.schema != "" {
				s = mustCompile(t, st.schema)
			}
			if st.framed {
				s = s.Framed("<tool_call>", "</tool_call>")
			}
			f := NewFilter(tok, tok.Size(), s)
			if !f.m.Write([]byte(st.text)) {
				t.Fatalf("%s: state %q refused", name, st.text)
			}
			n := 0
			var m SchemaMachine
			for id := range int32(tok.Size()) {
				p := tok.OutputPiece(id)
				m.CopyFrom(&f.m)
				want := len(p) > 0 && m.Write(p)
				if got := f.Allowed(id); got != want {
					t.Fatalf("%s, %s after %q: token %d (%q): Allowed %v, the machine says %v", name, st.name, st.text, id, p, got, want)
				}
				if want {
					n++
				}
			}
			if n == 0 {
				t.Errorf("%s: no token allowed after %q", name, st.text)
			}
		}
	}
}

// BenchmarkFilterVocab times a sweep of a whole vocabulary, without a
// schema and under person's.
func BenchmarkFilterVocab(b *testing.B) {
	schemaStates := []struct{ name, text string }{
		{"key", `{"na`},
		{"string", `{"name": "Ada `},
		{"enum", `{"name":"A","age":1,"kind":"c`},
		{"after", `{"name": "Ada"`},
	}
	ps := mustCompile(b, person)
	for _, name := range []string{"ggml-vocab-llama3_1.gguf", "ggml-vocab-qwen3.gguf"} {
		tok := realVocab(b, name)
		for _, s := range []*Schema{nil, ps} {
			sts, kind := states, "json"
			if s != nil {
				sts, kind = schemaStates, "schema"
			}
			for _, st := range sts {
				b.Run(fmt.Sprintf("%s/%s/%s", name, kind, st.name), func(b *testing.B) {
					f := NewFilter(tok, tok.Size(), s)
					f.m.Write([]byte(st.text))
					n := int32(tok.Size())
					for b.Loop() {
						for id := range n {
							f.Allowed(id)
						}
					}
				})
			}
		}
	}
}

// TestFilterBytes: FilterBytes covers what NewFilter allocates, which the
// memory plan counts, by no more than the allocator's rounding.
func TestFilterBytes(t *testing.T) {
	for _, size := range []int{1, 1000, 100003} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f := NewFilter(sameText("x"), size, nil)
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(f)
		if got := int64(after.TotalAlloc - before.TotalAlloc); got > FilterBytes(size) || got < FilterBytes(size)-3*8192 {
			t.Errorf("NewFilter allocated %d bytes for %d tokens; FilterBytes says %d", got, size, FilterBytes(size))
		}
	}
}

// sameText is a vocabulary whose every token has the same text.
type sameText []byte

func (s sameText) OutputPiece(int32) []byte { return s }
