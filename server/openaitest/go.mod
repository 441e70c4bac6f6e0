module github.com/lowmem/llm/server/openaitest

go 1.26.8

require (
	github.com/lowmem/llm v0.0.0
	github.com/openai/openai-go v1.12.0
)

require (
	github.com/tidwall/gjson v1.14.4 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	golang.org/x/exp v0.0.0-20261014143641-f0251eb4aa3e // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/lowmem/llm => ../..
