package jsonprefix

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// person is a schema in OpenAI's strict style.
const person = `{
	"type": "object",
	"title": "Person",
	"properties": {
		"name": {"type": "string", "description": "full name"},
		"age": {"type": "integer"},
		"tags": {"type": "array", "items": {"type": "string", "enum": ["a", "bb"]}, "minItems": 1, "maxItems": 2},
		"kind": {"enum": ["cat", "dog", null]},
		"score": {"type": "number"},
		"ok": {"type": "boolean"}
	},
	"required": ["name", "age"],
	"additionalProperties": false
}`

// tree is a schema in pydantic's style: $defs, $ref, recursion, an
// optional field as anyOf with null, other properties allowed.
const tree = `{
	"$defs": {
		"Node": {
			"type": "object",
			"title": "Node",
			"properties": {
				"v": {"type": "integer"},
				"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
				"note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}
			},
			"required": ["v"]
		}
	},
	"$ref": "#/$defs/Node"
}`

func mustCompile(t testing.TB, schema string) *Schema {
	t.Helper()
	s, err := Compile([]byte(schema))
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return s
}

// feedCase feeds ok to a machine of s, byte by byte, and checks that all
// of it is taken, that the machine is done or not, and that bad (when not
// 0) is then refused without moving it.
func feedCase(t *testing.T, s *Schema, ok string, bad byte, done bool) {
	t.Helper()
	m := NewSchemaMachine(s)
	for i := 0; i < len(ok); i++ {
		if !m.Step(ok[i]) {
			t.Fatalf("byte %d (%q) of %q refused", i, ok[i], ok)
		}
	}
	if m.Done() != done {
		t.Errorf("%q: Done() = %v, want %v", ok, m.Done(), done)
	}
	if bad == 0 {
		return
	}
	before := m
	if m.Step(bad) {
		t.Errorf("%q accepted after %q", bad, ok)
	} else if m.cursor != before.cursor || m.depth > 0 && m.frames[m.depth-1] != before.frames[m.depth-1] {
		t.Errorf("refusing %q after %q moved the machine", bad, ok)
	}
}

