package callgrammar

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

var weather = Tool{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{
	"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]},"days":{"type":"integer"},
	"temp":{"type":"number"},"opts":{"type":"object","properties":{"metric":{"type":"boolean"}},"required":["metric"]},
	"flag":{"type":"boolean"},"tags":{"type":"array"}},"required":["city"]}`)}

var qwen = Layout{Open: "<tool_call>", Close: "</tool_call>", Newlines: true}

const head = "<tool_call>\n<function=get_weather>\n"

// glmLines and glm47 are GLM's layouts: GLM-4.5's, a part a line, and
// GLM-4.7's, back to back.
var (
	glmLines = Layout{Syntax: GLM, Open: "<tool_call>", Close: "</tool_call>", Newlines: true}
	glm47    = Layout{Syntax: GLM, Open: "<tool_call>", Close: "</tool_call>"}
	minimax  = Layout{Syntax: MiniMax, Open: "<minimax:tool_call>", Close: "</minimax:tool_call>"}
)

// TestMachine feeds each case's text, which must be taken whole, then
// its bad byte, which must be refused (0: none), and checks Done.
func TestMachine(t *testing.T) {
	seed := Layout{Open: "<seed:tool_call>", Close: "</seed:tool_call>"}
	gemma := Layout{Syntax: Gemma4, Open: "<|tool_call>", Close: "<tool_call|>"}
	const gHead = "<|tool_call>call:get_weather{"
	// The tool sets: weather's parameters of every kind, or two tools
	// whose names begin alike.
	one := []Tool{weather}
	two := []Tool{{Name: "a"}, {Name: "ab", Parameters: json.RawMessage(`{"properties":{"x":{"type":"integer"}},"required":["x"]}`)}}
	type machineCase struct {
		name  string
		l     Layout
		tools []Tool
		ok    string
		bad   byte
		done  bool
	}
	// begun makes the cases of a call to weather in layout l that has
	// begun with prefix: ok follows it, and the call is not done.
	begun := func(l Layout, prefix string) func(name, ok string, bad byte) machineCase {
		return func(name, ok string, bad byte) machineCase { return machineCase{name, l, one, prefix + ok, bad, false} }
	}
	inQwen, inGemma := begun(qwen, head), begun(gemma, gHead)
	inGLM, inGLM47 := begun(glmLines, "<tool_call>get_weather\n"), begun(glm47, "<tool_call>get_weather")
	inMiniMax := begun(minimax, "<minimax:tool_call>\n<invoke name=\"get_weather\">\n")
	for _, c := range []machineCase{
		{"every kind of value", qwen, one, head +
			"<parameter=city>\nParis </b> \n<x\n</parameter>\n<parameter=days>\n-3\n</parameter>\n" +
			"<parameter=unit>\nc\n</parameter>\n<parameter=temp>\n-1.5e3\n</parameter>\n" +
			"<parameter=opts>\n{\"metric\": true}\n</parameter>\n<parameter=flag>\nfalse\n</parameter>\n" +
			"<parameter=tags>\n[1, 2]\n</parameter>\n</function>\n</tool_call>", 'x', true},
		{"unknown tool", qwen, one, "<tool_call>\n<function=get_", 'x', false},
		{"seed", seed, []Tool{{Name: "f", Parameters: json.RawMessage(`{"properties":{"a":{"type":"string"},"n":{"type":"number"}}}`)}},
			"<seed:tool_call>\n<function=f>\n<parameter=n>2</parameter>\n<parameter=a>x\ny</parameter>\n</function>\n</seed:tool_call>", ' ', true},
		{"no parameters", qwen, two, "<tool_call>\n<function=a>\n</function>\n</tool_call>", '\n', true},
		{"a name that begins another", qwen, two, "<tool_call>\n<function=ab>\n<parameter=x>\n7\n</parameter>\n</function>\n</tool_call>", 0, true},
		{"the other's required", qwen, two, "<tool_call>\n<function=ab>\n<", '/', false},
		{"gemma 4, every kind of value", gemma, one, `<|tool_call>call:get_weather{city:<|"|>Paris, "x" <b> {y}<|"|>,days:-3,unit:<|"|>c<|"|>,temp:1.5e3,` +
			`opts:{metric:true,list:[1,<|"|>a<|"|>,{},[]],n:null},flag:false,tags:[]}<tool_call|>`, '}', true},
		{"gemma 4, bool last", gemma, one, `<|tool_call>call:get_weather{city:<|"|><|"|>,flag:true}<tool_call|>`, 0, true},
		{"gemma 4, unknown tool", gemma, one, "<|tool_call>call:get", 'x', false},
		{"gemma 4, depth", gemma, one, gHead + "tags:" + strings.Repeat("[", MaxDepth), '[', false},
		{"gemma 4, no parameters", gemma, two, "<|tool_call>call:a{}<tool_call|>", '\n', true},
		{"gemma 4, a name that begins another", gemma, two, "<|tool_call>call:ab{x:7}<tool_call|>", 0, true},
		{"glm, every kind of value", glmLines, one, "<tool_call>get_weather\n" +
			"<arg_key>city</arg_key>\n<arg_value>Paris </b> \n<x\n</arg_value>\n<arg_key>days</arg_key>\n<arg_value>-3</arg_value>\n" +
			"<arg_key>unit</arg_key>\n<arg_value>c</arg_value>\n<arg_key>temp</arg_key>\n<arg_value>-1.5e3</arg_value>\n" +
			"<arg_key>opts</arg_key>\n<arg_value>{\"metric\": true}</arg_value>\n<arg_key>flag</arg_key>\n<arg_value>false</arg_value>\n" +
			"<arg_key>tags</arg_key>\n<arg_value>[1, 2]</arg_value>\n</tool_call>", 'x', true},
		{"glm 4.7, back to back", glm47, one, "<tool_call>get_weather<arg_key>days</arg_key><arg_value>3</arg_value>" +
			"<arg_key>city</arg_key><arg_value>x</arg_value></tool_call>", '\n', true},
		{"glm, unknown tool", glmLines, one, "<tool_call>get_", 'x', false},
		{"glm, the name's line", glmLines, one, "<tool_call>get_weather", '<', false},
		{"glm, no parameters", glmLines, two, "<tool_call>a\n</tool_call>", '\n', true},
		{"glm 4.7, a name that begins another", glm47, two, "<tool_call>ab<arg_key>x</arg_key><arg_value>7</arg_value></tool_call>", 0, true},
		{"glm, the other's required", glm47, two, "<tool_call>ab<", '/', false},
		{"minimax, every kind of value", minimax, one, "<minimax:tool_call>\n<invoke name=\"get_weather\">\n" +
			"<parameter name=\"city\">Paris </b> \n<x\n</parameter>\n<parameter name=\"days\">-3</parameter>\n" +
			"<parameter name=\"unit\">c</parameter>\n<parameter name=\"opts\">{\"metric\": true}</parameter>\n" +
			"<parameter name=\"tags\">[1, 2]</parameter>\n</invoke>\n</minimax:tool_call>", 'x', true},
		{"minimax, no parameters", minimax, two, "<minimax:tool_call>\n<invoke name=\"a\">\n</invoke>\n</minimax:tool_call>", '\n', true},
		{"minimax, a name that begins another", minimax, two, "<minimax:tool_call>\n<invoke name=\"ab\">\n<parameter name=\"x\">7</parameter>\n</invoke>\n</minimax:tool_call>", 0, true},
		{"minimax, the XML form's tags", minimax, one, "<minimax:tool_call>\n<", 'f', false},
		// Calls to weather begun in each layout and cut short.
		inQwen("close before the required", "<", '/'),
		inQwen("unknown parameter", "<parameter=", 'x'),
		inQwen("parameter twice", "<parameter=city>\nx\n</parameter>\n<parameter=", 'c'),
		inQwen("integer", "<parameter=days>\n3", '.'),
		inQwen("number ends", "<parameter=temp>\n1.", '\n'),
		inQwen("enum", "<parameter=unit>\n", 'k'),
		inQwen("enum value whole", "<parameter=unit>\nc", 'c'),
		inQwen("boolean", "<parameter=flag>\nt", 'x'),
		inQwen("object's schema", "<parameter=opts>\n{\"metric\": ", '1'),
		inQwen("object's required", "<parameter=opts>\n{", '}'),
		inQwen("nothing after the object", "<parameter=opts>\n{\"metric\":false}", ' '),
		inQwen("layout", "<parameter=city>", 'P'),
		inQwen("a bare </parameter> in text", "<parameter=city>\nx</parameter", '>'),
		inGemma("gemma 4, close before the required", "", '}'),
		inGemma("gemma 4, unknown key", "", 'x'),
		inGemma("gemma 4, key twice", `city:<|"|>a<|"|>,`, 'c'),
		inGemma("gemma 4, string unquoted", "city:", 'P'),
		inGemma("gemma 4, integer", "days:3", '.'),
		inGemma("gemma 4, enum", `unit:<|"|>`, 'k'),
		inGemma("gemma 4, enum whole", `unit:<|"|>c`, 'c'),
		inGemma("gemma 4, boolean", "flag:true", ' '),
		inGemma("gemma 4, dict key", "opts:{", ':'),
		inGemma("gemma 4, comma then close", "opts:{a:1,", '}'),
		inGemma("gemma 4, array comma", "tags:[", ','),
		inGLM47("glm 4.7, no line after the name", "", '\n'),
		inGLM("glm, close before the required", "<", '/'),
		inGLM("glm, unknown key", "<arg_key>", 'x'),
		inGLM47("glm, key twice", "<arg_key>city</arg_key><arg_value>a</arg_value><arg_key>", 'c'),
		inGLM("glm, integer", "<arg_key>days</arg_key>\n<arg_value>3", '.'),
		inGLM47("glm, enum", "<arg_key>unit</arg_key><arg_value>", 'k'),
		inGLM("glm, layout", "<arg_key>city</arg_key>", '<'),
		inMiniMax("minimax, close before the required", "<", '/'),
		inMiniMax("minimax, unknown parameter", "<parameter name=\"", 'x'),
		inMiniMax("minimax, the key's quote", "<parameter name=\"city", '>'),
		inMiniMax("minimax, integer", "<parameter name=\"days\">3", '.'),
		inMiniMax("minimax, no line inside the tag", "<parameter name=\"city\"", '\n'),
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := Compile(c.l, c.tools)
			if err != nil {
				t.Fatal(err)
			}
			m := NewMachine(g)
			for i := range len(c.ok) {
				if !m.Step(c.ok[i]) {
					t.Fatalf("byte %d (%q) refused after %q", i, c.ok[i], c.ok[:i])
				}
			}
			if m.Done() != c.done {
				t.Errorf("Done() = %v, want %v", m.Done(), c.done)
			}
			if c.bad != 0 {
				before := m
				if m.Step(c.bad) {
					t.Errorf("%q taken after %q", c.bad, c.ok)
				}
				if m.pos != before.pos {
					t.Errorf("a refused byte moved the machine")
				}
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	for name, tools := range map[string][]Tool{
		"no tools":       nil,
		"empty name":     {{Name: ""}},
		"repeated name":  {{Name: "a"}, {Name: "a"}},
		"name with '>'":  {{Name: "a>b"}},
		"parameters":     {{Name: "a", Parameters: json.RawMessage(`[1]`)}},
		"parameter name": {{Name: "a", Parameters: json.RawMessage(`{"properties":{"x>":{}}}`)}},
		"parameters, 65": {{Name: "a", Parameters: manyParams(65)}},
	} {
		if _, err := Compile(qwen, tools); !errors.Is(err, ErrGrammar) {
			t.Errorf("%s: err %v, want ErrGrammar", name, err)
		}
	}
	gemma := Layout{Syntax: Gemma4, Open: "<|tool_call>", Close: "<tool_call|>"}
	for _, tools := range [][]Tool{{{Name: "a{"}}, {{Name: "a", Parameters: json.RawMessage(`{"properties":{"x:y":{}}}`)}}} {
		if _, err := Compile(gemma, tools); !errors.Is(err, ErrGrammar) {
			t.Errorf("gemma 4, %+v: err %v, want ErrGrammar", tools, err)
		}
	}
	for _, tools := range [][]Tool{{{Name: "a b"}}, {{Name: "a<"}}, {{Name: "a", Parameters: json.RawMessage(`{"properties":{"x<y":{}}}`)}}} {
		if _, err := Compile(glmLines, tools); !errors.Is(err, ErrGrammar) {
			t.Errorf("glm, %+v: err %v, want ErrGrammar", tools, err)
		}
	}
	if _, err := Compile(qwen, []Tool{{Name: "a", Parameters: manyParams(64)}}); err != nil {
		t.Errorf("64 parameters: %v", err)
	}
}

