package tokenizer

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/gguf"
)

// metaFile is a GGUF header in memory: the KV pairs a test sets.
func metaFile(kv map[string]any) *gguf.File {
	f := &gguf.File{}
	for k, v := range kv {
		if v != nil {
			f.KV = append(f.KV, gguf.KV{Key: k, Value: v})
		}
	}
	return f
}

// spmMeta is a five-token SentencePiece vocabulary's metadata.
func spmMeta() map[string]any {
	return map[string]any{
		"tokenizer.ggml.model":      "llama",
		"tokenizer.ggml.tokens":     []string{"<unk>", "<s>", "</s>", "▁a", "a"},
		"tokenizer.ggml.scores":     []float32{0, 0, 0, -1, -2},
		"tokenizer.ggml.token_type": []int32{2, 3, 3, 1, 1},
	}
}

func gpt2Meta() map[string]any {
	return map[string]any{
		"tokenizer.ggml.model":        "gpt2",
		"tokenizer.ggml.pre":          "gpt-2",
		"tokenizer.ggml.tokens":       []string{"a", "b", "ab", "Ġ", "<|endoftext|>"},
		"tokenizer.ggml.merges":       []string{"a b"},
		"tokenizer.ggml.eos_token_id": uint32(4),
		"tokenizer.ggml.bos_token_id": uint32(4),
	}
}

func bertMeta() map[string]any {
	toks := make([]string, 110)
	for i := range toks {
		toks[i] = "[unused" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + "]"
	}
	toks[100], toks[101], toks[102], toks[103] = "[UNK]", "[CLS]", "[SEP]", "[MASK]"
	return map[string]any{"tokenizer.ggml.model": "bert", "tokenizer.ggml.tokens": toks}
}

