package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The FIM budget of llama-server's defaults: its prompt is cut to fit a
// batch of n_batch tokens (prefix to suffix 3:1), and input_extra fills
// what the context has beyond a batch and twice n_predict (the server's
// -1, which leaves two tokens more).
const (
	infillBatch    = 2048
	infillNPredict = -1
)

// infillChunk is one of input_extra's chunks of context (another file).
type infillChunk struct {
	Filename string
	Text     string
}

// handleInfill is llama-server's POST /infill: fill-in-the-middle for code
// completion. The prompt is built around the vocabulary's FIM tokens as
// llama-server's format_prompt_infill builds it (see infillTokens) and
// answered as /completion answers.
func (s *Server) handleInfill(w http.ResponseWriter, r *http.Request) *apiError {
	fim, aerr := s.fimTokens()
	if aerr != nil {
		return aerr
	}
	req, np, aerr := s.readNative(r, "infill")
	if aerr != nil {
		return aerr
	}
	v, aerr := s.vocabulary("/infill")
	if aerr != nil {
		return aerr
	}
	prompt := ""
	if raw := bytes.TrimSpace(req.Prompt); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if json.Unmarshal(raw, &prompt) != nil {
			return badRequest("prompt", `"prompt" must be a string`)
		}
	}
	var sides [2][]int32
	for i, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"input_prefix", req.InputPrefix}, {"input_suffix", req.InputSuffix}} {
		raw := bytes.TrimSpace(f.raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			return badRequest(f.name, `"%s" is required`, f.name)
		}
		p, aerr := onePrompt(raw, f.name)
		if aerr != nil {
			return aerr
		}
		if p.mixed == nil {
			p.mixed = []any{p.text}
		}
		if sides[i], aerr = tokenizeMixed(v, p.mixed, false, false, f.name); aerr != nil {
			return aerr
		}
	}
	extra, aerr := infillExtra(req.InputExtra)
	if aerr != nil {
		return aerr
	}
	promptIDs, err := v.Tokenize(prompt, false, true)
	if err != nil {
		return badRequest("prompt", "cannot tokenize prompt: %v", err)
	}
	ids, err := infillTokens(v, *fim, s.info.Render.StripBOS, sides[0], sides[1], extra, promptIDs, s.info.ContextLength)
	if err != nil {
		return badRequest("input_extra", "%v", err)
	}
	return s.nativeAnswer(w, r, []input{{tokens: ids}}, np)
}

// fimTokens are the vocabulary's FIM tokens, or llama-server's refusal
// when prefix, suffix or middle is missing.
func (s *Server) fimTokens() (*FIMTokens, *apiError) {
	fim := s.info.FIM
	var missing strings.Builder
	if fim == nil || fim.Pre < 0 {
		missing.WriteString("prefix token is missing. ")
	}
	if fim == nil || fim.Suf < 0 {
		missing.WriteString("suffix token is missing. ")
	}
	if fim == nil || fim.Mid < 0 {
		missing.WriteString("middle token is missing. ")
	}
	if missing.Len() > 0 {
		return nil, &apiError{Status: 501, Type: "not_supported_error", Message: "Infill is not supported by this model: " + missing.String()}
	}
	return fim, nil
}

// infillExtra reads input_extra: an array of {"filename", "text"} (text
// required, filename "tmp" when absent), as llama-server checks it.
func infillExtra(raw json.RawMessage) ([]infillChunk, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, badRequest("input_extra", `"input_extra" must be an array of {"filename": string, "text": string}`)
	}
	out := make([]infillChunk, len(list))
	for i, c := range list {
		out[i].Filename = "tmp"
		if json.Unmarshal(c["text"], &out[i].Text) != nil {
			return nil, badRequest("input_extra", `extra_context chunk must contain a "text" field with a string value (input_extra[%d])`, i)
		}
		if f, ok := c["filename"]; ok && json.Unmarshal(f, &out[i].Filename) != nil {
			return nil, badRequest("input_extra", `extra_context chunk's "filename" field must be a string (input_extra[%d])`, i)
		}
	}
	return out, nil
}

// infillTokens is llama-server's format_prompt_infill (with its default
// n_batch, n_predict and prefix-suffix-middle order):
//
//	[extra][BOS]<PRE>prefix prompt<SUF>suffix<MID>
//
// where extra, with the repo-level tokens (FIM_REP, FIM_SEP), is
//
//	<REP>myproject\n<SEP>filename0\ntext0 … <SEP>filename\n
//
// and without them each chunk's text after "\n\n--- snippet ---\n\n". The
// prefix keeps its last 3/4 of a batch of tokens, the suffix its first
// quarter of a batch less the prompt and two; the extra its last tokens
// that fit the context beyond a batch (and twice n_predict).
func infillTokens(v Vocabulary, fim FIMTokens, addBOS bool, prefix, suffix []int32, extra []infillChunk, prompt []int32, nCtx int) ([]int32, error) {
	tokenize := func(text string) ([]int32, error) { return v.Tokenize(text, false, false) }
	var head []int32
	if fim.Rep >= 0 {
		repo, err := tokenize("myproject\n")
		if err != nil {
			return nil, err
		}
		head = append(append(head, fim.Rep), repo...)
	}
	for i, c := range extra {
		var sep []int32
		if fim.Sep >= 0 {
			file, err := tokenize(c.Filename + "\n")
			if err != nil {
				return nil, fmt.Errorf("input_extra[%d].filename: %w", i, err)
			}
			sep = append([]int32{fim.Sep}, file...)
		} else {
			var err error
			if sep, err = tokenize("\n\n--- snippet ---\n\n"); err != nil {
				return nil, err
			}
		}
		text, err := tokenize(c.Text)
		if err != nil {
			return nil, fmt.Errorf("input_extra[%d].text: %w", i, err)
		}
		head = append(append(head, sep...), text...)
	}
	if fim.Sep >= 0 {
		file, err := tokenize("filename\n")
		if err != nil {
			return nil, err
		}
		head = append(append(head, fim.Sep), file...)
	}

	nPrefix := min(len(prefix), 3*(infillBatch/4))
	nSuffix := min(len(suffix), max(0, infillBatch/4-(2+len(prompt))))
	nExtra := min(max(0, nCtx-infillBatch-2*infillNPredict), len(head))

	out := make([]int32, 0, nExtra+1+1+nPrefix+len(prompt)+1+nSuffix+1)
	out = append(out, head[len(head)-nExtra:]...)
	if addBOS {
		bos, err := v.Tokenize("", true, false)
		if err == nil && len(bos) > 0 {
			out = append(out, bos[0])
		}
	}
	out = append(out, fim.Pre)
	out = append(out, prefix[len(prefix)-nPrefix:]...)
	out = append(out, prompt...)
	out = append(out, fim.Suf)
	out = append(out, suffix[:nSuffix]...)
	return append(out, fim.Mid), nil
}