func manyParams(n int) json.RawMessage {
	props := map[string]any{}
	for i := range n {
		props[string(rune('A'+i%26))+string(rune('a'+i/26))] = map[string]any{"type": "string"}
	}
	b, _ := json.Marshal(map[string]any{"properties": props})
	return b
}

// vocab is a vocabulary of the given texts, token i the i-th.
type vocab [][]byte

func (v vocab) OutputPiece(id int32) []byte { return v[id] }

func newVocab(texts ...string) vocab {
	v := make(vocab, len(texts))
	for i, s := range texts {
		v[i] = []byte(s)
	}
	return v
}

// TestFilter: the filter takes a call token by token, refuses what breaks
// it and tokens without text, and asks allocate nothing.
func TestFilter(t *testing.T) {
	g, err := Compile(qwen, []Tool{weather})
	if err != nil {
		t.Fatal(err)
	}
	v := newVocab("", "<tool_call>", "\n", "<function=", "get_weather", ">\n", "<parameter=", "city", ">\nParis", "\n</parameter>\n", "</function>\n</tool_call>", "x")
	f := NewFilter(v, g)
	for _, id := range []int32{1, 2, 3, 4, 5} {
		if !f.Accept(id) {
			t.Fatalf("token %d (%q) refused", id, v[id])
		}
	}
	if f.Allowed(0) || f.Allowed(10) || f.Allowed(11) {
		t.Fatal("an empty token, an early close or a stray text allowed")
	}
	if n := testing.AllocsPerRun(100, func() { f.Allowed(6); f.Allowed(11) }); n != 0 {
		t.Errorf("Allowed allocates %v times", n)
	}
	for _, id := range []int32{6, 7, 8, 9, 10} {
		if !f.Accept(id) {
			t.Fatalf("token %d (%q) refused", id, v[id])
		}
	}
	if !f.Done() {
		t.Error("not done after the call")
	}
}

