package chat

import (
	"slices"
	"testing"
)

func TestToolSyntaxString(t *testing.T) {
	for s, want := range map[ToolSyntax]string{
		ToolsNone: "none", ToolsLlama3: "llama3", ToolsHermes: "hermes", ToolsMistral: "mistral", ToolsGemma4: "gemma4", ToolsSeed: "seed", ToolsGLM: "glm",
		ToolsCommandR: "commandr", ToolsGranite: "granite", ToolsNemotron: "nemotron", ToolsApertus: "apertus", ToolsLFM2: "lfm2", ToolsDeepSeek: "deepseek",
		ToolsKimi: "kimi", ToolsMiniMax: "minimax", ToolsFirefunction: "firefunction",
		ToolSyntax(17): "ToolSyntax(17)", // the first unnamed value: used to panic, index out of range
	} {
		if got := s.String(); got != want {
			t.Errorf("ToolSyntax(%d).String() = %q, want %q", s, got, want)
		}
	}
}

// TestMarkers: the texts a session keeps for the parser, in each format
// this package added beside the first ones.
func TestMarkers(t *testing.T) {
	xml := []string{"<function=", "</function>", "<parameter=", "</parameter>"}
	for _, c := range []struct {
		f    Format
		want []string
	}{
		{Format{Tools: ToolsGemma4, Thinking: true}, []string{"<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", `<|"|>`}},
		{Format{Tools: ToolsSeed, Thinking: true}, append([]string{"<seed:think>", "</seed:think>", "<seed:tool_call>", "</seed:tool_call>"}, xml...)},
		{Format{Tools: ToolsHermes, Thinking: true, XMLCalls: true}, append([]string{"<think>", "</think>", "<tool_call>", "</tool_call>"}, xml...)},
		{Format{Tools: ToolsHermes}, []string{"<tool_call>", "</tool_call>"}},
		{Format{Tools: ToolsGLM, Thinking: true}, []string{"<think>", "</think>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"}},
		{Format{Tools: ToolsCommandR, Thinking: true}, []string{"<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>", "<|START_RESPONSE|>", "<|END_RESPONSE|>"}},
		{Format{Tools: ToolsGranite, Thinking: true}, []string{"<think>", "</think>", "<|tool_call|>", "<response>", "</response>"}},
		{Format{Tools: ToolsGranite}, []string{"<|tool_call|>", "<response>", "</response>"}},
		{Format{Tools: ToolsNemotron, Thinking: true}, []string{"<think>", "</think>", "<TOOLCALL>", "</TOOLCALL>"}},
		{Format{Tools: ToolsApertus, Thinking: true}, []string{"<|inner_prefix|>", "<|inner_suffix|>", "<|tools_prefix|>", "<|tools_suffix|>"}},
		{Format{Tools: ToolsLFM2, Thinking: true}, []string{"<think>", "</think>", "<|tool_call_start|>", "<|tool_call_end|>"}},
		{Format{Tools: ToolsDeepSeek, Thinking: true}, []string{"<think>", "</think>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"}},
		{Format{Tools: ToolsKimi, Thinking: true}, []string{"<think>", "</think>", "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
			"<|tool_call_argument_begin|>", "<|tool_call_end|>"}},
		{Format{Tools: ToolsMiniMax, Thinking: true}, []string{"<think>", "</think>", "<minimax:tool_call>", "</minimax:tool_call>"}},
		{Format{Tools: ToolsMistral, Thinking: true, MistralThink: true}, []string{"[THINK]", "[/THINK]", "[TOOL_CALLS]", "[ARGS]"}},
		{Format{Tools: ToolsFirefunction}, []string{" functools["}},
	} {
		if got := c.f.Markers(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}
