module github.com/lowmem/llm

go 1.26.8

require (
	github.com/x448/float16 v0.8.4
	golang.org/x/exp v0.0.0-20261014143641-f0251eb4aa3e
	golang.org/x/sys v0.49.0
)