// TestFilterShortcuts: what the filter answers by a token's first byte or
// as plain text is what feeding the token to the machine answers, at
// every step of a call.
func TestFilterShortcuts(t *testing.T) {
	g, err := Compile(qwen, []Tool{weather})
	if err != nil {
		t.Fatal(err)
	}
	v := newVocab("<", "\n", "x", "Paris", "a<b", "\n</parameter>\n", "</parameter>", "<tool_call>", "\n<function=get_weather>\n",
		"<parameter=city>\n", "<parameter=days>\n", "12", ".5", "</function>\n</tool_call>", " ", "ab\ncd")
	f := NewFilter(v, g)
	for _, step := range []string{"<tool_call>", "\n<function=get_weather>\n", "<parameter=city>\n", "Paris", "a<b", "\n</parameter>\n", "<parameter=days>\n", "12"} {
		for id := range v {
			m := f.m
			m.CopyFrom(&f.m)
			want := m.Write(v[id])
			if got := f.Allowed(int32(id)); got != want {
				t.Errorf("at %q, token %q: Allowed %v, the machine %v", step, v[id], got, want)
			}
		}
		id := slices.IndexFunc(v, func(p []byte) bool { return string(p) == step })
		if !f.Accept(int32(id)) {
			t.Fatalf("%q refused", step)
		}
	}
}
