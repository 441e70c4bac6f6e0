package model

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/lowmem/llm/internal/gguf"
)

// Ollama's converter writes some models under names of its own where
// llama.cpp's converter, whose names this package reads, has others.
// ConfigFromGGUF first rewrites such a header in place into llama.cpp's
// names (gguf.File's edits: the tensors' data stay where they are), so
// that everything after it — the tensor list, the plan, the tokenizer,
// the chat format — meets one dialect. Where Ollama's file leaves out
// what llama.cpp's converter would state from the same checkpoint, the
// translation states the value Ollama's runtime assumes. Each dialect is
// in a file of its own (dialect_*.go); the architectures Ollama's
// converter writes as llama.cpp's (llama but for narrow heads, qwen2,
// qwen3, qwen3moe, gemma2, phi3, lfm2, lfm2moe, nemotron_h,
// nemotron_h_moe, bert, nomic-bert) need none. A translation is idempotent: a header already
// translated reads the same again. A header that states one thing under
// both dialects' names is refused; where the translation derives a value
// from Ollama's key, it is accepted only when the two agree.

// ollamaGptOss renames the tensors of a block that Ollama's gptoss files
// name otherwise: the attention's output projection, the norm before the
// feed-forward, and the sinks (a bare name in files converted from
// Hugging Face's checkpoint).
var ollamaGptOss = map[string]string{
	"attn_out.weight": "attn_output.weight",
	"attn_out.bias":   "attn_output.bias",
	"ffn_norm.weight": "post_attention_norm.weight",
	"attn_sinks":      "attn_sinks.weight",
}

var blockPrefix = regexp.MustCompile(`^blk\.[0-9]+\.`)

// ollamaPre is the pre-tokenizer Ollama's runtime builds into each of
// these architectures' BPE tokenizers, named as llama.cpp names it: its
// converter writes "default" for a pre-tokenizer it does not recognise
// (Mistral's Tekken among them), and its runtime does not read the key.
var ollamaPre = map[string]string{
	"qwen25vl": "qwen2", "qwen3vl": "qwen2", "qwen3vlmoe": "qwen2",
	"qwen35": "qwen2", "qwen35moe": "qwen2", "qwen3next": "qwen2",
	"mistral3": "tekken",
	"olmo3":    "llama-bpe",
}

// translate rewrites f in place when it is in a dialect of another
// converter; otherwise it does nothing.
func translate(f *gguf.File) error {
	if pre, ok := ollamaPre[f.Arch()]; ok {
		statePre(f, pre)
	}
	switch f.Arch() {
	case "gptoss":
		return translateGptOss(f)
	case "qwen25vl":
		return translateQwen25VL(f)
	case "qwen3vl", "qwen3vlmoe":
		return translateQwen3VL(f)
	case "gemma3":
		return translateGemma3(f)
	case "gemma3n":
		return translateGemma3n(f)
	case "mistral3":
		return translateMistral3(f)
	case "glm4moelite":
		return translateGlm4MoeLite(f)
	case "deepseek2":
		return translateDeepSeek2(f)
	case "qwen35", "qwen35moe", "qwen3next":
		return translateQwen35(f)
	case "olmo3":
		return translateOlmo3(f)
	case "llama":
		return translateLlama(f)
	}
	return nil
}

// translateGptOss makes an Ollama gptoss file (ollama pull gpt-oss) read as
// llama.cpp's gpt-oss: the architecture and its keys renamed; YaRN, which
// Ollama's runtime applies whenever the file gives a scaling factor, stated
// as llama.cpp's files state it; the o200k pre-tokenizer, which Ollama's
// runtime has built in (its converter writes "default"); and the tensors
// of ollamaGptOss renamed.
func translateGptOss(f *gguf.File) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("model: Ollama gptoss file: "+format+": %w", append(args, ErrBadModel)...)
	}
	if err := renameArch(f, "gptoss", "gpt-oss"); err != nil {
		return err
	}
	if _, ok := f.Get("gpt-oss.rope.scaling.type"); !ok {
		if _, ok := f.Get("gpt-oss.rope.scaling.factor"); ok {
			f.Set("gpt-oss.rope.scaling.type", "yarn")
		}
	}
	statePre(f, "gpt-4o")
	for i := range f.Tensors {
		name := f.Tensors[i].Name
		p := blockPrefix.FindString(name)
		to, ok := ollamaGptOss[name[len(p):]]
		if p == "" || !ok {
			continue
		}
		if !f.RenameTensor(name, p+to) {
			return bad("it has both %s and %s", name, p+to)
		}
	}
	return nil
}

// renameArch renames the architecture from to to, and its keys with it;
// a key under both names is refused.
func renameArch(f *gguf.File, from, to string) error {
	for i := range f.KV {
		k := f.KV[i].Key
		if rest, ok := strings.CutPrefix(k, from+"."); ok && !f.RenameKey(k, to+"."+rest) {
			return fmt.Errorf("model: Ollama %s file: it has both %s and %s.%s: %w", from, k, to, rest, ErrBadModel)
		}
	}
	f.Set("general.architecture", to)
	return nil
}

// renameKey renames Ollama's key from, when the file has it, to
// llama.cpp's to; a file with both is refused.
func renameKey(f *gguf.File, from, to string) error {
	if _, ok := f.Get(from); ok && !f.RenameKey(from, to) {
		return fmt.Errorf("model: Ollama %s file: it has both %s and %s: %w", f.Arch(), from, to, ErrBadModel)
	}
	return nil
}

// agree sets the key to, which states what Ollama's key from implies, to
// v; a file that states another value there is refused (one that states
// v, as a header translated once does, is not).
func agree(f *gguf.File, from, to string, v float32) error {
	if x, ok := f.Get(to); ok {
		if x != v {
			return fmt.Errorf("model: Ollama %s file: %s = %v, but %s implies %v: %w", f.Arch(), to, x, from, v, ErrBadModel)
		}
		return nil
	}
	f.Set(to, v)
	return nil
}

// statePre names the pre-tokenizer of a byte-level BPE vocabulary whose
// file leaves it unnamed (no key, or Ollama's "default"): pre, the one
// Ollama's runtime uses for the architecture. A named one is kept.
func statePre(f *gguf.File, pre string) {
	if model, ok := f.String("tokenizer.ggml.model"); ok && model != "gpt2" {
		return
	}
	if p, _ := f.String("tokenizer.ggml.pre"); p == "" || p == "default" {
		f.Set("tokenizer.ggml.pre", pre)
	}
}