// TestVocabInvariants checks the cross-field invariants of the tokenizer
// metadata: what llama.cpp refuses is refused with an error wrapping
// ErrBadVocab and gguf.ErrBadFile that names the keys (and both lengths,
// for arrays); what it tolerates loads, with a warning where it warns.
func TestVocabInvariants(t *testing.T) {
	tests := []struct {
		name    string
		base    func() map[string]any
		edit    map[string]any
		mention []string // nil: must load
		warn    string   // when loading: a warning containing this
		check   func(t *testing.T, tok *Tokenizer)
	}{
		{name: "scores shorter", base: spmMeta, edit: map[string]any{"tokenizer.ggml.scores": []float32{0, 0}},
			mention: []string{"tokenizer.ggml.scores", "tokenizer.ggml.tokens", "2", "5"}},
		{name: "scores longer", base: spmMeta, edit: map[string]any{"tokenizer.ggml.scores": make([]float32, 6)},
			mention: []string{"tokenizer.ggml.scores", "6", "5"}},
		{name: "int32 scores", base: spmMeta, edit: map[string]any{"tokenizer.ggml.scores": []int32{0, 0, 0, -1, -2}}},
		{name: "scores of strings", base: spmMeta, edit: map[string]any{"tokenizer.ggml.scores": []string{"a", "b", "c", "d", "e"}},
			mention: []string{"tokenizer.ggml.scores", "[]string"}},
		{name: "scores not an array", base: spmMeta, edit: map[string]any{"tokenizer.ggml.scores": float32(1)},
			mention: []string{"tokenizer.ggml.scores"}},
		{name: "token types shorter", base: spmMeta, edit: map[string]any{"tokenizer.ggml.token_type": []int32{2}},
			mention: []string{"tokenizer.ggml.token_type", "tokenizer.ggml.tokens", "1", "5"}},
		{name: "token types longer", base: spmMeta, edit: map[string]any{"tokenizer.ggml.token_type": make([]int32, 9)},
			mention: []string{"tokenizer.ggml.token_type", "9", "5"}},
		{name: "token types of floats", base: spmMeta, edit: map[string]any{"tokenizer.ggml.token_type": make([]float32, 5)},
			mention: []string{"tokenizer.ggml.token_type", "[]float32"}},
		{name: "token types out of range", base: spmMeta, edit: map[string]any{"tokenizer.ggml.token_type": []int32{2, 3, 3, -7, 1 << 30}}},
		{name: "tokens of ints", base: spmMeta, edit: map[string]any{"tokenizer.ggml.tokens": []uint32{1, 2}},
			mention: []string{"tokenizer.ggml.tokens", "[]uint32"}},
		{name: "tokens missing", base: spmMeta, edit: map[string]any{"tokenizer.ggml.tokens": nil},
			mention: []string{"tokenizer.ggml.tokens"}},
		{name: "tokens empty", base: spmMeta, edit: map[string]any{"tokenizer.ggml.tokens": []string{},
			"tokenizer.ggml.scores": nil, "tokenizer.ggml.token_type": nil}, mention: []string{"tokenizer.ggml.tokens"}},
		{name: "tokens duplicate", base: spmMeta, edit: map[string]any{"tokenizer.ggml.tokens": []string{"<unk>", "<s>", "</s>", "a", "a"}},
			mention: []string{"duplicate", `"a"`, "3", "4"}},
		{name: "model not a string", base: spmMeta, edit: map[string]any{"tokenizer.ggml.model": uint32(1)},
			mention: []string{"tokenizer.ggml.model"}},
		// llama.cpp keeps the default id (SPM: BOS 1) and warns.
		{name: "bos outside", base: spmMeta, edit: map[string]any{"tokenizer.ggml.bos_token_id": uint32(100000)},
			warn: "tokenizer.ggml.bos_token_id = 100000", check: func(t *testing.T, tok *Tokenizer) {
				if tok.BOS() != 1 {
					t.Errorf("BOS = %d, want the default 1", tok.BOS())
				}
			}},
		{name: "eos max uint32", base: spmMeta, edit: map[string]any{"tokenizer.ggml.eos_token_id": uint32(math.MaxUint32)},
			warn: "tokenizer.ggml.eos_token_id", check: func(t *testing.T, tok *Tokenizer) {
				if tok.EOS() != 2 || !tok.IsEOG(2) {
					t.Errorf("EOS = %d, want the default 2", tok.EOS())
				}
			}},
		{name: "eot negative", base: spmMeta, edit: map[string]any{"tokenizer.ggml.eot_token_id": int32(-1)},
			warn: "tokenizer.ggml.eot_token_id = -1"},
		{name: "fim pad outside", base: spmMeta, edit: map[string]any{"tokenizer.ggml.fim_pad_token_id": uint32(5)},
			warn: "tokenizer.ggml.fim_pad_token_id = 5", check: func(t *testing.T, tok *Tokenizer) {
				if !slices.Equal(tok.EOG(), []int32{2}) {
					t.Errorf("EOG = %v, want [2]", tok.EOG())
				}
			}},
		{name: "fim pad inside", base: spmMeta, edit: map[string]any{"tokenizer.ggml.fim_pad_token_id": uint32(4)},
			check: func(t *testing.T, tok *Tokenizer) {
				if !slices.Equal(tok.EOG(), []int32{2, 4}) {
					t.Errorf("EOG = %v, want [2 4]", tok.EOG())
				}
			}},
		{name: "eom by the old key", base: spmMeta, edit: map[string]any{"tokenizer.ggml.eom_token_id": uint32(3)},
			check: func(t *testing.T, tok *Tokenizer) {
				if !tok.IsEOG(3) {
					t.Errorf("EOM 3 is not EOG")
				}
			}},
		{name: "bos a string", base: spmMeta, edit: map[string]any{"tokenizer.ggml.bos_token_id": "1"},
			mention: []string{"tokenizer.ggml.bos_token_id", "string"}},
		{name: "add_bos not a bool", base: spmMeta, edit: map[string]any{"tokenizer.ggml.add_bos_token": uint8(1)},
			mention: []string{"tokenizer.ggml.add_bos_token"}},
		// A one-token vocabulary has no default BOS (1): add_bos cannot be
		// honoured, which llama.cpp refuses.
		{name: "add_bos without bos", base: spmMeta, edit: map[string]any{"tokenizer.ggml.tokens": []string{"<unk>"},
			"tokenizer.ggml.scores": []float32{0}, "tokenizer.ggml.token_type": []int32{2}},
			mention: []string{"tokenizer.ggml.add_bos_token", "tokenizer.ggml.bos_token_id"}},
		{name: "add_eos without eos", base: gpt2Meta, edit: map[string]any{"tokenizer.ggml.add_eos_token": true,
			"tokenizer.ggml.eos_token_id": nil}, mention: []string{"tokenizer.ggml.add_eos_token", "tokenizer.ggml.eos_token_id"}},
		{name: "add_eos with eos", base: gpt2Meta, edit: map[string]any{"tokenizer.ggml.add_eos_token": true},
			check: func(t *testing.T, tok *Tokenizer) {
				if got := tok.Encode("ab", true); !slices.Equal(got, []int32{2, 4}) {
					t.Errorf("Encode(ab) = %v, want [2 4]", got)
				}
			}},
		{name: "merges missing", base: gpt2Meta, edit: map[string]any{"tokenizer.ggml.merges": nil},
			mention: []string{"tokenizer.ggml.merges"}},
		{name: "merges of ints", base: gpt2Meta, edit: map[string]any{"tokenizer.ggml.merges": []int32{1}},
			mention: []string{"tokenizer.ggml.merges", "[]int32"}},
		// llama.cpp keeps malformed merges (as a pair that never matches)
		// and merges of unknown pieces; the first of two equal merges wins.
		{name: "merges malformed", base: gpt2Meta, edit: map[string]any{"tokenizer.ggml.merges": []string{
			"", " ", "ab", "a b c", "  a", "\x00 \xff", "zz yy", "b a", "a b", "a b"}},
			check: func(t *testing.T, tok *Tokenizer) {
				if got := tok.Encode("ab ba", false); len(got) == 0 {
					t.Errorf("Encode gave nothing")
				}
			}},
		{name: "bert defaults", base: bertMeta, check: func(t *testing.T, tok *Tokenizer) {
			if tok.BOS() != 101 || !tok.AddBOS() {
				t.Errorf("BOS %d, AddBOS %v; want 101, true", tok.BOS(), tok.AddBOS())
			}
		}},
		// bert adds [SEP]: a vocabulary too small for the default 102 and
		// without the key cannot, which llama.cpp refuses.
		{name: "bert without sep", base: bertMeta, edit: map[string]any{"tokenizer.ggml.tokens": make([]string, 50),
			"tokenizer.ggml.bos_token_id": uint32(1)},
			mention: []string{"tokenizer.ggml.add_sep_token", "tokenizer.ggml.seperator_token_id"}},
		{name: "bert lowercase not a bool", base: bertMeta, edit: map[string]any{"tokenizer.ggml.normalizer.lowercase": "yes"},
			mention: []string{"tokenizer.ggml.normalizer.lowercase"}},
		{name: "unsupported model", base: spmMeta, edit: map[string]any{"tokenizer.ggml.model": "plamo2"}, mention: []string{"plamo2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kv := tc.base()
			for k, v := range tc.edit {
				kv[k] = v
			}
			tok, err := FromGGUF(metaFile(kv))
			if tc.mention == nil {
				if err != nil {
					t.Fatalf("FromGGUF: %v", err)
				}
				w := strings.Join(tok.Warnings(), "\n")
				if (tc.warn == "") != (w == "") || !strings.Contains(w, tc.warn) {
					t.Errorf("warnings %q, want one containing %q", w, tc.warn)
				}
				if tc.check != nil {
					tc.check(t, tok)
				}
				return
			}
			if err == nil {
				t.Fatal("FromGGUF succeeded, want an error")
			}
			if tc.name == "unsupported model" {
				if !errors.Is(err, ErrUnsupported) {
					t.Errorf("error %v does not wrap ErrUnsupported", err)
				}
			} else if !errors.Is(err, ErrBadVocab) || !errors.Is(err, gguf.ErrBadFile) {
				t.Errorf("error %v does not wrap ErrBadVocab and gguf.ErrBadFile", err)
			}
			for _, s := range tc.mention {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

// GLM-4's vocabularies ("glm4", and the older "chatglm-bpe"): llama.cpp
// sets no BOS for them, so none is added; a bos_token_id in the file (the
// converter writes [gMASK]'s) still names it, and add_bos_token still
// decides, as llama.cpp reads both after the pre-tokenizer's defaults.
func TestGLM4VocabBOS(t *testing.T) {
	for _, pre := range []string{"glm4", "chatglm-bpe"} {
		kv := gpt2Meta()
		kv["tokenizer.ggml.pre"], kv["tokenizer.ggml.bos_token_id"] = pre, nil
		tok, err := FromGGUF(metaFile(kv))
		if err != nil {
			t.Fatal(err)
		}
		if tok.BOS() != -1 || tok.AddBOS() || !slices.Equal(tok.Encode("ab", true), []int32{2}) {
			t.Errorf("%s: BOS %d, AddBOS %v, Encode(ab) %v; want -1, false, [2]", pre, tok.BOS(), tok.AddBOS(), tok.Encode("ab", true))
		}
		kv["tokenizer.ggml.bos_token_id"] = uint32(4)
		if tok, err = FromGGUF(metaFile(kv)); err != nil || tok.BOS() != 4 || tok.AddBOS() {
			t.Errorf("%s with bos_token_id 4: BOS %d, AddBOS %v, %v", pre, tok.BOS(), tok.AddBOS(), err)
		}
	}
}
