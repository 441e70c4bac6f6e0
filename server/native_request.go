package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// llama-server's native generation request: /completion's body (and
// /infill's, which adds input_prefix, input_suffix and input_extra). The
// OpenAI fields it shares with /v1/completions (temperature, top_p, seed,
// stop, penalties, max_tokens …) are commonRequest's, checked as there.
type nativeRequest struct {
	commonRequest
	Prompt        json.RawMessage `json:"prompt"`
	NPredict      *int            `json:"n_predict"`
	TopK          *int            `json:"top_k"`
	MinP          *float64        `json:"min_p"`
	RepeatPenalty *float64        `json:"repeat_penalty"`
	RepeatLastN   *int            `json:"repeat_last_n"`
	NProbs        *int            `json:"n_probs"`
	CachePrompt   *bool           `json:"cache_prompt"`
	Grammar       string          `json:"grammar"`
	JSONSchema    json.RawMessage `json:"json_schema"`
	ReturnTokens  bool            `json:"return_tokens"`
	// Code completion's limits (llama.vim and llama.vscode send them):
	// each line after the first indented by at least NIndent, and no new
	// line begun TMaxPredictMS after the first token.
	NIndent        *int     `json:"n_indent"`
	TMaxPredictMS  *int64   `json:"t_max_predict_ms"`
	ResponseFields []string `json:"response_fields"`

	InputPrefix json.RawMessage `json:"input_prefix"`
	InputSuffix json.RawMessage `json:"input_suffix"`
	InputExtra  json.RawMessage `json:"input_extra"`
}

// maxNProbs bounds n_probs: each step's top tokens are sorted out of the
// whole vocabulary.
const maxNProbs = 100

// nativeParams are a native request's checked settings.
type nativeParams struct {
	Params
	stop     []string
	nPredict int // -1: until the context is full; 0: the prompt evaluated only
	nProbs   int
	tokens   bool // return_tokens
	nIndent  int
	tMax     time.Duration // 0: no limit
	fields   []string      // response_fields; nil: all
}

func (r *nativeRequest) params() (nativeParams, *apiError) {
	np := nativeParams{nPredict: -1, tokens: r.ReturnTokens, fields: r.ResponseFields}
	if n := r.NIndent; n != nil {
		if *n < 0 {
			return np, badRequest("n_indent", "n_indent must not be negative, got %d", *n)
		}
		np.nIndent = *n
	}
	if ms := r.TMaxPredictMS; ms != nil {
		if *ms < 0 || *ms > math.MaxInt64/int64(time.Millisecond) {
			return np, badRequest("t_max_predict_ms", "t_max_predict_ms must be between 0 (no limit) and %d, got %d", math.MaxInt64/int64(time.Millisecond), *ms)
		}
		np.tMax = time.Duration(*ms) * time.Millisecond
	}
	// llama-server skips empty stop words rather than refusing them.
	var stop stopList
	for _, s := range r.Stop {
		if s != "" {
			stop = append(stop, s)
		}
	}
	r.Stop = stop
	if r.N != nil && *r.N != 1 {
		return np, unsupported("n", "n other than 1 is not supported: send a prompt array for several completions")
	}
	switch s := bytes.TrimSpace(r.JSONSchema); {
	case r.Grammar != "":
		return np, unsupported("grammar", "grammar (GBNF) is not supported; use json_schema")
	case len(s) > 0 && !bytes.Equal(s, []byte("null")):
		// As response_format {"type": "json_object", "schema": …} reads it.
		r.ResponseFormat = &responseFormat{Type: "json_object", Schema: r.JSONSchema}
	}
	p, aerr := r.commonRequest.params()
	if aerr != nil {
		if aerr.Param != nil && *aerr.Param == "response_format" {
			aerr.Param, aerr.Message = strp("json_schema"), "json_schema"+aerr.Message[len("response_format"):]
		}
		return np, aerr
	}
	np.Params, np.stop = p, r.Stop
	if p.MaxTokens > 0 {
		np.nPredict = p.MaxTokens
	}
	if n := r.NPredict; n != nil {
		if *n < -1 {
			return np, badRequest("n_predict", "n_predict must be -1 (until the context is full), 0 (evaluate the prompt only) or more, got %d", *n)
		}
		np.nPredict = *n
	}
	np.MaxTokens = max(np.nPredict, 0)
	if np.nPredict == 0 {
		np.MaxTokens = 1 // the first token sampled is not passed on
	}
	if k := r.TopK; k != nil {
		k := max(*k, 0) // llama-server's k ≤ 0: no filter
		np.TopK = &k
	}
	if m := r.MinP; m != nil {
		if *m < 0 || *m > 1 {
			return np, badRequest("min_p", "min_p must be between 0 and 1, got %g", *m)
		}
		np.MinP = m
	}
	if rp := r.RepeatPenalty; rp != nil {
		if *rp <= 0 {
			return np, badRequest("repeat_penalty", "repeat_penalty must be greater than 0 (1 turns it off), got %g", *rp)
		}
		np.RepeatPenalty = rp
	}
	if n := r.RepeatLastN; n != nil {
		if *n < -1 {
			return np, badRequest("repeat_last_n", "repeat_last_n must be >= -1 (the whole context), got %d", *n)
		}
		last := int(min(*n, math.MaxInt32))
		np.RepeatLastN = &last
	}
	nProbs := r.NProbs
	if lp := bytes.TrimSpace(r.Logprobs); nProbs == nil && len(lp) > 0 && !bytes.Equal(lp, []byte("null")) {
		// llama-server reads OpenAI's logprobs as n_probs when n_probs is absent.
		var n int
		if json.Unmarshal(lp, &n) != nil {
			return np, badRequest("logprobs", "logprobs must be a whole number (the n_probs of this endpoint)")
		}
		nProbs = &n
	}
	if n := nProbs; n != nil {
		if *n < 0 || *n > maxNProbs {
			return np, badRequest("n_probs", "n_probs must be between 0 and %d, got %d", maxNProbs, *n)
		}
		np.nProbs = *n
		np.Logprobs, np.TopLogprobs = *n > 0, *n
	}
	return np, nil
}

