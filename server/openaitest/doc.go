// Package openaitest checks the server against the official OpenAI Go
// client (github.com/openai/openai-go): over a scripted backend (exact
// replies: chat, streaming with usage, a tool-call round trip,
// completions, errors) and over a real model behind server.FromModel (a
// random-weight testutil model: replies equal to Session.Chat's, streamed
// and whole, usage, a tool result sent back, completions, and embeddings
// equal to Session.Embed's, of strings, token arrays and base64, which
// openai-go v1.12.0 leaves undecoded in the raw JSON). It is its own
// module so that the library's go.mod does not carry the client. Run it with
//
//	cd server/openaitest && go test ./...
//
// node/ holds the same checks for the official Node client (the openai npm
// package, which asks for embeddings in base64 unless told otherwise and
// decodes them); TestNodeClient and TestNodeClientRealModel run them when
// node_modules is installed there (npm ci --prefix server/openaitest/node).
package openaitest
