package server

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lowmem/llm/chat"
)

// Ollama's REST API beside OpenAI's, on the same slots, queue and metrics,
// so that Ollama's clients (its Go package and CLI, ollama-python and
// ollama-js, langchaingo, Open WebUI) can use this server unchanged.
//
// The server serves one model. Ollama's clients name models as they know
// them ("llama3.2"), and its CLI pulls a model /api/show does not know, so
// — as the OpenAI endpoints ignore "model" — every name (none too) is the
// served model; replies echo the name the request gave, as Ollama does.

// ollamaVersion is what GET /api/version answers: the Ollama release whose
// API these routes follow (field names, defaults, response shapes), so
// that a client gating a feature (thinking, tool calls, structured
// output, /api/embed) on the server's version finds it there, and the
// ollama CLI, which warns when its version and the server's differ, does
// not for that release.
const ollamaVersion = "0.17.4"

// isOllamaPath says whether a path is under Ollama's API, whose errors
// are Ollama's JSON.
func isOllamaPath(path string) bool { return strings.HasPrefix(path, "/api/") }

// ollamaError is Ollama's error JSON: {"error": "message"}.
type ollamaError struct {
	Error string `json:"error"`
}

// writeOllamaError writes e in Ollama's shape, with e's status.
func writeOllamaError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	if e.Status == 429 {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(e.Status)
	json.NewEncoder(w).Encode(ollamaError{Error: e.Message})
}

// ollamaName is the model name a reply carries: the request's, else the
// served model's.
func (s *Server) ollamaName(requested string) string {
	if requested == "" {
		return s.info.ID
	}
	return requested
}

func (s *Server) handleOllamaRoot(w http.ResponseWriter, r *http.Request) {
	if s.gate.isClosed() {
		writeOllamaError(w, &apiError{Status: 503, Message: "the server is shutting down"})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("Ollama is running"))
}

func (s *Server) handleOllamaVersion(w http.ResponseWriter, r *http.Request) *apiError {
	writeJSON(w, map[string]string{"version": ollamaVersion})
	return nil
}

// ollamaDetails is a model's "details" in Ollama's listings.
type ollamaDetails struct {
	ParentModel       string   `json:"parent_model"`
	Format            string   `json:"format"`
	Family            string   `json:"family"`
	Families          []string `json:"families"`
	ParameterSize     string   `json:"parameter_size"`
	QuantizationLevel string   `json:"quantization_level"`
}

// ollamaModel is the served model as /api/tags lists it; /api/ps adds
// what a loaded model has.
type ollamaModel struct {
	Name       string    `json:"name"`
	Model      string    `json:"model"`
	ModifiedAt time.Time `json:"modified_at"`
	Size       int64     `json:"size"`
	// Digest is Ollama's hash of its manifest, which a GGUF file served
	// here does not have; hashing gigabytes to make one up is not worth
	// it, and clients only compare it.
	Digest  string        `json:"digest"`
	Details ollamaDetails `json:"details"`
}

type ollamaRunning struct {
	ollamaModel
	ExpiresAt     time.Time `json:"expires_at"`
	SizeVRAM      int64     `json:"size_vram"`
	ContextLength int       `json:"context_length"`
}

func (s *Server) ollamaDetails() ollamaDetails {
	d := ollamaDetails{Format: "gguf", Family: s.info.Family, ParameterSize: parameterSize(s.info.Parameters),
		QuantizationLevel: s.info.Quantization}
	if d.Family != "" {
		d.Families = []string{d.Family}
	}
	return d
}

// ollamaModel describes the served model; modified_at is when the server
// started serving it.
func (s *Server) ollamaModel() ollamaModel {
	return ollamaModel{Name: s.info.ID, Model: s.info.ID, ModifiedAt: s.started.UTC(), Size: s.info.Size, Details: s.ollamaDetails()}
}

func (s *Server) handleOllamaTags(w http.ResponseWriter, r *http.Request) *apiError {
	writeJSON(w, map[string]any{"models": []ollamaModel{s.ollamaModel()}})
	return nil
}

