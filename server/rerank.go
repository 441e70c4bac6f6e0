package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/lowmem/llm"
)

// llama-server's reranking endpoint (POST /v1/rerank, and its aliases
// /rerank, /v1/reranking, /reranking), in the shape Jina's and Cohere's
// APIs share: a query and documents in, each document's index and
// relevance score out, most relevant first.

// RerankSession is a Session that can rerank: the rerank endpoints ask for
// it and answer 501 when the Backend's sessions are not RerankSessions, or
// when the model is not a reranker. FromModel's are.
type RerankSession interface {
	Session
	// Rerank returns each document's relevance to query (higher is more
	// relevant) and the tokens it evaluated. It empties the session, as
	// Embed does. Errors wrap ErrNoEmbeddings (the model is not a
	// reranker) or ErrContextLength (a pair longer than the context), in an
	// *InputError naming the document at fault; when ctx is done it
	// returns ctx.Err().
	Rerank(ctx context.Context, query string, documents []string) ([]float32, int, error)
}

type rerankRequest struct {
	Model           string   `json:"model"`
	Query           *string  `json:"query"`
	Documents       []string `json:"documents"`
	Texts           []string `json:"texts"` // llama-server's other name for documents
	TopN            *int     `json:"top_n"`
	ReturnDocuments bool     `json:"return_documents"`
}

func (s *Server) handleRerank(w http.ResponseWriter, r *http.Request, req *rerankRequest) *apiError {
	if req.Query == nil {
		return badRequest("query", "query is required")
	}
	docs := req.Documents
	if docs == nil {
		docs = req.Texts
	}
	if len(docs) == 0 || len(docs) > maxEmbedInputs { // the same bound as an embedding request's inputs
		return badRequest("documents", "documents must be an array of 1 to %d strings", maxEmbedInputs)
	}
	topN := len(docs)
	if req.TopN != nil {
		if *req.TopN < 1 {
			return badRequest("top_n", "top_n must be at least 1, got %d", *req.TopN)
		}
		topN = min(*req.TopN, len(docs))
	}
	ctx, sl, release, aerr := s.acquire(r, "")
	if aerr != nil {
		return aerr
	}
	defer release()
	rs, ok := sl.session.(RerankSession)
	if !ok {
		return &apiError{Status: 501, Type: "not_supported_error", Message: "this server does not support reranking: its backend's sessions cannot rerank"}
	}
	sl.prompt = ""
	start := time.Now()
	scores, tokens, err := rs.Rerank(ctx, *req.Query, docs)
	s.metrics.generation(Result{PromptTokens: tokens}, time.Since(start))
	if errors.Is(err, ErrNoEmbeddings) {
		return &apiError{Status: 501, Type: "not_supported_error", Message: "this server does not support reranking: " + err.Error()}
	}
	if err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			err = ie.Err
		}
		e := s.failed(ctx, err, "reranking", "documents", "documents")
		if ie != nil && (e.Status == 400 || e.Status == 500) {
			e.Message = fmt.Sprintf("documents[%d]: %s", ie.Index, e.Message)
		}
		return e
	}
	if len(scores) != len(docs) {
		return s.failed(ctx, fmt.Errorf("server: the backend scored %d of %d documents", len(scores), len(docs)), "reranking", "documents", "documents")
	}
	type result struct {
		Index          int     `json:"index"`
		RelevanceScore float32 `json:"relevance_score"`
		Document       any     `json:"document,omitempty"`
	}
	results := make([]result, len(docs))
	for i, sc := range scores {
		results[i] = result{Index: i, RelevanceScore: sc}
		if req.ReturnDocuments {
			results[i].Document = map[string]string{"text": docs[i]}
		}
	}
	slices.SortStableFunc(results, func(a, b result) int {
		switch {
		case a.RelevanceScore > b.RelevanceScore:
			return -1
		case a.RelevanceScore < b.RelevanceScore:
			return 1
		}
		return 0
	})
	writeJSON(w, map[string]any{"model": s.info.ID, "object": "list", "results": results[:topN],
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
	return nil
}

// Rerank implements RerankSession with llm.Session.Rerank.
func (ms modelSession) Rerank(ctx context.Context, query string, documents []string) ([]float32, int, error) {
	scores, err := ms.s.Rerank(ctx, query, documents)
	var te *llm.TextError
	switch {
	case errors.Is(err, llm.ErrUnsupportedArch):
		return nil, 0, fmt.Errorf("%w: %w", ErrNoEmbeddings, err)
	case errors.As(err, &te):
		return nil, 0, &InputError{Index: te.Index, Err: backendError(te.Err)}
	case err != nil:
		return nil, 0, backendError(err)
	}
	return scores, ms.s.Usage().PromptTokens, nil
}
