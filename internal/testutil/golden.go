package testutil

import (
	"encoding/json"
	"fmt"
	"os"
)

// Golden is one llama.cpp reference file of the shared test data
// (golden/*.json, testdata README §3): a prompt, how llama.cpp tokenized it,
// its logits at every position and its greedy continuation. The tokenizer
// and the model are both checked against these files, so they read them
// through this one type.
type Golden struct {
	ModelFile    string      `json:"model_file"`
	PromptID     string      `json:"prompt_id"`
	Prompt       string      `json:"prompt"`
	AddBOS       bool        `json:"add_bos"`
	NVocab       int         `json:"n_vocab"`
	PromptTokens []int32     `json:"prompt_tokens"`
	PromptPieces []string    `json:"prompt_pieces"`
	Positions    []GoldenPos `json:"positions"`
	Greedy       struct {
		Tokens  []int32     `json:"tokens"`
		TextHex string      `json:"text_hex"`
		Margins []float64   `json:"margins"`
		Steps   []GoldenPos `json:"steps"`
	} `json:"greedy"`
}

// GoldenPos is what llama.cpp saw at one position: the token there (and
// its piece, for greedy steps), the log-sum-exp of the logits, the margin
// between the two best logits and the top (token, logit) pairs.
type GoldenPos struct {
	Token  int32        `json:"token"`
	Piece  string       `json:"piece"`
	LSE    float64      `json:"lse"`
	Margin float64      `json:"margin"`
	Top    [][2]float64 `json:"top"`
}

// ReadGolden decodes the golden file at path.
func ReadGolden(path string) (*Golden, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var g Golden
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &g, nil
}
