// Package openaitest checks the server against the official OpenAI Go
// client (github.com/openai/openai-go). It is its own module so that the
// library's go.mod does not carry the client. Run it with
//
//	cd server/openaitest && go test ./...
//
// node/ holds the same checks for the official Node client (the openai npm
// package); TestNodeClient runs them when node_modules is installed there
// (npm ci --prefix server/openaitest/node).
package openaitest
