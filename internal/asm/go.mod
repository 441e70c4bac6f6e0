module github.com/lowmem/llm/internal/asm

go 1.26.8
