package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/model"
)

// Rerank scores each document's relevance to query with a reranker's
// classification head (model.RankHead): each pair is formatted as
// llama-server's format_prompt_rerank does, the pairs embedded together
// as Embed's texts are (in q when not nil, else in a sequence of their
// own), the pooled state put through the head; the score is the head's
// first output. It also returns the tokens evaluated. A document's error
// is a *seq.TextError naming it.
func (e *Engine) Rerank(ctx context.Context, q *seq.Seq, query string, docs []string) ([]float32, int, error) {
	if err := e.Check(); err != nil {
		return nil, 0, err
	}
	head := e.Model.Rank
	if head == nil {
		return nil, 0, fmt.Errorf("llm: rerank: the model is not a reranker (a file whose pooling_type is rank, with a classification head): %w", model.ErrUnsupportedArch)
	}
	if len(docs) == 0 {
		return nil, 0, fmt.Errorf("llm: rerank: no documents: %w", seq.ErrInvalidOption)
	}
	ids := make([][]int32, len(docs))
	longest, total := 0, 0
	for i, d := range docs {
		ids[i] = e.rerankTokens(query, d)
		longest, total = max(longest, len(ids[i])), total+len(ids[i])
	}
	o := Embedding{Pooling: model.PoolingCLS, Raw: true}
	if head.Last {
		o.Pooling = model.PoolingLast
	}
	var vs [][]float32
	var tokens int
	var err error
	if q != nil {
		if vs, tokens, err = e.EmbedAll(ctx, q, ids, o); err == nil {
			q.Scored(tokens)
		}
	} else {
		vs, tokens, err = e.embedOwn(ctx, ids, longest, total, o)
	}
	if err != nil {
		return nil, 0, err
	}
	scores := make([]float32, len(docs))
	for i, v := range vs {
		out, err := head.Scores(v)
		if err != nil {
			return nil, 0, &seq.TextError{Index: i, Of: len(docs), Err: err}
		}
		scores[i] = out[0]
	}
	return scores, tokens, nil
}

// rerankTokens is the pair of query and doc as llama-server's
// format_prompt_rerank makes it: the file's rerank template
// (tokenizer.chat_template.rerank) with {query} and {document} filled in,
// special tokens parsed and none added; else [BOS] query [EOS] [SEP] doc
// [EOS], each marker where the vocabulary asks for it (EOS falling back
// to SEP), the texts' special-token text read as plain text.
func (e *Engine) rerankTokens(query, doc string) []int32 {
	tok := e.Tok
	if tmpl := e.Chat.RerankTemplate; tmpl != "" {
		prompt := strings.ReplaceAll(strings.ReplaceAll(tmpl, "{query}", query), "{document}", doc)
		return tok.EncodeSpecial(prompt, false)
	}
	eos := tok.EOS()
	if eos < 0 {
		eos = tok.SEP()
	}
	var ids []int32
	add := func(on bool, id int32) {
		if on && id >= 0 {
			ids = append(ids, id)
		}
	}
	add(tok.AddBOS(), tok.BOS())
	ids = append(ids, tok.Encode(query, false)...)
	add(tok.AddEOS(), eos)
	add(tok.AddSEP(), tok.SEP())
	ids = append(ids, tok.Encode(doc, false)...)
	add(tok.AddEOS(), eos)
	return ids
}