// TestSchemaMachine feeds texts against schemas: ok is accepted whole,
// then bad (when not 0) is refused; done says whether ok is a complete
// object.
func TestSchemaMachine(t *testing.T) {
	tests := []struct {
		schema, ok string
		bad        byte
		done       bool
	}{
		{person, `{"name":"Ada","age":36}`, 0, true},
		{person, `{ "age": 36, "name": "Ada" }`, 0, true},
		{person, `{"name":"Ada"`, '}', false},                // age is required
		{person, `{"nam`, '"', false},                        // not a whole name
		{person, `{"`, 'x', false},                           // no such property
		{person, `{"age":3`, '.', false},                     // an integer
		{person, `{"age":3`, 'e', false},                     // an integer
		{person, `{"age":-0,"name":"`, 0, false},             // -0 is an integer
		{person, `{"age":`, '"', false},                      // not a string
		{person, `{"name":`, '1', false},                     // not a number
		{person, `{"name":"A","age":1,"tags":[`, ']', false}, // minItems 1
		{person, `{"name":"A","age":1,"tags":["a","bb"]}`, 0, true},
		{person, `{"name":"A","age":1,"tags":["a","bb"`, ',', false}, // maxItems 2
		{person, `{"name":"A","age":1,"tags":["`, 'c', false},
		{person, `{"name":"A","age":1,"tags":["b`, '"', false}, // "b" is not "bb"
		{person, `{"name":"A","age":1,"tags":["a"]}`, 0, true},
		{person, `{"name":"A","age":1,"tags":["a`, '\\', false}, // no escapes in an enum
		{person, `{"name":"A","age":1,"kind":null}`, 0, true},
		{person, `{"name":"A","age":1,"kind":"c`, 'o', false},
		{person, `{"name":"A","age":1,"kind":"ca`, 'x', false},
		{person, `{"name":"A","age":1,"kind":`, '1', false},
		{person, `{"name":"A","age":1,"kind":"cat"}`, 0, true},
		{person, `{"name":"A","age":1,"score":-1.5e3,"ok":true}`, 0, true},
		{person, `{"name":"A","age":1,"ok":`, '"', false},
		{person, `{"name":"A","`, 'n', false}, // name is given already
		{person, `{"name":"A\"B\\C\u00e9","age":1}`, 0, true},
		{person, `{"name":"","age":0,"tags":["a"],"kind":"dog","score":0,"ok":false}`, 0, true},
		{person, `{"name":"","age":0,"tags":["a"],"kind":"dog","score":0,"ok":false`, ',', false}, // nothing left to give
		{tree, `{"v":1,"kids":[{"v":2,"kids":[]},{"v":3}],"note":null}`, 0, true},
		{tree, `{"v":1,"note":"x","other":[1,{"a":2}]}`, 0, true}, // other properties allowed
		{tree, `{"kids":[{"v":2}]`, '}', false},
		{tree, `{"v":1,"kids":[{"v":2,"kids":[{`, '}', false}, // v is required at every level
		{tree, `{"v":1,"note":`, '1', false},
		{tree, `{"v":1,"kids":`, '{', false},
		{`true`, `{"a":[1,"x",{"b":null}]}`, 0, true},
		{`{"type":"object","additionalProperties":false}`, `{}`, 0, true},
		{`{"type":"object","additionalProperties":false}`, `{`, '"', false},
		{`{"anyOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"type":"null"}]}`, `{"a":1}`, 0, true},
		{`{"type":"object","properties":{"n":{"type":["integer","string"]}}}`, `{"n":"x","n":`, 0, false},
		{`{"type":"object","properties":{"n":{"type":["integer","null"]}},"additionalProperties":false}`, `{"n":null}`, 0, true},
		{`{"type":"object","properties":{"n":{"type":["integer","null"]}},"additionalProperties":false}`, `{"n":`, '"', false},
		{`{"type":"object","properties":{"l":{"type":"array","maxItems":0}}}`, `{"l":[`, '1', false},
		{`{"type":"object","properties":{"k":{"const":"x"}},"additionalProperties":false}`, `{"k":"x"}`, 0, true},
	}
	for _, tc := range tests {
		name := tc.ok
		if tc.bad != 0 {
			name += " then " + string(tc.bad)
		}
		t.Run(name, func(t *testing.T) { feedCase(t, mustCompile(t, tc.schema), tc.ok, tc.bad, tc.done) })
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct{ schema, says string }{
		{`{"type":`, "not valid JSON"},
		{`{} {}`, "extra data"},
		{`{"type":"string"}`, "must allow an object at the top"},
		{`{"type":"object","properties":{"s":{"type":"string","pattern":"^a"}}}`, `#/properties/s: keyword "pattern" is not supported`},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":0}}}`, `keyword "minimum"`},
		{`{"type":"object","allOf":[{}]}`, `keyword "allOf"`},
		{`{"type":"object","additionalProperties":{"type":"string"}}`, "a schema for additional properties"},
		{`{"type":"object","properties":{"t":{"type":"array","items":[{}]}}}`, "tuples"},
		{`{"type":"object","properties":{"e":{"enum":[1,2]}}}`, "only strings and null"},
		{`{"type":"object","properties":{"e":{"enum":["a\"b"]}}}`, "needs escapes"},
		{`{"type":"object","properties":{"a\\b":{}}}`, "needs escapes"},
		{`{"type":"object","required":["x"]}`, `required property x is not in properties`},
		{`{"type":"object","properties":{"r":{"$ref":"http://example.com/s.json"}}}`, "only references inside the schema"},
		{`{"type":"object","properties":{"r":{"$ref":"#/$defs/missing"}}}`, `no "$defs"`},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, "refers to itself through references only"},
		{`{"type":"object","properties":{"u":{"anyOf":[{"type":"string"},{"type":"string","enum":["x"]}]}}}`, "begin alike"},
		{`{"type":"object","properties":{"u":{"anyOf":[{"type":"integer"},{"type":"number"}]}}}`, "begin alike"},
		{`{"type":"object","properties":{"l":{"type":"array","minItems":3,"maxItems":2}}}`, "below minItems"},
		{`{"type":"object","properties":{"l":{"type":"array","minItems":-1}}}`, "minItems must be a whole number"},
		{`{"type":"object","properties":{"f":false}}`, "allows nothing"},
		{`{"type":"object","properties":{"x":{"type":"float"}}}`, `unknown type "float"`},
		{`{"type":"object","properties":{"x":{"type":"string","enum":[null]}}}`, "no value of the enum"},
		{`[]`, "must be an object or a boolean"},
		{`{"$defs":{"n":{"anyOf":[{"$ref":"#/$defs/n"},{"type":"null"}]}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}`, "being read"},
	}
	for _, tc := range tests {
		_, err := Compile([]byte(tc.schema))
		if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Compile(%s): %v; want ErrSchema saying %q", tc.schema, err, tc.says)
		}
	}
}

