// Package engine loads a model to run, the body of llm.Model: it maps the
// GGUF file, plans its memory (memplan), builds the model and its
// tokenizer, starts the thread pool and the residency of the weights
// (residency), and keeps the KV budget its sessions share. Its lock is
// held for reading by every computation (Acquire, Release: the
// seq.Guard of its sessions) and for writing by Close and by a change of
// where the weights are read from, so neither happens under a running
// forward pass.
//
//	e, err := engine.Load(ctx, "model.gguf", engine.Options{Request: memplan.Request{Threads: 2, Batch: 512}})
//	defer e.Close()
//	s, err := seq.New(e.Model, ops.NewExec(e.Pool), e.KVBudget, seq.Config{Context: 4096, Batch: 512, Guard: e, Vocab: e.Tok})
package engine
