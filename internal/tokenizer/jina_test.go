package tokenizer

import (
	"slices"
	"testing"
)

// The jina-embeddings-v2 vocabularies as llama.cpp reads them: base-en's
// and small-en's are WordPiece ("bert") with pre "jina-v2-en", which only
// a BPE vocabulary consults, so it tokenizes as without; base-es's and
// base-de's BPE pre-tokenizers "jina-v2-es" and "jina-v2-de" and
// base-code's "jina-v2-code" (and v1's "jina-v1-en") are GPT-2's
// (LLAMA_VOCAB_PRE_TYPE_GPT2; TestPreTokenizerAliases checks the splits),
// and only "jina-v2-code" and "jina-v1-en" set add_sep (a reranker's
// joining reads it; Encode appends no separator, as llama.cpp's tokenize
// does not).
func TestJinaVocabularies(t *testing.T) {
	plain, err := FromGGUF(metaFile(bertMeta()))
	if err != nil {
		t.Fatal(err)
	}
	kv := bertMeta()
	kv["tokenizer.ggml.pre"] = "jina-v2-en"
	en, err := FromGGUF(metaFile(kv))
	if err != nil {
		t.Fatalf("bert vocabulary with pre jina-v2-en: %v", err)
	}
	for _, s := range []string{"", "[UNK] x", "hello world"} {
		if a, b := en.Encode(s, true), plain.Encode(s, true); !slices.Equal(a, b) {
			t.Errorf("Encode(%q): %v with jina-v2-en, %v without", s, a, b)
		}
	}
	for _, tc := range []struct {
		pre    string
		addSEP bool
	}{{"jina-v2-es", false}, {"jina-v2-de", false}, {"jina-es", false}, {"jina-de", false}, {"jina-v2-code", true}, {"jina-v1-en", true}} {
		kv := gpt2Meta()
		kv["tokenizer.ggml.pre"], kv["tokenizer.ggml.seperator_token_id"] = tc.pre, uint32(4)
		tok, err := FromGGUF(metaFile(kv))
		if err != nil {
			t.Fatalf("%s: %v", tc.pre, err)
		}
		if tok.AddSEP() != tc.addSEP || !slices.Equal(tok.Encode("ab", true), []int32{2}) {
			t.Errorf("%s: AddSEP %v, Encode(ab) %v; want %v, [2]", tc.pre, tok.AddSEP(), tok.Encode("ab", true), tc.addSEP)
		}
	}
}
