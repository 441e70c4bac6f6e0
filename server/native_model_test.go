package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// TestModelNativeCompletion: on FromModel's Backend, a prompt of token
// ids generates what its text does (greedy), return_tokens lists the
// generated ids, n_probs gives each token's completion_probabilities with
// that many alternatives (the chosen token's id first when greedy), a
// stream carries them chunk by chunk, and an id outside the vocabulary is
// refused.
func TestModelNativeCompletion(t *testing.T) {
	m, hs, ids := startDog(t)
	const text = dogText
	idsJSON, _ := json.Marshal(ids)
	byText := postNative(t, hs.URL+"/completion", `{"prompt":"`+text+`","temperature":0,"n_predict":6,"return_tokens":true}`)
	byIDs := postNative(t, hs.URL+"/completion", `{"prompt":`+string(idsJSON)+`,"temperature":0,"n_predict":6,"return_tokens":true}`)
	if byText.Content != byIDs.Content || !slices.Equal(byText.Tokens, byIDs.Tokens) || byIDs.TokensEvaluated != len(ids) ||
		len(byIDs.Tokens) != byIDs.TokensPredicted || byIDs.TokensPredicted == 0 {
		t.Fatalf("text %+v\nids %+v", byText, byIDs)
	}
	// The prompt echoed is its tokens' pieces, the BOS added included.
	var want strings.Builder
	for _, id := range ids {
		want.WriteString(m.TokenText(id))
	}
	if ids[0] != m.BOS() || byText.Prompt != want.String() || byIDs.Prompt != want.String() {
		t.Errorf("prompt %q and %q, want %q", byText.Prompt, byIDs.Prompt, want.String())
	}
	// Mixed: the text after the ids is tokenized on its own.
	head := ids[:len(ids)-1]
	headJSON, _ := json.Marshal(head)
	mixed := postNative(t, hs.URL+"/completion", fmt.Sprintf(`{"prompt":[%s,%q],"temperature":0,"n_predict":2}`,
		strings.Trim(string(headJSON), "[]"), " dog"))
	if mixed.TokensEvaluated < len(ids) {
		t.Errorf("mixed prompt evaluated %d tokens, want at least %d", mixed.TokensEvaluated, len(ids))
	}

	got := postNative(t, hs.URL+"/completion", `{"prompt":"`+text+`","temperature":0,"n_predict":4,"n_probs":3,"return_tokens":true}`)
	if len(got.Probs) != len(got.Tokens) || len(got.Probs) == 0 {
		t.Fatalf("probs %+v for tokens %v", got.Probs, got.Tokens)
	}
	for i, p := range got.Probs {
		if p.ID != got.Tokens[i] || len(p.TopLogprobs) != 3 || p.TopLogprobs[0].ID != p.ID || p.Logprob > 0 ||
			p.TopLogprobs[0].Logprob < p.TopLogprobs[1].Logprob || !sameBytes(p.Bytes, m.TokenText(p.ID)) {
			t.Errorf("probs[%d] = %+v (token %d)", i, p, got.Tokens[i])
		}
	}

	// A stream's chunks carry their tokens' ids without return_tokens.
	chunks := nativeStream(t, hs.URL+"/completion", `{"prompt":"`+text+`","temperature":0,"n_predict":4,"n_probs":2,"stream":true}`)
	var streamed []int32
	for _, c := range chunks[:len(chunks)-1] {
		streamed = append(streamed, c.Tokens...)
		for _, p := range c.Probs {
			if len(p.TopLogprobs) != 2 {
				t.Errorf("chunk probs %+v", c.Probs)
			}
		}
	}
	if last := chunks[len(chunks)-1]; !slices.Equal(streamed, got.Tokens) || !last.Stop || last.Probs != nil || len(last.Tokens) != 0 {
		t.Errorf("streamed tokens %v, want %v; last %+v", streamed, got.Tokens, last)
	}

	resp, body := post(t, hs.URL+"/completion", fmt.Sprintf(`{"prompt":[1,%d]}`, m.Info().VocabSize))
	var e nativeErr
	if resp.StatusCode != 400 || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error.Message, "not a token") {
		t.Errorf("out-of-vocabulary id: %d %s", resp.StatusCode, body)
	}
}

// recordBackend is FromModel's Backend whose sessions note the prompts of
// token ids they generate from.
type recordBackend struct {
	*Model
	mu      *sync.Mutex
	prompts *[][]int32
}

func (b recordBackend) NewSession() (Session, error) {
	s, err := b.Model.NewSession()
	if err != nil {
		return nil, err
	}
	return recordSession{s.(TokenSession), b}, nil
}

type recordSession struct {
	TokenSession
	b recordBackend
}

func (s recordSession) GenerateTokens(ctx context.Context, prompt []int32, p Params, yield func(Piece) bool) (Result, error) {
	s.b.mu.Lock()
	*s.b.prompts = append(*s.b.prompts, slices.Clone(prompt))
	s.b.mu.Unlock()
	return s.TokenSession.GenerateTokens(ctx, prompt, p, yield)
}

// TestModelInfillQwen3: /infill on a real Qwen3 vocabulary (whose FIM,
// repo and file-separator tokens the tokenizer finds by their text) builds
// llama-server's repo-level prompt token by token, and generates after it.
func TestModelInfillQwen3(t *testing.T) {
	m := loadModel(t, testutil.Testdata(t, "models/tiny-qwen3-q4_k_m.gguf"), llm.WithContextSize(4096))
	fim := m.Info().FIM
	special := func(s string) int32 {
		ids, err := m.TokenizeSpecial(s)
		if err != nil || len(ids) != 1 {
			t.Fatalf("%s: %v %v", s, ids, err)
		}
		return ids[0]
	}
	if fim.Pre != special("<|fim_prefix|>") || fim.Suf != special("<|fim_suffix|>") || fim.Mid != special("<|fim_middle|>") ||
		fim.Rep != special("<|repo_name|>") || fim.Sep != special("<|file_sep|>") || fim.Pad != special("<|fim_pad|>") {
		t.Fatalf("FIM tokens %+v", fim)
	}
	var prompts [][]int32
	var mu sync.Mutex
	_, hs := serveModel(t, m, "tiny-qwen3", 1, func(b Backend) Backend { return recordBackend{b.(*Model), &mu, &prompts} })
	got := postNative(t, hs.URL+"/infill", `{"input_prefix":"def add(a, b):\n","input_suffix":"\nprint(add(1, 2))\n",
		"input_extra":[{"filename":"util.py","text":"import os\n"}],"prompt":"    return","n_predict":3,"temperature":0}`)
	plain := func(s string) []int32 {
		ids, err := m.Tokenize(s)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	want := slices.Concat([]int32{fim.Rep}, plain("myproject\n"), []int32{fim.Sep}, plain("util.py\n"), plain("import os\n"),
		[]int32{fim.Sep}, plain("filename\n"),
		[]int32{fim.Pre}, plain("def add(a, b):\n"), plain("    return"), []int32{fim.Suf}, plain("\nprint(add(1, 2))\n"), []int32{fim.Mid})
	if len(prompts) != 1 || !slices.Equal(prompts[0], want) {
		t.Fatalf("infill prompt\n%v\nwant\n%v", prompts, want)
	}
	if got.TokensEvaluated != len(want) || !got.Stop || got.TokensPredicted == 0 {
		t.Errorf("answer %+v", got)
	}
}
