package server

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
)

type nativeEmbedRequest struct {
	Input         json.RawMessage `json:"input"`
	Content       json.RawMessage `json:"content"`
	EmbdNormalize *int            `json:"embd_normalize"`
}

// handleNativeEmbedding is llama-server's POST /embedding (and
// /embeddings): the inputs of content (or input), in /completion's prompt
// forms, each answered as {"index", "embedding": [vector]} in an array;
// embd_normalize 2 (the default) scales each vector to unit length, -1
// leaves it as pooled.
func (s *Server) handleNativeEmbedding(w http.ResponseWriter, r *http.Request, req *nativeEmbedRequest) *apiError {
	if !s.embeds {
		return notEmbedding("its backend's sessions cannot embed")
	}
	raw := req.Input
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = req.Content
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return badRequest("content", `"input" or "content" must be provided`)
	}
	var o EmbedOptions
	if n := req.EmbdNormalize; n != nil {
		switch *n {
		case 2:
		case -1:
			o.Raw = true
		default:
			return unsupported("embd_normalize", "embd_normalize %d is not supported: 2 (Euclidean, the default) or -1 (none)", *n)
		}
	}
	prompts, aerr := nativePrompts(raw)
	if aerr != nil {
		return aerr
	}
	inputs := make([]EmbedInput, len(prompts))
	for i, p := range prompts {
		in, aerr := s.nativeInput(p)
		if aerr != nil {
			return aerr
		}
		// As llama-server, for a model that adds no BOS to an empty text.
		if s.promptTokens(in) == 0 {
			return badRequest("content", "Input content cannot be empty")
		}
		inputs[i] = EmbedInput{Text: in.text, Tokens: in.tokens}
	}
	vs, _, _, aerr := s.embed(r, inputs, o)
	if aerr != nil {
		return aerr
	}
	type embedding struct {
		Index     int         `json:"index"`
		Embedding [][]float32 `json:"embedding"`
	}
	out := make([]embedding, len(vs))
	for i, v := range vs {
		out[i] = embedding{Index: i, Embedding: [][]float32{v}}
	}
	writeJSON(w, out)
	return nil
}

// handleSlots is llama-server's GET /slots: each slot's id, context,
// whether it speculates and whether a request (or a slot action) holds it
// now, and, once it ran one, its running or last task's id, sampling
// settings and progress, as llama-server answers by default (its prompt
// and generated text only under LLAMA_SERVER_SLOTS_DEBUG, which this
// server has not); with ?fail_on_no_slot, 503 when every slot is busy.
func (s *Server) handleSlots(w http.ResponseWriter, r *http.Request) *apiError {
	if s.noSlots {
		return &apiError{Status: 501, Type: "not_supported_error", Message: "This server does not support slots endpoint. Start it with `--slots`"}
	}
	idle := s.slots.idle()
	if r.URL.Query().Get("fail_on_no_slot") != "" && len(idle) == 0 {
		return &apiError{Status: 503, Type: "unavailable_error", Message: "no slot available"}
	}
	out := make([]map[string]any, len(s.all))
	for i, sl := range s.all {
		out[i] = map[string]any{"id": sl.id, "n_ctx": sl.nCtx, "speculative": s.info.Speculative != nil, "is_processing": !idle[sl]}
		t, ok := sl.snapshot()
		if !ok {
			continue
		}
		params := llamaSettings(t.params, t.nPredict())
		if sp := s.info.Speculative; sp != nil {
			maps.Copy(params, sp.settings(t.params))
		}
		remain := -1
		if n := t.nPredict(); n >= 0 {
			remain = max(n-t.decoded, 0)
		}
		out[i]["id_task"], out[i]["params"] = t.id, params
		out[i]["next_token"] = []map[string]any{{"has_next_token": t.running, "has_new_line": t.newLine, "n_remain": remain, "n_decoded": t.decoded}}
	}
	writeJSON(w, out)
	return nil
}