// nativePrompt is one prompt of a native request: text, tokenized by the
// Backend as a completion's prompt (BOS added, special-token text parsed),
// or pieces of text and token ids.
type nativePrompt struct {
	text  string
	mixed []any // string or int32 pieces; nil for text
}

// nativePrompts reads /completion's prompt as llama-server does: a string;
// an array holding a token id, which is one prompt of ids and strings; or
// an array of prompts, each a string, an array of ids and strings, or an
// object whose prompt_string is one.
func nativePrompts(raw json.RawMessage) ([]nativePrompt, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, badRequest("prompt", `"prompt" is required`)
	}
	var list []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
		p, aerr := onePrompt(raw, "prompt")
		if aerr != nil {
			return nil, aerr
		}
		return []nativePrompt{p}, nil
	}
	for _, e := range list {
		if isNumber(e) {
			p, aerr := onePrompt(raw, "prompt")
			if aerr != nil {
				return nil, aerr
			}
			return []nativePrompt{p}, nil
		}
	}
	if len(list) == 0 {
		return nil, badRequest("prompt", `"prompt" must not be empty`)
	}
	if len(list) > maxChoices {
		return nil, badRequest("prompt", "at most %d prompts a request, got %d", maxChoices, len(list))
	}
	out := make([]nativePrompt, len(list))
	for i, e := range list {
		p, aerr := onePrompt(e, fmt.Sprintf("prompt[%d]", i))
		if aerr != nil {
			return nil, aerr
		}
		out[i] = p
	}
	return out, nil
}

func isNumber(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9')
}

// onePrompt reads one prompt: a string, an array of strings and token ids,
// or {"prompt_string": …}.
func onePrompt(raw json.RawMessage, param string) (nativePrompt, *apiError) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nativePrompt{text: s}, nil
	}
	var obj struct {
		PromptString json.RawMessage `json:"prompt_string"`
		Multimodal   json.RawMessage `json:"multimodal_data"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) && json.Unmarshal(raw, &obj) == nil && obj.PromptString != nil {
		if obj.Multimodal != nil {
			return nativePrompt{}, unsupported(param+".multimodal_data", "Multimodal data provided, but model does not support multimodal requests.")
		}
		return onePrompt(obj.PromptString, param+".prompt_string")
	}
	mixed, aerr := mixedPieces(raw, param)
	if aerr != nil {
		return nativePrompt{}, aerr
	}
	return nativePrompt{mixed: mixed}, nil
}

// mixedPieces reads an array of strings and token ids.
func mixedPieces(raw json.RawMessage, param string) ([]any, *apiError) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, badRequest(param, `"%s" must be a string, a list of tokens, a JSON object containing a prompt string, or a list of mixed strings & tokens`, param)
	}
	out := make([]any, 0, len(list))
	for i, e := range list {
		var s string
		var id int32
		switch {
		case json.Unmarshal(e, &s) == nil:
			out = append(out, s)
		case json.Unmarshal(e, &id) == nil:
			out = append(out, id)
		default:
			return nil, badRequest(param, "%s[%d] must be a string or a token id (an integer of 32 bits), got %s", param, i, clip(e))
		}
	}
	return out, nil
}

// clip is JSON text cut short for an error message.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// tokenizeMixed is llama-server's tokenize_mixed: each string piece
// tokenized (the special tokens the vocabulary adds only before a first
// piece that is text), each id taken as it is, checked against the
// vocabulary.
func tokenizeMixed(v Vocabulary, pieces []any, addSpecial, parseSpecial bool, param string) ([]int32, *apiError) {
	out := []int32{} // not nil: a prompt of no tokens, not of text
	for i, p := range pieces {
		switch p := p.(type) {
		case string:
			ids, err := v.Tokenize(p, addSpecial && i == 0, parseSpecial)
			if err != nil {
				return nil, badRequest(param, "cannot tokenize %s[%d]: %v", param, i, err)
			}
			out = append(out, ids...)
		case int32:
			if _, ok := v.Piece(p); !ok {
				return nil, badRequest(param, "%s[%d] = %d is not a token of the vocabulary", param, i, p)
			}
			out = append(out, p)
		}
	}
	return out, nil
}
