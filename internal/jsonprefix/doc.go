// Package jsonprefix keeps generated text a JSON object: recognizers of
// the byte strings that can still grow into one JSON object (RFC 8259) —
// any object (Machine), or one a JSON schema allows (Compile,
// SchemaMachine) — and the filter over a vocabulary that the sampler asks
// which tokens may come next. It is what llm.WithJSON, llm.WithJSONSchema
// and the server's response_format run on.
//
// The recognizers are stricter than JSON in bounded ways, so that a model
// cannot stall inside the constraint: a run of whitespace between tokens
// of JSON is at most MaxSpace bytes with one line feed (and no carriage
// return), and objects and arrays nest at most MaxDepth deep. The text
// begins with the opening brace, and nothing may follow the closing one:
// the object is complete there and generation ends.
//
//	schema, err := jsonprefix.Compile(raw) // or nil for any object
//	f := jsonprefix.NewFilter(vocab, size, schema) // vocab.OutputPiece(id): the text a token adds
//	for !f.Done() {
//		id := sampler.SampleAllowed(logits, history, f)
//		f.Accept(id)
//		...
//	}
package jsonprefix
