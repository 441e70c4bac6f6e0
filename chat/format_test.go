package chat

import "testing"

func TestToolSyntaxString(t *testing.T) {
	for s, want := range map[ToolSyntax]string{
		ToolsNone: "none", ToolsLlama3: "llama3", ToolsHermes: "hermes", ToolsMistral: "mistral", ToolsGemma4: "gemma4", ToolsSeed: "seed",
		ToolSyntax(9): "ToolSyntax(9)", // used to panic: index out of range
	} {
		if got := s.String(); got != want {
			t.Errorf("ToolSyntax(%d).String() = %q, want %q", s, got, want)
		}
	}
}
