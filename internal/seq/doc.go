// Package seq holds the mechanics of one conversation with a model, the
// body of llm.Session: the tokens held, their KV cache and the logits
// after the last one; evaluation in chunks of the batch size; growing the
// KV cache by memplan's schedule within a shared Budget; shifting the
// context when it is full; rewinding (Truncate) after a failed or
// cancelled evaluation; holding exactly a whole prompt while reusing the
// prefix it shares with the tokens held (Hold, for chat turns); sampling a
// continuation (Generate, GenerateFrom) until an end-of-generation token,
// with a report of what it did (Usage); and saving and restoring it all
// (internal/snapshot).
//
// A Seq is used by one goroutine at a time. Every call that computes
// holds the Config's Guard (the model's lock) for its duration, so the
// model cannot be closed under it: Generate holds it token by token, so a
// model closed meanwhile ends generation with ErrClosed at the next
// token. Errors read as the llm package's own ("llm: ..."), since this is
// where llm.Session's work is done; the sentinels they wrap are
// kv.ErrFull, model.ErrTokenOutOfRange, memplan.ErrOutOfBudget,
// ErrInvalidOption and ErrClosed.
//
// Later work hooks in at fixed places: enter and leave bracket every call
// that computes (a busy flag against concurrent use, a closing flag that
// ends Generate within one token; Hold runs inside one enter/leave pair);
// every byte of KV growth goes through the Budget, which a residency
// policy may implement to move layers between memory and disk as the
// caches grow.
//
//	s, err := seq.New(m, ops.NewExec(pool), budget, seq.Config{Context: 4096, Batch: 512})
//	logits, err := s.Eval(ctx, tokens)        // append tokens, logits of the last
//	s.Truncate(n)                             // keep the first n tokens
//	reused, err := s.Hold(ctx, prompt)        // hold exactly prompt, evaluating what differs
//	err = s.Generate(ctx, "Once", g, yield)   // sample a continuation
//	u := s.Usage()                            // prompt, reused and generated tokens; why it ended
package seq
