// Package chat turns a conversation into the prompt a model was trained on,
// and the model's reply back into a message.
//
// Render formats messages with the model's own chat template (the Jinja
// source a GGUF file carries as tokenizer.chat_template) exactly as
// llama.cpp's Jinja path does, including its adjustments for what a template
// cannot express (a template without a system role gets the system prompt
// merged into the first user message, developer becomes system, tool-call
// arguments become objects for templates that read them as objects). The
// Jinja engine (internal/jinja) bounds every render: a hostile template
// gets an error, never a hang or an out-of-memory crash.
//
// Parse and Parser go the other way: they split raw model output into the
// answer, the reasoning text (Qwen3-style <think>…</think>, Gemma 4's
// <|channel>thought…<channel|>, Seed-OSS's <seed:think>…</seed:think>) and
// tool calls in the formats of Llama 3.x (JSON, optionally after
// <|python_tag|>), Qwen/Hermes (<tool_call>…</tool_call>, with JSON or Qwen
// 3.5's XML form inside: xmlcall.go), Seed-OSS (the XML form in
// <seed:tool_call>), Gemma 4 (<|tool_call>call:NAME{…}<tool_call|>, its own
// notation: gemma4.go), GLM-4.5/4.6/4.7 (<tool_call>NAME, then
// <arg_key>…</arg_key><arg_value>…</arg_value> pairs: glm.go), Mistral
// ([TOOL_CALLS][…]) and gpt-oss's harmony
// format (<|channel|>analysis for reasoning, final for the answer, a
// message to=functions.NAME for a call), whose templates alone take a
// reasoning effort (Format.CheckEffort). DetectFormat picks the format
// from the template source, as llama.cpp does. A forced call
// (Format.CallSchema for JSON syntaxes, Format.CallGrammar for the
// others) says what generation holds the output to.
//
// The root package re-exports the pieces a Go caller needs
// (llm.Message = chat.Message, llm.RenderChat = chat.Render …).
//
// Example:
//
//	prompt, err := chat.Render(templateSource, []chat.Message{
//		{Role: chat.RoleSystem, Content: "You are terse."},
//		{Role: chat.RoleUser, Content: "Capital of France?"},
//	}, chat.RenderOptions{AddGenerationPrompt: true, BOSToken: "<s>", EOSToken: "</s>"})
package chat
