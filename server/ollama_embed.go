package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"
)

// POST /api/embed and the legacy POST /api/embeddings, on the same slots
// as /v1/embeddings (Server.embed).

type ollamaEmbedRequest struct {
	Model string          `json:"model"`
	Input json.RawMessage `json:"input"`
	// Truncate is true unless set false: Ollama cuts a text longer than
	// the context to its first tokens by default.
	Truncate   *bool         `json:"truncate"`
	Dimensions int           `json:"dimensions"`
	Options    ollamaOptions `json:"options"`
	// Accepted and ignored: the model stays loaded while the server runs.
	KeepAlive json.RawMessage `json:"keep_alive"`
}

type ollamaEmbedResponse struct {
	Model      string      `json:"model"`
	Embeddings [][]float32 `json:"embeddings"`
	ollamaPromptMetrics
}

// ollamaPromptMetrics are what every reply of Ollama's measures: the whole
// request's time and the model's loading (here: the wait for a slot), in
// nanoseconds, and the prompt's tokens. An embedding reply has only these;
// a generation's last line has more (ollamaMetrics).
type ollamaPromptMetrics struct {
	TotalDuration   time.Duration `json:"total_duration"`
	LoadDuration    time.Duration `json:"load_duration"`
	PromptEvalCount int           `json:"prompt_eval_count"`
}

// promptMetrics are the metrics of a request that came at start, got its
// slot at acquired and evaluated tokens of prompt, as it ends now.
func promptMetrics(start, acquired time.Time, tokens int) ollamaPromptMetrics {
	return ollamaPromptMetrics{TotalDuration: time.Since(start), LoadDuration: acquired.Sub(start), PromptEvalCount: tokens}
}

type ollamaEmbeddingRequest struct {
	Model     string          `json:"model"`
	Prompt    string          `json:"prompt"`
	Options   ollamaOptions   `json:"options"`
	KeepAlive json.RawMessage `json:"keep_alive"`
}

// ollamaInputs reads input: a string or an array of strings. An empty
// string, null or an empty array is no input, which Ollama answers with no
// embeddings.
func ollamaInputs(raw json.RawMessage) ([]EmbedInput, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, nil
		}
		return []EmbedInput{{Text: one}}, nil
	}
	var many []string
	if json.Unmarshal(raw, &many) != nil {
		return nil, badRequest("input", "invalid input type: input must be a string or an array of strings")
	}
	if len(many) > maxEmbedInputs {
		return nil, badRequest("input", "at most %d inputs in one request, got %d", maxEmbedInputs, len(many))
	}
	in := make([]EmbedInput, len(many))
	for i, text := range many {
		if text == "" {
			return nil, badRequest("input", "input[%d] is an empty string", i)
		}
		in[i] = EmbedInput{Text: text}
	}
	return in, nil
}

func (s *Server) handleOllamaEmbed(w http.ResponseWriter, r *http.Request) *apiError {
	start := time.Now()
	var req ollamaEmbedRequest
	if aerr := s.readEmbedding(r, &req); aerr != nil {
		return aerr
	}
	if _, aerr := s.ollamaOptions(req.Options); aerr != nil { // checked, and ignored
		return aerr
	}
	inputs, aerr := ollamaInputs(req.Input)
	if aerr != nil {
		return aerr
	}
	resp := ollamaEmbedResponse{Model: s.ollamaName(req.Model), Embeddings: [][]float32{}}
	if len(inputs) == 0 {
		writeJSON(w, resp)
		return nil
	}
	o := EmbedOptions{Truncate: req.Truncate == nil || *req.Truncate}
	// As Ollama: dimensions cuts only a vector it makes shorter; 0, a
	// negative number or one past the width keep it whole.
	if d := req.Dimensions; d > 0 && (s.info.EmbeddingLength == 0 || d < s.info.EmbeddingLength) {
		o.Dimensions = d
	}
	vs, tokens, acquired, aerr := s.embed(r, inputs, o)
	if aerr != nil {
		return aerr
	}
	resp.Embeddings, resp.ollamaPromptMetrics = vs, promptMetrics(start, acquired, tokens)
	writeJSON(w, resp)
	return nil
}

// handleOllamaEmbeddings is the legacy route: one prompt, its vector as
// pooled (not of unit length, as Ollama's is not), and a text longer than
// the context refused rather than cut, as there.
func (s *Server) handleOllamaEmbeddings(w http.ResponseWriter, r *http.Request) *apiError {
	var req ollamaEmbeddingRequest
	if aerr := s.readEmbedding(r, &req); aerr != nil {
		return aerr
	}
	if _, aerr := s.ollamaOptions(req.Options); aerr != nil { // checked, and ignored
		return aerr
	}
	if req.Prompt == "" { // Ollama's way to load a model
		writeJSON(w, map[string][]float32{"embedding": {}})
		return nil
	}
	vs, _, _, aerr := s.embed(r, []EmbedInput{{Text: req.Prompt}}, EmbedOptions{Raw: true})
	if aerr != nil {
		return aerr
	}
	writeJSON(w, map[string][]float32{"embedding": vs[0]})
	return nil
}
