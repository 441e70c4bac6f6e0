// Package llm runs GGUF language models (Llama, Qwen, Gemma, Phi families) on
// CPUs in pure Go: no cgo, no C++ toolchain, weights read in place from a
// memory-mapped file.
//
// Load a model once, share it, and give each goroutine its own Session:
//
//	m, err := llm.Load("model.gguf", llm.WithContextSize(4096))
//	if err != nil {
//		return err
//	}
//	defer m.Close()
//	s, err := m.NewSession()
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//	text, err := s.Generate(ctx, "Once upon a time", llm.MaxTokens(64), llm.Temperature(0))
//
// Chat renders a conversation with the model's chat template and parses
// the reply (answer, reasoning, tool calls); each turn evaluates only the
// tokens the session does not already hold:
//
//	reply, err := s.Chat(ctx, []llm.Message{{Role: llm.RoleUser, Content: "Hi"}})
//
// Errors wrap sentinel values (ErrBadModel, ErrUnsupportedArch,
// ErrContextFull, ErrInvalidOption …) that callers test with errors.Is;
// each is the value of the package that finds the problem, so errors made
// there match too. Nothing panics across the API.
package llm
