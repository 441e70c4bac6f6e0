package callgrammar

import "testing"

// FuzzMachine: any text fed to a machine of either syntax is taken or
// refused without a panic, a refused byte leaves the machine where it
// was, and a complete call takes nothing more.
func FuzzMachine(f *testing.F) {
	f.Add([]byte("<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"), false)
	f.Add([]byte(`<|tool_call>call:get_weather{city:<|"|>x<|"|>,opts:{a:[1,{b:null}]},flag:true}<tool_call|>`), true)
	tools := []Tool{weather, {Name: "a"}}
	f.Fuzz(func(t *testing.T, text []byte, gemma bool) {
		l := qwen
		if gemma {
			l = Layout{Syntax: Gemma4, Open: "<|tool_call>", Close: "<tool_call|>"}
		}
		g, err := Compile(l, tools)
		if err != nil {
			t.Fatal(err)
		}
		m := NewMachine(g)
		for _, b := range text {
			before := m.pos
			if !m.Step(b) {
				if m.pos != before {
					t.Fatalf("a refused byte %q moved the machine", b)
				}
				continue
			}
			if before.st == sDone {
				t.Fatal("a complete call took a byte")
			}
		}
	})
}
