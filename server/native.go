package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// llama-server's native generation endpoints — POST /completion (and its
// alias /completions) and /infill — in its JSON: a stream of
// {"content", "stop": false} chunks ending with one whose stop is true
// and which carries stop_type, timings and generation_settings (no
// [DONE]), or that final object whole. Errors are llama-server's
// {"error": {"code", "message", "type"}}.

// nativeError is llama-server's error object; a prompt longer than the
// context adds its size and the context's.
type nativeError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Type    string `json:"type"`
	*contextExcess
}

// nativeErrorOf is e as llama-server writes it: a prompt that does not fit
// is its exceed_context_size_error.
func nativeErrorOf(e *apiError) nativeError {
	out := nativeError{Code: e.Status, Message: e.Message, Type: e.Type, contextExcess: e.excess}
	if e.Code != nil && *e.Code == "context_length_exceeded" {
		out.Type = "exceed_context_size_error"
	}
	switch out.Type {
	case "requests":
		out.Type = "unavailable_error"
	case "":
		out.Type = "server_error"
	}
	return out
}

func writeNativeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	if e.Status == 429 {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(e.Status)
	json.NewEncoder(w).Encode(map[string]any{"error": nativeErrorOf(e)})
}

// exceedContext is llama-server's refusal of a prompt of n tokens longer
// than a context of nCtx.
func exceedContext(n, nCtx int) *apiError {
	e := badRequest("prompt", "the request exceeds the available context size, try increasing it")
	e.Code = strp("context_length_exceeded")
	e.excess = &contextExcess{NPrompt: n, NContext: nCtx}
	return e
}

