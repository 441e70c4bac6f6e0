package testutil

import "github.com/lowmem/llm/internal/templates"

// HarmonyTemplate is the harmony-format (gpt-oss) chat template the
// library falls back on (templates.Harmony), for test models in that
// format.
const HarmonyTemplate = templates.Harmony

// HarmonyTokens are the harmony format's markers as gpt-oss's vocabulary
// holds them: control tokens, of which llama.cpp makes <|return|> and
// <|call|> end generation and keeps <|end|> and the channel markers in
// the text (ModelSpec.ChatTokens).
var HarmonyTokens = []string{"<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>"}

// TinyHarmony is TinyLlama (context 1024) with HarmonyTemplate and its
// markers as control tokens: a model whose chat is in gpt-oss's format.
func TinyHarmony() ModelSpec {
	s := TinyLlama()
	s.Context = 1024
	s.ChatTemplate = HarmonyTemplate
	s.ChatTokens = HarmonyTokens
	return s
}
