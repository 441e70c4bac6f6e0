package chat

import (
	"encoding/json"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

func TestParseGemma4(t *testing.T) {
	g := Format{Tools: ToolsGemma4, Thinking: true}
	tools := ParseOptions{Tools: true}
	checkParse(t, []parseCase{
		{"plain", "The weather is fine.", g, tools, Message{Content: "The weather is fine."}},
		{"thought", "<|channel>thought\nLet me see.\n<channel|>Paris.", g, ParseOptions{},
			Message{Thinking: "Let me see.", Content: "Paris."}},
		{"empty thought", "<|channel>thought\n<channel|>Hi.", g, tools, Message{Content: "Hi."}},
		{"thought opened by prompt", "hm<channel|>ok", g, ParseOptions{ThinkingOpen: true},
			Message{Thinking: "hm", Content: "ok"}},
		{"stray channel close", "Done.<channel|>", g, ParseOptions{}, Message{Content: "Done."}},
		// Every kind of value: <|"|> strings (quotes, braces and the call's
		// closing marker inside are text), numbers as written, literals,
		// nested dicts and arrays, empty ones.
		{"call with every value", `<|tool_call>call:get_weather{location:<|"|>Paris, "FR" {x}<tool_call|><|"|>,days:3,temp:-1.5e2,ok:true,none:null,opts:{unit:<|"|>C<|"|>,list:[1,<|"|>a<|"|>,{x:false}]},empty:{},arr:[]}<tool_call|>`, g, tools,
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"location":"Paris, \"FR\" {x}<tool_call|>","days":3,"temp":-1.5e2,"ok":true,"none":null,"opts":{"unit":"C","list":[1,"a",{"x":false}]},"empty":{},"arr":[]}`}}}},
		{"spaces and lines", "<|tool_call>call:f{ a: <|\"|>x\ny é<|\"|> , b: [ 1 , 2 ] }<tool_call|>", g, tools,
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":"x\ny é","b":[1,2]}`}}}},
		{"thought, text and two calls", "<|channel>thought\nneed weather<channel|>Checking.\n<|tool_call>call:a{}<tool_call|><|tool_call>call:b{x:1}<tool_call|>", g, tools,
			Message{Thinking: "need weather", Content: "Checking.", ToolCalls: []ToolCall{{ID: "call_1", Name: "a", Arguments: `{}`}, {ID: "call_2", Name: "b", Arguments: `{"x":1}`}}}},
		{"unclosed call at the end", "<|tool_call>call:f{a:1}", g, tools,
			Message{ToolCalls: []ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1}`}}}},
		{"bad value", "<|tool_call>call:f{x:}<tool_call|>", g, tools, Message{Content: "<|tool_call>call:f{x:}<tool_call|>"}},
		{"bad number", "<|tool_call>call:f{x:01}<tool_call|>", g, tools, Message{Content: "<|tool_call>call:f{x:01}<tool_call|>"}},
		{"unclosed string", `<|tool_call>call:f{x:<|"|>a}<tool_call|>`, g, tools, Message{Content: `<|tool_call>call:f{x:<|"|>a}<tool_call|>`}},
		{"no name", "<|tool_call>call:{}<tool_call|>", g, tools, Message{Content: "<|tool_call>call:{}<tool_call|>"}},
		{"text after the arguments", "<|tool_call>call:f{} x<tool_call|>", g, tools, Message{Content: "<|tool_call>call:f{} x<tool_call|>"}},
		{"no tools offered", "<|tool_call>call:f{}<tool_call|>", g, ParseOptions{}, Message{Content: "<|tool_call>call:f{}<tool_call|>"}},
	})
}

// TestRenderGemma4: a conversation with tools, a call and its result, in
// Gemma 4's format, thinking on and off. The call's result and the answer
// after it are rendered in the model's turn (the conversation rewritten as
// llama.cpp rewrites it for such templates), and a prompt that ends with a
// closed model turn gets the next one opened.
func TestRenderGemma4(t *testing.T) {
	tmpl, err := Parse(testutil.Gemma4Template)
	if err != nil {
		t.Fatal(err)
	}
	if f := tmpl.Format(); f.Tools != ToolsGemma4 || !f.Thinking {
		t.Fatalf("format %+v, want Gemma 4's", f)
	}
	tools := []Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
	call := Message{Role: RoleAssistant, Thinking: "need it", ToolCalls: []ToolCall{{ID: "c1", Name: "get_weather",
		Arguments: `{"city":"Paris","days":2,"opts":{"metric":true,"tags":["a","b"]}}`}}}
	result := Message{Role: RoleTool, ToolCallID: "c1", Content: `{"sky":"sunny","temp":21.5}`}
	const system = "<bos><|turn>system\n"
	const decl = `<|tool>declaration:get_weather{<|"|>city<|"|>:{<|"|>type<|"|>:<|"|>string<|"|>}}<tool|><turn|>` + "\n"
	const callText = "<|turn>user\nWeather?<turn|>\n<|turn>model\n" +
		`<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:2,opts:{metric:true,tags:[<|"|>a<|"|>,<|"|>b<|"|>]}}<tool_call|>` +
		`<|tool_response>response:get_weather{sky:<|"|>sunny<|"|>,temp:21.5}<tool_response|>`
	off, on := false, true
	for _, c := range []struct {
		name     string
		msgs     []Message
		thinking *bool
		want     string
	}{
		{"plain, thinking off", []Message{{Role: RoleUser, Content: "Hi"}}, &off,
			"<bos><|turn>user\nHi<turn|>\n<|turn>model\n<|channel>thought\n<channel|>"},
		{"plain, thinking on", []Message{{Role: RoleUser, Content: "Hi"}}, &on,
			system + "<|think|><turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\n"},
		{"after the result, thinking off", []Message{{Role: RoleUser, Content: "Weather?"}, call, result}, &off,
			system + decl + callText + "<|channel>thought\n<channel|>"},
		{"after the result, thinking on", []Message{{Role: RoleUser, Content: "Weather?"}, call, result}, &on,
			system + "<|think|>" + decl + callText},
		{"answered, thinking on", []Message{{Role: RoleUser, Content: "Weather?"}, call, result,
			{Role: RoleAssistant, Content: "Sunny.<|channel>thought\nx<channel|>"}}, &on,
			system + "<|think|>" + decl + callText + "Sunny.<turn|>\n<|turn>model\n"},
		{"plain text result, two results for one call", []Message{{Role: RoleUser, Content: "Weather?"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: `{}`}}},
			{Role: RoleTool, ToolCallID: "c1", Content: "it rains"}, {Role: RoleTool, ToolCallID: "c9", Content: "7"}}, &off,
			system + "<|tool>declaration:get_weather{<|\"|>city<|\"|>:{<|\"|>type<|\"|>:<|\"|>string<|\"|>}}<tool|><turn|>\n" +
				"<|turn>user\nWeather?<turn|>\n<|turn>model\n<|tool_call>call:f{}<tool_call|>" +
				`<|tool_response>response:f{value:<|"|>it rains<|"|>}<tool_response|><|tool_response>response:c9{value:7}<tool_response|>` +
				"<|channel>thought\n<channel|>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tl []Tool
			if len(c.msgs) > 1 {
				tl = tools
			}
			got, err := tmpl.Render(c.msgs, RenderOptions{AddGenerationPrompt: true, BOSToken: "<bos>", Tools: tl, EnableThinking: c.thinking})
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
