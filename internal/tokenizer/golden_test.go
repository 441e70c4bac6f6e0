package tokenizer

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// TestGoldenPrompts checks, for every golden file, that the prompt encodes
// to llama.cpp's prompt_tokens (llama_tokenize with add_special = true,
// parse_special = false), that Piece gives its prompt_pieces and greedy
// pieces, and that Decode of the greedy tokens gives its text.
func TestGoldenPrompts(t *testing.T) {
	dir := testdataDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "golden", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		missingTestdata(t, "no golden files in "+dir)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			g, err := testutil.ReadGolden(file)
			if err != nil {
				t.Fatal(err)
			}
			// The prompt files hold the exact bytes; the JSON copy must agree.
			p, err := os.ReadFile(filepath.Join(dir, "prompts", g.PromptID+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			if string(p) != g.Prompt {
				t.Fatalf("prompts/%s.txt differs from the golden prompt", g.PromptID)
			}
			tok := cachedTokenizer(t, testdataFile(t, filepath.Join("models", g.ModelFile)))
			if tok.Size() != g.NVocab {
				t.Errorf("Size() = %d, want %d", tok.Size(), g.NVocab)
			}
			if tok.AddBOS() != g.AddBOS {
				t.Errorf("AddBOS() = %v, want %v", tok.AddBOS(), g.AddBOS)
			}
			got := tok.Encode(g.Prompt, true)
			if !slices.Equal(got, g.PromptTokens) {
				i := 0
				for i < len(got) && i < len(g.PromptTokens) && got[i] == g.PromptTokens[i] {
					i++
				}
				t.Fatalf("%s: %d tokens, want %d; first difference at %d\n got %v\nwant %v",
					g.PromptID, len(got), len(g.PromptTokens), i,
					got[i:min(i+10, len(got))], g.PromptTokens[i:min(i+10, len(g.PromptTokens))])
			}
			for i, id := range g.PromptTokens {
				if piece := string(tok.Piece(id)); piece != g.PromptPieces[i] {
					t.Errorf("Piece(%d) = %q, want %q", id, piece, g.PromptPieces[i])
				}
			}
			for _, s := range g.Greedy.Steps {
				// The golden shows invalid UTF-8 as U+FFFD; compare valid pieces only.
				if piece := string(tok.Piece(s.Token)); piece != s.Piece && validUTF8(piece) {
					t.Errorf("Piece(%d) = %q, want %q", s.Token, piece, s.Piece)
				}
			}
			want, err := hex.DecodeString(g.Greedy.TextHex)
			if err != nil {
				t.Fatal(err)
			}
			if text := tok.Decode(g.Greedy.Tokens); text != string(want) {
				t.Errorf("Decode(greedy tokens) = %q, want %q", text, want)
			}
		})
	}
}

func validUTF8(s string) bool {
	for _, r := range s {
		if r == 0xFFFD {
			return false
		}
	}
	return true
}

// BenchmarkEncodeP2 tokenizes the 2989-byte prompt P2 with the 32000-token
// SPM vocabulary.
func BenchmarkEncodeP2(b *testing.B) { benchEncodeP2(b, "vocab/ggml-vocab-llama-spm.gguf") }

// BenchmarkEncodeP2BPE is the same with the GPT-2 vocabulary.
func BenchmarkEncodeP2BPE(b *testing.B) { benchEncodeP2(b, "vocab/ggml-vocab-gpt-2.gguf") }

func benchEncodeP2(b *testing.B, vocab string) {
	tok := cachedTokenizer(b, testdataFile(b, vocab))
	p, err := os.ReadFile(testdataFile(b, "prompts/P2.txt"))
	if err != nil {
		b.Fatal(err)
	}
	text := string(p)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Encode(text, true)
	}
}