// personValid is person's schema checked by hand, apart from the machine.
func personValid(data []byte) bool {
	var p struct {
		Name  *string  `json:"name"`
		Age   *int64   `json:"age"`
		Tags  []string `json:"tags"`
		Kind  *string  `json:"kind"`
		Score *float64 `json:"score"`
		OK    *bool    `json:"ok"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if dec.Decode(&p) != nil || p.Name == nil || p.Age == nil {
		return false
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(data, &raw)
	if t, ok := raw["tags"]; ok && (string(t) == "null" || len(p.Tags) < 1 || len(p.Tags) > 2) {
		return false
	}
	for _, tag := range p.Tags {
		if tag != "a" && tag != "bb" {
			return false
		}
	}
	if p.Kind != nil && *p.Kind != "cat" && *p.Kind != "dog" {
		return false
	}
	for _, k := range []string{"name", "age", "score", "ok"} {
		if string(raw[k]) == "null" {
			return false
		}
	}
	return true
}

// FuzzSchemaMachine: what the machine accepts as a complete object under
// person is valid JSON that person's hand check accepts.
func FuzzSchemaMachine(f *testing.F) {
	for _, s := range []string{`{"name":"Ada","age":36}`, `{"name":"A","age":1,"tags":["a","bb"],"kind":null}`, `{"age":1,"name":"\u00e9","ok":true,"score":1e5}`} {
		f.Add([]byte(s))
	}
	s := mustCompile(f, person)
	f.Fuzz(func(t *testing.T, data []byte) {
		m := NewSchemaMachine(s)
		if m.Write(data) && m.Done() && (!json.Valid(data) || !personValid(data)) {
			t.Fatalf("accepted %s, which person does not allow", data)
		}
	})
}

// FuzzCompile: any input compiles or fails with ErrSchema, and a machine
// of what compiles takes text without panicking.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{person, tree, pets, `true`, `{"anyOf":[{"type":"object"},{"type":"null"}]}`, `{"$ref":"#"}`} {
		f.Add([]byte(s), []byte(`{"name":"A","v":1,"kids":[{"v":2}],"x":[true,null]}`))
	}
	f.Fuzz(func(t *testing.T, schema, text []byte) {
		s, err := Compile(schema)
		if err != nil {
			if !errors.Is(err, ErrSchema) {
				t.Fatalf("Compile: %v does not wrap ErrSchema", err)
			}
			return
		}
		m := NewSchemaMachine(s)
		m.Write(text)
	})
}

// TestFramed: a framed schema takes its prefix, at most a run of
// whitespace, the object, at most a run of whitespace and its suffix, and
// is done only after the suffix.
func TestFramed(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}`).Framed("<call>", "</call>")
	tests := []struct {
		ok   string
		bad  byte
		done bool
	}{
		{"<call>\n{\"a\":1}\n</call>", 0, true},
		{"<call>{\"a\":1}</call>", 0, true},
		{"<call>{\"a\":1}", 0, false},
		{"<call>{\"a\":1}</ca", 0, false},
		{"", ' ', false},
		{"<ca", 'x', false},
		{"<call>", '"', false},
		{"<call>\n", '\n', false}, // one line feed a run
		{"<call>{\"a\":1}\n</call>", ' ', true},
		{"<call>{\"a\":1} </", ' ', false},
	}
	for _, tc := range tests {
		feedCase(t, s, tc.ok, tc.bad, tc.done)
	}
	if p, q := s.Frame(); p != "<call>" || q != "</call>" {
		t.Errorf("Frame() = %q, %q", p, q)
	}
}

