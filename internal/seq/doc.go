// Package seq holds the mechanics of one conversation with a model, the
// body of llm.Session: the tokens held, their KV cache and the logits
// after the last one; evaluation in chunks of the batch size; growing the
// KV cache by memplan's schedule within a shared Budget; shifting the
// context when it is full; rewinding (Truncate) after a failed or
// cancelled evaluation; holding exactly a whole prompt while reusing the
// prefix it shares with the tokens held (Hold, for chat turns); sampling a
// continuation (Generate, GenerateFrom) until an end-of-generation token,
// token by token or speculatively, verifying prompt-lookup drafts in one
// pass (Lookup), with a report of what it did (Usage); and saving and restoring it all
// (internal/snapshot).
//
// A Seq runs one call at a time: every call that computes or changes it
// runs between enter and leave, and a call made while another runs (from
// another goroutine, or from inside Generate's yield) fails with ErrBusy.
// Each step of a call (a chunk of an evaluation) holds the Config's Guard
// (the model's lock), so the model cannot be closed under a forward pass
// and a model closed meanwhile ends the call with ErrClosed at its next
// step; Close of the Seq itself may come at any time, from any goroutine,
// with the same effect. A panic in a step rewinds the chunk before it goes
// on up (llm turns it into an error). Errors read as the llm package's
// own ("llm: ..."), since this is where llm.Session's work is done; the
// sentinels they wrap are kv.ErrFull, model.ErrTokenOutOfRange,
// memplan.ErrOutOfBudget, ErrInvalidOption, ErrBusy and ErrClosed.
//
// When a generation ends, the sequence holds exactly the text it yielded
// (settle): the token of a break is evaluated, text held back is dropped.
// Every byte of KV growth goes through the Budget, which a residency
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
