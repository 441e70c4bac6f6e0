package callgrammar

import "testing"

// FuzzMachine: any text fed to a machine of any syntax and layout is taken or
// refused without a panic, a refused byte leaves the machine where it
// was, and a complete call takes nothing more.
func FuzzMachine(f *testing.F) {
	f.Add([]byte("<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"), uint8(0))
	f.Add([]byte(`<|tool_call>call:get_weather{city:<|"|>x<|"|>,opts:{a:[1,{b:null}]},flag:true}<tool_call|>`), uint8(1))
	f.Add([]byte("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>x</arg_value>\n</tool_call>"), uint8(2))
	f.Add([]byte("<tool_call>get_weather<arg_key>days</arg_key><arg_value>3</arg_value><arg_key>city</arg_key><arg_value>x</arg_value></tool_call>"), uint8(3))
	f.Add([]byte("<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">x</parameter>\n</invoke>\n</minimax:tool_call>"), uint8(4))
	tools := []Tool{weather, {Name: "a"}}
	layouts := []Layout{qwen, {Syntax: Gemma4, Open: "<|tool_call>", Close: "<tool_call|>"}, glmLines, glm47, minimax}
	f.Fuzz(func(t *testing.T, text []byte, layout uint8) {
		l := layouts[int(layout)%len(layouts)]
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
