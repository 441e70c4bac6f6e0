package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"
)

// maxEmbedInputs bounds the inputs of one embedding request, as OpenAI
// does: they are embedded one after the other on one slot, which no other
// request can use meanwhile.
const maxEmbedInputs = 2048

type embeddingRequest struct {
	Input          json.RawMessage `json:"input"`
	Model          string          `json:"model"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
	User           string          `json:"user"`
}

// embedInputs is a validated embedding request.
type embedInputs struct {
	inputs []EmbedInput
	dims   int // 0: all
	base64 bool
}

// validate checks r against a model whose embeddings are width wide (0:
// unknown, which leaves the bound of dimensions to the Backend).
func (r *embeddingRequest) validate(width int) (*embedInputs, *apiError) {
	out := &embedInputs{}
	switch r.EncodingFormat {
	case "", "float":
	case "base64":
		out.base64 = true
	default:
		return nil, badRequest("encoding_format", "encoding_format %q is not one of float, base64", r.EncodingFormat)
	}
	if d := r.Dimensions; d != nil {
		switch {
		case width > 0 && (*d < 1 || *d > width):
			return nil, badRequest("dimensions", "dimensions must be between 1 and %d (the model's width), got %d", width, *d)
		case *d < 1:
			return nil, badRequest("dimensions", "dimensions must be at least 1, got %d", *d)
		}
		out.dims = *d
	}
	raw := bytes.TrimSpace(r.Input)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, badRequest("input", "input is missing")
	}
	// OpenAI's four forms; token arrays are embedded as given.
	var (
		text   string
		texts  []string
		tokens []int32
		lists  [][]int32
		many   bool // an array of inputs, whose errors name the input's index
	)
	switch {
	case json.Unmarshal(raw, &text) == nil:
		out.inputs = []EmbedInput{{Text: text}}
	case json.Unmarshal(raw, &texts) == nil:
		many = true
		for _, t := range texts {
			out.inputs = append(out.inputs, EmbedInput{Text: t})
		}
	case json.Unmarshal(raw, &tokens) == nil:
		out.inputs = []EmbedInput{{Tokens: tokens}}
	case json.Unmarshal(raw, &lists) == nil:
		many = true
		for _, l := range lists {
			// A null (or empty) list is refused below, not taken for text.
			out.inputs = append(out.inputs, EmbedInput{Tokens: append([]int32{}, l...)})
		}
	default:
		return nil, badRequest("input", "input must be a string, an array of strings, an array of token ids (int32) or an array of arrays of token ids")
	}
	switch n := len(out.inputs); {
	case n == 0:
		return nil, badRequest("input", "input must not be an empty array")
	case n > maxEmbedInputs:
		return nil, badRequest("input", "at most %d inputs in one request, got %d", maxEmbedInputs, n)
	}
	for i, in := range out.inputs {
		what := "input"
		if many {
			what = fmt.Sprintf("input[%d]", i)
		}
		switch {
		case in.Tokens == nil && in.Text == "":
			return nil, badRequest("input", "%s is an empty string", what)
		case in.Tokens != nil && len(in.Tokens) == 0:
			return nil, badRequest("input", "%s is an empty array of tokens", what)
		}
		for _, t := range in.Tokens {
			if t < 0 {
				return nil, badRequest("input", "%s holds token id %d: ids are not negative", what, t)
			}
		}
	}
	return out, nil
}

type embeddingJSON struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"` // []float32, or a base64 string
}

type embeddingsUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

type embeddingsResponse struct {
	Object string          `json:"object"`
	Data   []embeddingJSON `json:"data"`
	Model  string          `json:"model"`
	Usage  embeddingsUsage `json:"usage"`
}

// base64Floats is v as OpenAI's encoding_format "base64" writes it: the
// float32s' little-endian bytes in standard base64 (about half the size
// of the decimal text, which is why the official Python and Node clients
// ask for it by default).
func base64Floats(v []float32) string {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// readEmbedding reads an embedding request into v, after refusing (501)
// when the Backend's sessions cannot embed.
func (s *Server) readEmbedding(r *http.Request, v any) *apiError {
	if !s.embeds {
		return notEmbedding("its backend's sessions cannot embed")
	}
	return readBody(r, v)
}

func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) *apiError {
	var req embeddingRequest
	if err := s.readEmbedding(r, &req); err != nil {
		return err
	}
	in, aerr := req.validate(s.info.EmbeddingLength)
	if aerr != nil {
		return aerr
	}
	vs, tokens, _, aerr := s.embed(r, in.inputs, EmbedOptions{Dimensions: in.dims})
	if aerr != nil {
		return aerr
	}
	resp := embeddingsResponse{Object: "list", Data: make([]embeddingJSON, len(vs)), Model: s.info.ID,
		Usage: embeddingsUsage{PromptTokens: tokens, TotalTokens: tokens}}
	for i, v := range vs {
		resp.Data[i] = embeddingJSON{Object: "embedding", Index: i, Embedding: v}
		if in.base64 {
			resp.Data[i].Embedding = base64Floats(v)
		}
	}
	writeJSON(w, resp)
	return nil
}

// notGenerating is the 501 of the generation endpoints when the model only
// embeds, as llama-server answers when it serves embeddings only.
func notGenerating(what string) *apiError {
	return &apiError{Status: 501, Type: "not_supported_error",
		Message: "this server does not support " + what + ": the model is an embedding model; use /v1/embeddings"}
}

// notEmbedding is the 501 of a server that cannot embed, as llama-server
// answers when embeddings are off.
func notEmbedding(why string) *apiError {
	return &apiError{Status: 501, Type: "not_supported_error", Message: "this server does not support embeddings: " + why}
}

// embed embeds inputs together on one slot (whose cached prompt is gone
// afterwards) and returns their vectors, how many tokens they took and
// when the slot was had.
func (s *Server) embed(r *http.Request, inputs []EmbedInput, o EmbedOptions) ([][]float32, int, time.Time, *apiError) {
	// "" takes the free slot that caches the least, whose loss costs least.
	ctx, sl, release, aerr := s.acquire(r, "")
	if aerr != nil {
		return nil, 0, time.Time{}, aerr
	}
	defer release()
	start := time.Now()
	vs, n, aerr := s.embedOn(ctx, sl, inputs, o)
	s.metrics.generation(Result{PromptTokens: n}, time.Since(start))
	return vs, n, start, aerr
}

// embedOn is embed on the slot it holds.
func (s *Server) embedOn(ctx context.Context, sl *slot, inputs []EmbedInput, o EmbedOptions) ([][]float32, int, *apiError) {
	es, ok := sl.session.(EmbedSession)
	if !ok {
		return nil, 0, notEmbedding("its backend's sessions cannot embed")
	}
	sl.prompt = ""
	defer sl.start(s.tasks.Add(1)-1, Params{})()
	vs, n, err := es.Embed(ctx, inputs, o)
	if errors.Is(err, ErrNoEmbeddings) {
		return nil, 0, notEmbedding(err.Error())
	}
	if err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			err = ie.Err
		}
		e := s.failed(ctx, err, "embedding", "input", "input")
		if ie != nil && len(inputs) > 1 && (e.Status == 400 || e.Status == 500) {
			e.Message = fmt.Sprintf("input[%d]: %s", ie.Index, e.Message)
		}
		return nil, 0, e
	}
	if len(vs) != len(inputs) {
		return nil, 0, s.failed(ctx, fmt.Errorf("server: the backend made %d embeddings of %d inputs", len(vs), len(inputs)), "embedding", "input", "input")
	}
	return vs, n, nil
}