func (s *Server) handleOllamaPS(w http.ResponseWriter, r *http.Request) *apiError {
	// The model stays loaded while the server runs, which Ollama writes
	// as the far future a negative keep_alive gives.
	m := ollamaRunning{ollamaModel: s.ollamaModel(), ExpiresAt: s.now().UTC().Add(time.Duration(math.MaxInt64)),
		ContextLength: s.info.ContextLength}
	writeJSON(w, map[string]any{"models": []ollamaRunning{m}})
	return nil
}

// ollamaShowRequest is /api/show's request, whose fields change nothing
// here: any name (model, or Ollama's older field name) shows the one
// model, always in full.
type ollamaShowRequest struct {
	Model   string          `json:"model"`
	Name    string          `json:"name"`
	Verbose bool            `json:"verbose"`
	Options json.RawMessage `json:"options"`
	System  string          `json:"system"`
}

type ollamaShowResponse struct {
	Template     string         `json:"template,omitempty"`
	Details      ollamaDetails  `json:"details"`
	ModelInfo    map[string]any `json:"model_info"`
	Capabilities []string       `json:"capabilities"`
	ModifiedAt   time.Time      `json:"modified_at"`
}

func (s *Server) handleOllamaShow(w http.ResponseWriter, r *http.Request, req *ollamaShowRequest) *apiError {
	// Several clients fail on a missing model_info: it is never null.
	info := map[string]any{}
	if f := s.info.Family; f != "" {
		info["general.architecture"] = f
		if s.info.ContextLength > 0 {
			// The context the server serves, which is what a client can use.
			info[f+".context_length"] = s.info.ContextLength
		}
		if s.info.EmbeddingLength > 0 {
			info[f+".embedding_length"] = s.info.EmbeddingLength
		}
	}
	if s.info.Parameters > 0 {
		info["general.parameter_count"] = s.info.Parameters
	}
	resp := ollamaShowResponse{Details: s.ollamaDetails(), ModelInfo: info, Capabilities: s.ollamaCapabilities(),
		ModifiedAt: s.started.UTC()}
	if s.info.Template != nil {
		resp.Template = s.info.Template.Source()
	}
	writeJSON(w, resp)
	return nil
}

// ollamaCapabilities are what /api/show says the model does, as Ollama
// names it. "embedding" is said only of a model that does nothing else:
// Ollama's CLI takes a model with it for an embedding model and embeds
// instead of chatting, while this server embeds with any model.
func (s *Server) ollamaCapabilities() []string {
	caps := []string{}
	if s.info.EmbeddingOnly {
		if s.embeds {
			caps = append(caps, "embedding")
		}
		return caps
	}
	caps = append(caps, "completion")
	if s.callsTools() {
		caps = append(caps, "tools")
	}
	if s.thinks() {
		caps = append(caps, "thinking")
	}
	return caps
}

// thinks says whether the model's template has a reasoning block (or
// harmony's analysis channel), whose text the reply carries apart.
func (s *Server) thinks() bool { return s.info.Template != nil && s.info.Template.Format().Reasons() }

// callsTools says whether the model's template has a tool-call syntax the
// server can read calls in.
func (s *Server) callsTools() bool {
	return s.info.Template != nil && s.info.Template.Format().Tools != chat.ToolsNone
}

// parameterSize writes a number of weights as Ollama's parameter_size
// does: "8B", "1.2B", "494.03M", "135K"; "" when unknown.
func parameterSize(n int64) string {
	for _, u := range []struct {
		unit   float64
		suffix string
		prec   int
	}{{1e9, "B", 1}, {1e6, "M", 2}, {1e3, "K", 0}} {
		if x := float64(n); x >= u.unit {
			x /= u.unit
			if x == math.Floor(x) {
				u.prec = 0
			}
			return strconv.FormatFloat(x, 'f', u.prec, 64) + u.suffix
		}
	}
	if n <= 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}
