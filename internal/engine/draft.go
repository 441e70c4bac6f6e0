package engine

import (
	"fmt"

	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/model"
)

// CheckDraft refuses d as a draft model for e: a vocabulary llama.cpp's
// speculative decoding would refuse (tokenizer.CheckDraft names the
// first difference), an embedding model, or e itself with a model whose
// conv or recurrent layers go back only to checkpoints, or such a d.
// Errors wrap seq.ErrInvalidOption.
func (e *Engine) CheckDraft(d *Engine) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("llm: draft model: "+format+": %w", append(a, seq.ErrInvalidOption)...)
	}
	if err := e.Tok.CheckDraft(d.Tok); err != nil {
		return bad("its vocabulary cannot draft for this model's: %w", err)
	}
	if err := d.Model.Generative(); err != nil {
		return bad("%w", err)
	}
	for _, m := range []*Engine{e, d} {
		if model.ConvStateFloats(&m.Model.Config) > 0 { // model.State.TruncatesExactly false
			return bad("%s has conv or recurrent layers, whose state goes back only to checkpoints: speculation is refused", m.Model.Arch)
		}
	}
	return nil
}

// draftSeq makes the sequence of o.Draft that drafts for a sequence of
// e with options o: the draft's own KV cache, planned and counted by the
// draft's own engine (its plan and KV budget), as long as the smaller of
// o's context and the draft's default context; nil without a draft.
func (e *Engine) draftSeq(o Options) (*seq.Seq, error) {
	d := o.Draft
	if d == nil {
		return nil, nil
	}
	if err := e.CheckDraft(d); err != nil {
		return nil, err
	}
	q, err := d.NewSeq(func(s *Settings) {
		s.Context = min(o.Context, s.Context)
		s.Shift, s.Draft = false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("llm: draft model: %w", err)
	}
	return q, nil
}