// nativeTimings is llama-server's timings object.
type nativeTimings struct {
	CacheN              int     `json:"cache_n"`
	PromptN             int     `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
	// Only when speculative decoding drafted, as llama-server writes them.
	DraftN         int `json:"draft_n,omitempty"`
	DraftNAccepted int `json:"draft_n_accepted,omitempty"`
}

func timingsOf(res Result, t timing) nativeTimings {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	out := nativeTimings{CacheN: res.CachedTokens, PromptN: res.PromptTokens - res.CachedTokens,
		PromptMS: ms(t.first.Sub(t.acquired)), PredictedN: res.CompletionTokens, PredictedMS: ms(t.end.Sub(t.first)),
		DraftN: res.Drafted, DraftNAccepted: res.Accepted}
	return out.rated()
}

// plus is the timings of two generations of one request (its choices):
// the first's prompt, both predictions.
func (out nativeTimings) plus(u nativeTimings) nativeTimings {
	if out == (nativeTimings{}) {
		return u
	}
	out.PredictedN += u.PredictedN
	out.PredictedMS += u.PredictedMS
	out.DraftN += u.DraftN
	out.DraftNAccepted += u.DraftNAccepted
	return out.rated()
}

// rated fills in the per-token times and the speeds.
func (out nativeTimings) rated() nativeTimings {
	// llama-server divides by zero here (JSON null); 0 says as much.
	if out.PromptN > 0 && out.PromptMS > 0 {
		out.PromptPerTokenMS, out.PromptPerSecond = out.PromptMS/float64(out.PromptN), 1e3*float64(out.PromptN)/out.PromptMS
	}
	if out.PredictedN > 0 && out.PredictedMS > 0 {
		out.PredictedPerTokenMS, out.PredictedPerSecond = out.PredictedMS/float64(out.PredictedN), 1e3*float64(out.PredictedN)/out.PredictedMS
	}
	return out
}

// nativeProb is one token of completion_probabilities: its id, text,
// bytes and log-probability, and the most likely tokens at its step.
type nativeProb struct {
	nativeTopProbs
	TopLogprobs []nativeTopProbs `json:"top_logprobs,omitempty"`
}

// nativeTopProbs is a token's id, text (cut to whole UTF-8 characters),
// bytes and log-probability.
type nativeTopProbs struct {
	ID      int32   `json:"id"`
	Token   string  `json:"token"`
	Bytes   []int   `json:"bytes"`
	Logprob float64 `json:"logprob"`
}

func nativeTop(id int32, token string, logprob float64) nativeTopProbs {
	return nativeTopProbs{ID: id, Token: wholeChars(token), Bytes: byteList(token), Logprob: finite(logprob)}
}

// wholeChars is text without a last UTF-8 character cut short.
func wholeChars(text string) string {
	for i := len(text) - 1; i >= 0 && i >= len(text)-3; i-- {
		if utf8.RuneStart(text[i]) {
			if !utf8.FullRuneInString(text[i:]) {
				return text[:i]
			}
			break
		}
	}
	return text
}

func nativeProbsOf(lps []TokenLogprobs) []nativeProb {
	out := make([]nativeProb, 0, len(lps))
	for _, lp := range lps {
		p := nativeProb{nativeTop(lp.ID, lp.Token, lp.Logprob), []nativeTopProbs{}}
		for _, t := range lp.Top {
			p.TopLogprobs = append(p.TopLogprobs, nativeTop(t.ID, t.Token, t.Logprob))
		}
		out = append(out, p)
	}
	return out
}

// nativeText is what every answer of llama-server's begins with: which
// prompt's it is, and the text and token ids it carries.
type nativeText struct {
	Index   int     `json:"index"`
	Content string  `json:"content"`
	Tokens  []int32 `json:"tokens"`
}

// nativePartial is a streamed chunk.
type nativePartial struct {
	nativeText
	Stop            bool         `json:"stop"`
	IDSlot          int          `json:"id_slot"`
	TokensPredicted int          `json:"tokens_predicted"`
	TokensEvaluated int          `json:"tokens_evaluated"`
	Probs           []nativeProb `json:"completion_probabilities,omitempty"`
}

// nativeFinal is the whole answer, or a stream's last chunk (its content
// and tokens empty: the chunks carried them).
type nativeFinal struct {
	nativeText
	IDSlot             int            `json:"id_slot"`
	Stop               bool           `json:"stop"`
	Model              string         `json:"model"`
	TokensPredicted    int            `json:"tokens_predicted"`
	TokensEvaluated    int            `json:"tokens_evaluated"`
	GenerationSettings map[string]any `json:"generation_settings"`
	Prompt             string         `json:"prompt"`
	HasNewLine         bool           `json:"has_new_line"`
	Truncated          bool           `json:"truncated"`
	StopType           string         `json:"stop_type"`
	StoppingWord       string         `json:"stopping_word"`
	TokensCached       int            `json:"tokens_cached"`
	Timings            nativeTimings  `json:"timings"`
	Probs              []nativeProb   `json:"completion_probabilities,omitempty"`
}

// stopType is llama-server's name of why a generation ended.
func stopType(res Result) string {
	switch {
	case res.stopWord != "":
		return "word"
	case res.Finish == "length":
		return "limit"
	}
	return "eos"
}

// defaultSeed is the seed llama-server reports when a request gives none
// (LLAMA_DEFAULT_SEED: a random one is drawn).
const defaultSeed = 0xFFFFFFFF

// settings is generation_settings: the request's sampling settings (as
// llamaSettings names them) with its stop words and return_tokens.
func (np nativeParams) settings() map[string]any {
	stop := np.stop
	if stop == nil {
		stop = []string{}
	}
	m := llamaSettings(np.Params, np.nPredict)
	m["stop"], m["return_tokens"] = stop, np.tokens
	return m
}

// llamaSettings are p's sampling settings as llama-server's task params
// name them (what /completion's generation_settings and GET /slots'
// params share), with the defaults (llama-server's, which are the
// library's) where p gives none; nPredict -1 is until the context is
// full.
func llamaSettings(p Params, nPredict int) map[string]any {
	or := func(v *float64, d float64) float64 {
		if v == nil {
			return d
		}
		return *v
	}
	seed, topK, lastN, nProbs := int64(defaultSeed), 40, 64, 0
	if p.Seed != nil {
		seed = *p.Seed
	}
	if p.TopK != nil {
		topK = *p.TopK
	}
	if p.RepeatLastN != nil {
		lastN = *p.RepeatLastN
	}
	if p.Logprobs {
		nProbs = p.TopLogprobs
	}
	return map[string]any{
		"seed": seed, "temperature": or(p.Temperature, 0.8), "top_k": topK, "top_p": or(p.TopP, 0.95),
		"min_p": or(p.MinP, 0.05), "repeat_last_n": lastN, "repeat_penalty": or(p.RepeatPenalty, 1),
		"presence_penalty": or(p.PresencePenalty, 0), "frequency_penalty": or(p.FrequencyPenalty, 0),
		"max_tokens": nPredict, "n_predict": nPredict, "stream": p.stream, "n_probs": nProbs, "ignore_eos": false,
	}
}

// readNative reads a native request's body and settings; a model that
// only embeds refuses it.
func (s *Server) readNative(r *http.Request, what string) (*nativeRequest, nativeParams, *apiError) {
	var req nativeRequest
	if aerr := readBody(r, &req); aerr != nil {
		return nil, nativeParams{}, aerr
	}
	if s.info.EmbeddingOnly {
		return nil, nativeParams{}, notGenerating(what)
	}
	np, aerr := req.params()
	return &req, np, aerr
}

func (s *Server) handleNativeCompletion(w http.ResponseWriter, r *http.Request) *apiError {
	req, np, aerr := s.readNative(r, "completions")
	if aerr != nil {
		return aerr
	}
	prompts, aerr := nativePrompts(req.Prompt)
	if aerr != nil {
		return aerr
	}
	ins := make([]input, len(prompts))
	for i, p := range prompts {
		if ins[i], aerr = s.nativeInput(p); aerr != nil {
			return aerr
		}
	}
	return s.nativeAnswer(w, r, ins, np)
}

// nativeInput is a prompt's input: text as it is, pieces tokenized as
// llama-server's completion prompts are (the vocabulary's special tokens
// added, special-token text parsed).
func (s *Server) nativeInput(p nativePrompt) (input, *apiError) {
	if p.mixed == nil {
		return input{text: p.text}, nil
	}
	v, aerr := s.vocabulary("prompts of token ids")
	if aerr != nil {
		return input{}, aerr
	}
	ids, aerr := tokenizeMixed(v, p.mixed, true, true, "prompt")
	if aerr != nil {
		return input{}, aerr
	}
	return input{tokens: ids}, nil
}

// promptTokens is the number of tokens of in's prompt (text tokenized as
// the Backend will), -1 when the Backend has no vocabulary to say.
func (s *Server) promptTokens(in input) int {
	ids, ok := s.promptIDs(in)
	if !ok {
		return -1
	}
	return len(ids)
}

// promptIDs are in's tokens: its ids, or its text tokenized as a
// completion's prompt is (special tokens added and parsed); false when the
// Backend has no vocabulary.
func (s *Server) promptIDs(in input) ([]int32, bool) {
	if in.tokens != nil {
		return in.tokens, true
	}
	v, ok := s.backend.(Vocabulary)
	if !ok {
		return nil, false
	}
	ids, err := v.Tokenize(in.text, true, true)
	return ids, err == nil
}

// promptText is the prompt of a final answer, as llama-server gives it:
// its tokens' pieces (the BOS the vocabulary adds included), or the text
// when the Backend has no vocabulary.
func (s *Server) promptText(in input) string {
	v, isVocab := s.backend.(Vocabulary)
	ids, ok := s.promptIDs(in)
	if !isVocab || !ok {
		return in.text
	}
	var b strings.Builder
	for _, id := range ids {
		text, _ := v.Piece(id)
		b.WriteString(text)
	}
	return b.String()
}

// nativeAnswer generates each input in turn and answers in llama-server's
// native JSON: one final object (an array of them for several prompts),
// or a stream of chunks told apart by index.
func (s *Server) nativeAnswer(w http.ResponseWriter, r *http.Request, ins []input, np nativeParams) *apiError {
	counts := make([]int, len(ins))
	for i, in := range ins {
		counts[i] = s.promptTokens(in)
		if counts[i] > s.info.ContextLength && s.info.ContextLength > 0 {
			return exceedContext(counts[i], s.info.ContextLength)
		}
	}
	var sse *eventStream
	if np.stream {
		sse = newSSE(w)
	}
	finals := make([]any, 0, len(ins))
	for i, in := range ins {
		lines := lineLimits{nIndent: np.nIndent, tMax: np.tMax}
		var lps []TokenLogprobs
		var ids []int32
		predicted := 0
		ok, limited := true, false
		yield := func(text string, more []TokenLogprobs, got []int32) bool {
			if np.nPredict == 0 { // the prompt evaluated: nothing to pass on
				return false
			}
			if predicted += len(got); len(got) == 0 && text != "" {
				predicted++ // a Session that gives no ids: a piece a token
			}
			if !np.stream {
				lps = append(lps, more...)
				ids = append(ids, got...)
				limited = !lines.push(text)
				return !limited
			}
			// A chunk carries its tokens' ids, return_tokens or not, as
			// llama-server's do.
			c := nativePartial{nativeText: nativeText{i, text, got}, TokensPredicted: predicted, TokensEvaluated: max(counts[i], 0)}
			if got == nil {
				c.Tokens = []int32{}
			}
			if np.nProbs > 0 {
				c.Probs = nativeProbsOf(more)
			}
			// llama-server sends a token's chunk before it checks the
			// lines, and cuts only the whole answer.
			ok = ok && sse.send(c)
			limited = !lines.push(text)
			return ok && !limited
		}
		res, t, aerr := s.run(r, in, np.Params, np.stop, nil, yield)
		if !ok { // the client went away: the prompts left are not run
			return nil
		}
		if aerr != nil {
			if sse != nil && sse.started {
				sse.send(map[string]any{"error": nativeErrorOf(aerr)})
			}
			return aerr
		}
		if np.nPredict == 0 {
			res.CompletionTokens, res.Finish, res.stopWord = 0, "length", ""
		}
		if limited {
			res.Finish, res.stopWord = "length", ""
		}
		content := string(lines.text)
		if np.stream { // the chunks carried it
			content = ""
		}
		f := nativeFinal{nativeText: nativeText{i, content, []int32{}}, IDSlot: t.slot, Stop: true, Model: s.info.ID,
			TokensPredicted: res.CompletionTokens, TokensEvaluated: res.PromptTokens, GenerationSettings: np.settings(),
			Prompt: s.promptText(in), HasNewLine: lines.newLine, StopType: stopType(res),
			// The context filled before n_predict tokens: llama-server's
			// truncated (it stops there too, shifting no context).
			Truncated:    res.Finish == "length" && !limited && (np.nPredict < 0 || res.CompletionTokens < np.nPredict),
			StoppingWord: res.stopWord, TokensCached: res.PromptTokens + res.CompletionTokens, Timings: timingsOf(res, t)}
		if np.tokens && ids != nil {
			f.Tokens = ids
		}
		if np.nProbs > 0 && !np.stream {
			f.Probs = nativeProbsOf(lps)
		}
		if np.stream {
			sse.send(responseFields(f, np.fields))
			continue
		}
		finals = append(finals, responseFields(f, np.fields))
	}
	if np.stream {
		return nil
	}
	if len(finals) == 1 {
		writeJSON(w, finals[0])
	} else {
		writeJSON(w, finals)
	}
	return nil
}

// lineLimits are llama-server's stops for code completion over the text
// generated: a line after the first indented less than nIndent (the
// text cut before it goes on), and a line break generated tMax after the
// first text.
type lineLimits struct {
	nIndent int
	tMax    time.Duration
	text    []byte
	newLine bool // a line break was generated
	lastNL  int  // where the line checked next starts (0: none yet)
	start   time.Time
}

// push adds the text of a token and reports whether generation goes on.
func (l *lineLimits) push(text string) bool {
	if l.start.IsZero() {
		l.start = time.Now()
	}
	l.text = append(l.text, text...)
	on := true
	if l.newLine && l.nIndent > 0 {
		if l.lastNL > 0 {
			pos := l.lastNL
			for pos < len(l.text) && (l.text[pos] == ' ' || l.text[pos] == '\t') {
				pos++
			}
			if pos < len(l.text) && pos-l.lastNL < l.nIndent {
				l.text, on = l.text[:pos], false
			}
		}
		if i := bytes.IndexByte(l.text[l.lastNL:], '\n'); i >= 0 {
			l.lastNL += i + 1
		}
	}
	if strings.Contains(text, "\n") {
		l.newLine = true
		if l.tMax > 0 && time.Since(l.start) > l.tMax {
			on = false
		}
	}
	return on
}

// responseFields is llama-server's response_fields: only the fields named,
// a path through objects ("timings/prompt_n") kept under its whole name;
// all of f when none is named.
func responseFields(f nativeFinal, fields []string) any {
	if len(fields) == 0 {
		return f
	}
	b, err := json.Marshal(f)
	if err != nil {
		return f
	}
	var all map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // integers stay as written
	if dec.Decode(&all) != nil {
		return f
	}
	out := make(map[string]any, len(fields))
	for _, path := range fields {
		var v any = all
		found := true
		for _, k := range strings.Split(path, "/") {
			obj, isObj := v.(map[string]any)
			if !isObj {
				found = false
				break
			}
			if v, found = obj[k]; !found {
				break
			}
		}
		if found {
			out[path] = v
		}
	}
	return out
}