// TestCompileLoose: below the top, a part Compile refuses allows any value
// instead; what it can enforce still holds.
func TestCompileLoose(t *testing.T) {
	schema := `{"type":"object","additionalProperties":false,"required":["n"],"properties":{
		"d":{"type":"string","format":"date"},
		"e":{"enum":[1,2]},
		"r":{"$ref":"#/$defs/missing"},
		"n":{"type":"integer"}}}`
	if _, err := Compile([]byte(schema)); err == nil {
		t.Fatal("Compile took a schema with format, a numeric enum and a missing $ref")
	}
	s, err := CompileLoose([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	m := NewSchemaMachine(s)
	if !m.Write([]byte(`{"d":5,"e":"x","r":[null],"n":1}`)) || !m.Done() {
		t.Error("the loose parts did not take any value")
	}
	m, m2 := NewSchemaMachine(s), NewSchemaMachine(s)
	if m.Write([]byte(`{"n":1.5}`)) || m2.Write([]byte(`{"x"`)) {
		t.Error("what the loose schema can enforce was not enforced")
	}
	if _, err := CompileLoose([]byte(`{"type":"object","pattern":"x"}`)); err == nil {
		t.Error("CompileLoose took a refused keyword at the top")
	}
}

// pets is a discriminated union, as pydantic writes one: objects told
// apart by the constant value of "kind".
const pets = `{"anyOf": [
	{"type": "object", "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer"}}, "required": ["kind", "lives"], "additionalProperties": false},
	{"type": "object", "properties": {"kind": {"enum": ["dog"]}, "good": {"type": "boolean"}}, "required": ["kind"], "additionalProperties": false}]}`

// TestDiscriminated: the discriminator comes first and chooses the branch
// the rest of the object follows.
func TestDiscriminated(t *testing.T) {
	inner := `{"type":"object","properties":{"pet":{"anyOf":[` + pets[len(`{"anyOf": [`):len(pets)-2] + `,{"type":"null"}]}}}`
	tests := []struct {
		schema, ok string
		bad        byte
		done       bool
	}{
		{pets, `{"kind":"cat","lives":9}`, 0, true},
		{pets, `{"kind": "dog", "good": true}`, 0, true},
		{pets, `{"kind":"dog"}`, 0, true},
		{pets, `{"`, 'l', false},            // the discriminator first
		{pets, `{`, '}', false},             // and it is required
		{pets, `{"kind":"cat"`, '}', false}, // lives is required for a cat
		{pets, `{"kind":"cat","`, 'g', false},
		{pets, `{"kind":"c`, 'o', false},
		{pets, `{"kind":"dog","good":true`, ',', false}, // nothing left to give
		{inner, `{"pet":{"kind":"dog"}}`, 0, true},
		{inner, `{"pet":null}`, 0, true},
		{inner, `{"pet":{"kind":"cat","lives":`, '"', false},
	}
	for _, tc := range tests {
		feedCase(t, mustCompile(t, tc.schema), tc.ok, tc.bad, tc.done)
	}
	for _, bad := range []string{
		`{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"string"}}}]}`,
		`{"anyOf":[{"type":"object","properties":{"k":{"const":"x"}}},{"type":"object","properties":{"k":{"const":"x"}}}]}`,
	} {
		if _, err := Compile([]byte(bad)); err == nil || !strings.Contains(err.Error(), "discriminator") {
			t.Errorf("Compile(%s): %v, want an error naming the discriminator", bad, err)
		}
	}
}
