package jsonprefix

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMachine feeds each text whole and checks where the machine first
// refuses a byte (-1: never) and whether the object is complete.
func TestMachine(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth-1)
	tests := []struct {
		name   string
		text   string
		refuse int // index of the first byte refused, -1 for none
		done   bool
	}{
		{"empty object", `{}`, -1, true},
		{"space before", " {}", 0, false},
		{"space inside and after", "{ } ", 3, true},
		{"nothing yet", ``, -1, false},
		{"top-level array", `[1]`, 0, false},
		{"top-level string", `"a"`, 0, false},
		{"open", `{"a"`, -1, false},
		{"every kind of value", `{"s":"x","n":-12.5e+3,"z":0,"t":true,"f":false,"u":null,"a":[1,[],{}],"o":{"k":"v"}}`, -1, true},
		{"pretty", "{\n  \"a\": [\n    1,\n    2\n  ]\n}", -1, true},
		{"number then close", `{"a":1}`, -1, true},
		{"number then space", `{"a":10 }`, -1, true},
		{"exponent forms", `{"a":[1E5,1e-5,0.5e0,-0.0]}`, -1, true},
		{"leading zero", `{"a":01}`, 6, false},
		{"bare minus", `{"a":-}`, 6, false},
		{"dot without digits", `{"a":1.}`, 7, false},
		{"exponent without digits", `{"a":1e}`, 7, false},
		{"plus sign", `{"a":+1}`, 5, false},
		{"unquoted key", `{a:1}`, 1, false},
		{"single quotes", `{'a':1}`, 1, false},
		{"missing colon", `{"a" 1}`, 5, false},
		{"trailing comma in object", `{"a":1,}`, 7, false},
		{"trailing comma in array", `{"a":[1,]}`, 8, false},
		{"mismatched close", `{"a":[1}`, 7, false},
		{"literal typo", `{"a":nul}`, 8, false},
		{"literal cut", `{"a":tru`, -1, false},
		{"after the object", `{}x`, 2, true},
		{"second object", `{}{}`, 2, true},
		{"escapes", `{"a":"\"\\\/\b\f\n\r\t\u00e9\uD83D"}`, -1, true},
		{"bad escape", `{"a":"\x"}`, 7, false},
		{"short unicode escape", `{"a":"\u12G4"}`, 10, false},
		{"raw newline in string", "{\"a\":\"x\ny\"}", 7, false},
		{"raw tab in string", "{\"a\":\"x\ty\"}", 7, false},
		{"utf-8 text", `{"ключ":"値 🙂"}`, -1, true},
		{"overlong utf-8", "{\"a\":\"\xC0\xAF\"}", 6, false},
		{"surrogate in utf-8", "{\"a\":\"\xED\xA0\x80\"}", 7, false},
		{"above U+10FFFF", "{\"a\":\"\xF4\x90\x80\x80\"}", 7, false},
		{"stray continuation", "{\"a\":\"\x80\"}", 6, false},
		{"cut character then quote", "{\"a\":\"\xE2\x82\"}", 8, false},
		{"utf-8 in a key", "{\"\xE2\x82\xAC\":1}", -1, true},
		{"long space run", "{" + strings.Repeat(" ", MaxSpace) + "}", -1, true},
		{"too long space run", "{" + strings.Repeat(" ", MaxSpace+1) + "}", 1 + MaxSpace, false},
		{"one line feed a run", "{\n  \"a\":\n1}", -1, true},
		{"carriage return", "{\r\n}", 1, false},
		{"two line feeds in a run", "{\n\n}", 2, false},
		{"tabs and line feed", "{\n\t\t\"a\": [\n\t\t\t1\n\t\t]\n}", -1, true},
		{"space in strings is text", `{"a":"` + strings.Repeat(" ", 3*MaxSpace) + `"}`, -1, true},
		{"deepest nesting", `{"a":` + deep + strings.Repeat("]", MaxDepth-1) + `}`, -1, true},
		{"too deep", `{"a":` + deep + `[`, 5 + MaxDepth - 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m Machine
			refuse := -1
			for i := 0; i < len(tc.text); i++ {
				before := m
				if !m.Step(tc.text[i]) {
					if m != before {
						t.Errorf("refusing byte %d moved the machine", i)
					}
					refuse = i
					break
				}
			}
			if refuse != tc.refuse {
				t.Errorf("first refused byte: %d, want %d (%q)", refuse, tc.refuse, tc.text)
			}
			if m.Done() != tc.done {
				t.Errorf("Done() = %v, want %v", m.Done(), tc.done)
			}
		})
	}
}

// TestMachinePrefixes: every prefix of an object is accepted, and only the
// whole is Done.
func TestMachinePrefixes(t *testing.T) {
	text := `{"name": "Ada", "tags": ["x", 1.5e3, null], "n": {"deep": [true, false]}, "e": "\u00e9"}`
	for n := range len(text) + 1 {
		var m Machine
		if !m.Write([]byte(text[:n])) {
			t.Fatalf("prefix %q refused", text[:n])
		}
		if m.Done() != (n == len(text)) {
			t.Fatalf("prefix of %d bytes: Done() = %v", n, m.Done())
		}
	}
}

// FuzzMachine checks the machine against encoding/json: what it accepts
// as complete is valid JSON, and every valid object, compacted (no
// whitespace runs) and of valid UTF-8, it accepts as complete unless it
// nests deeper than MaxDepth.
func FuzzMachine(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":[1,2,{"b":null}]}`, `{"a":"\u00e9\n"}`, ` { "x" : -0.5E+2 } `, `{"a":tru}`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Machine
		if m.Write(data) && m.Done() && !json.Valid(data) {
			t.Fatalf("accepted %q as a complete object, but it is not valid JSON", data)
		}
		if !json.Valid(data) || !utf8.Valid(data) {
			return
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return
		}
		if _, obj := v.(map[string]any); !obj || depth(v) > MaxDepth {
			return
		}
		var b bytes.Buffer
		if err := json.Compact(&b, data); err != nil {
			t.Fatal(err)
		}
		var c Machine
		if !c.Write(b.Bytes()) || !c.Done() {
			t.Fatalf("refused the valid object %q", b.String())
		}
	})
}

func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

func TestNesting(t *testing.T) {
	var n Nesting
	for d := range MaxDepth {
		if !n.Push(d%2 == 0) {
			t.Fatalf("push %d refused", d+1)
		}
	}
	if n.Push(true) || n.Depth() != MaxDepth {
		t.Fatalf("push past MaxDepth: depth %d", n.Depth())
	}
	if n.InObject() { // depth 64 is an array (odd index)
		t.Error("innermost is an array")
	}
	if n.Pop() != MaxDepth-1 || !n.InObject() {
		t.Error("after a pop the innermost is an object")
	}
	if (Nesting{}).InObject() {
		t.Error("empty nesting is in no object")
	}
}
