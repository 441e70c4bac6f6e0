package server

import (
	"net/http"
	"strings"
	"unicode/utf8"
)

// llama-server's own endpoints beside the OpenAI ones — /tokenize,
// /detokenize, /apply-template and /props — for clients written against
// llama.cpp's server: counting tokens, previewing a rendered prompt,
// reading the context size and the chat template.

// Vocabulary is a Backend that can tokenize: /tokenize and /detokenize ask
// for it and answer 501 when the Backend is not one. FromModel's is.
type Vocabulary interface {
	// Tokenize returns text's token ids: with addSpecial, the BOS and EOS
	// tokens the model adds; with parseSpecial, special-token text such as
	// "<|im_start|>" read as the special token rather than as plain text.
	Tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error)
	// Piece is the text of token id as generated output holds it (a
	// control token's own text, such as "</s>"), which may be part of a
	// UTF-8 character; ok is false for an id outside the vocabulary.
	Piece(id int32) (text string, ok bool)
}

type tokenizeRequest struct {
	Content      *string `json:"content"`
	AddSpecial   bool    `json:"add_special"`
	ParseSpecial *bool   `json:"parse_special"`
	WithPieces   bool    `json:"with_pieces"`
}

type detokenizeRequest struct {
	Tokens []int32 `json:"tokens"`
}

// pieceJSON is a token with its text: a string when the text is valid
// UTF-8, else its bytes, as llama-server answers with_pieces.
type pieceJSON struct {
	ID    int32 `json:"id"`
	Piece any   `json:"piece"`
}

func (s *Server) vocabulary(what string) (Vocabulary, *apiError) {
	v, ok := s.backend.(Vocabulary)
	if !ok {
		return nil, &apiError{Status: 501, Type: "not_supported_error", Message: "this server does not support " + what + ": its backend has no vocabulary"}
	}
	return v, nil
}

// handleTokenize is llama-server's POST /tokenize: content's tokens,
// special tokens added only when add_special asks, special-token text
// parsed unless parse_special is false.
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request, req *tokenizeRequest) *apiError {
	if req.Content == nil {
		return badRequest("content", "content is required: the text to tokenize")
	}
	v, aerr := s.vocabulary("/tokenize")
	if aerr != nil {
		return aerr
	}
	ids, err := v.Tokenize(*req.Content, req.AddSpecial, req.ParseSpecial == nil || *req.ParseSpecial)
	if err != nil {
		return badRequest("content", "cannot tokenize content: %v", err)
	}
	if !req.WithPieces {
		writeJSON(w, map[string]any{"tokens": ids})
		return nil
	}
	out := make([]pieceJSON, len(ids))
	for i, id := range ids {
		text, _ := v.Piece(id)
		out[i] = pieceJSON{ID: id, Piece: text}
		if !utf8.ValidString(text) {
			b := make([]int, len(text))
			for j := range b {
				b[j] = int(text[j])
			}
			out[i].Piece = b
		}
	}
	writeJSON(w, map[string]any{"tokens": out})
	return nil
}

// handleDetokenize is llama-server's POST /detokenize: the text of tokens,
// each token's piece in turn (control tokens' text included, as
// llama-server gives it).
func (s *Server) handleDetokenize(w http.ResponseWriter, r *http.Request, req *detokenizeRequest) *apiError {
	v, aerr := s.vocabulary("/detokenize")
	if aerr != nil {
		return aerr
	}
	var b strings.Builder
	for i, id := range req.Tokens {
		text, ok := v.Piece(id)
		if !ok {
			return badRequest("tokens", "tokens[%d] = %d is not a token of the vocabulary", i, id)
		}
		b.WriteString(text)
	}
	writeJSON(w, map[string]string{"content": b.String()})
	return nil
}

// handleApplyTemplate is llama-server's POST /apply-template: the prompt a
// chat completion request of the same body would evaluate, not evaluated.
func (s *Server) handleApplyTemplate(w http.ResponseWriter, r *http.Request, _ *chatRequest, in *chatInput) *apiError {
	prompt, _, aerr := s.chatPrompt(in, "the model has no chat template")
	if aerr != nil {
		return aerr
	}
	writeJSON(w, map[string]string{"prompt": prompt})
	return nil
}

// handleProps is llama-server's GET /props: the slots' context size (and
// speculation's draft settings where the Backend speculates), how many
// slots there are, the chat template and the vocabulary's BOS and EOS
// texts; no vision or audio.
func (s *Server) handleProps(w http.ResponseWriter, r *http.Request) *apiError {
	template := ""
	if s.info.Template != nil {
		template = s.info.Template.Source()
	}
	settings := map[string]any{"n_ctx": s.info.ContextLength}
	if sp := s.info.Speculative; sp != nil {
		settings["params"] = sp.settings(Params{})
	}
	writeJSON(w, map[string]any{
		"default_generation_settings": settings,
		"total_slots":                 len(s.all),
		"model_path":                  s.info.ID,
		"chat_template":               template,
		"bos_token":                   s.info.Render.BOSToken,
		"eos_token":                   s.info.Render.EOSToken,
		"modalities":                  map[string]bool{"vision": false, "audio": false},
		"build_info":                  "lowmem/llm",
	})
	return nil
}

// settings are the draft settings of a request p on a server that
// speculates as sp, as llama-server's params name them: sp's, replaced
// by p's speculative.n_max, n_min and p_min.
func (sp *Speculative) settings(p Params) map[string]any {
	most, least := requestDrafts(p, sp.NMax, sp.NMin)
	pMin := sp.PMin
	if p.DraftPMin != nil {
		pMin = *p.DraftPMin
	}
	return map[string]any{"speculative.n_max": most, "speculative.n_min": least, "speculative.p_min": pMin}
}
