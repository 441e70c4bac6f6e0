package seq

import (
	"context"
	"fmt"
	"math"
)

// Drafting is speculative decoding with a draft model (llama-server's
// --model-draft): a small model of the same vocabulary, whose sequence
// (Config.Draft) follows this one's tokens, drafts the next tokens
// greedily, and they are verified in one pass exactly as prompt lookup's
// are (see Lookup). It applies where the sequence has a draft; the zero
// value (Draft 0) is off.
type Drafting struct {
	// Draft is the most tokens drafted a step (--draft-max,
	// speculative.n_max): 0 turns it off, at most MaxDraft; like
	// Lookup.Draft also bounded by the arena, the context and MaxTokens.
	Draft int
	// MinDraft is the fewest drafted tokens worth a verification pass
	// (--draft-min, speculative.n_min): 0 means 1; at most Draft.
	MinDraft int
	// PMin ends a draft at the first token whose probability under the
	// draft model is below it (--draft-p-min, speculative.p_min), in
	// [0, 1]: the probability among the draft's DraftTopK most likely
	// tokens, as llama.cpp's draft sampler computes it.
	PMin float32
}

// Defaults of Drafting, llama-server's at llama.cpp d32676d77 (the
// block of common_params' initial values in its llama-bench holds
// n_max 3, n_min 0, p_split 0.1, p_min 0; older releases had 16, 0 and
// 0.75), and the candidates PMin is measured among (its draft sampler's
// top-k, 10 in that build).
const (
	DefaultDraftMax  = 3
	DefaultDraftPMin = 0
	DraftTopK        = 10
)

// DefaultDrafting is llama-server's drafting: 3 tokens a step, however
// sure the draft is, any number worth a pass.
func DefaultDrafting() Drafting {
	return Drafting{Draft: DefaultDraftMax, PMin: DefaultDraftPMin}
}

// Check refuses fields out of range, naming the field, with an error
// wrapping ErrInvalidOption.
func (d Drafting) Check() error {
	if err := (Lookup{Draft: d.Draft, MinDraft: d.MinDraft}).Check(); err != nil {
		return err
	}
	if !(d.PMin >= 0 && d.PMin <= 1) {
		return fmt.Errorf("llm: draft model PMin %v outside [0, 1]: %w", d.PMin, ErrInvalidOption)
	}
	return nil
}

// follow makes d, the draft sequence, hold hist followed by id: it keeps
// the prefix it shares with them (rollback by truncation) and evaluates
// the rest in one pass (the tokens sampling confirmed, then id), at least
// id itself so that its logits are current. It then drafts up to len(dst)
// tokens greedily into dst, stopping at one less likely than pMin, each
// but the last evaluated by a pass of its own, and returns how many. Any
// failure (a token outside its vocabulary, its context or budget full, a
// cancelled context, its model closed) drafts nothing: the step goes on
// without drafts. It allocates nothing.
func (d *Seq) follow(ctx context.Context, hist []int32, id int32, pMin float32, dst []int32) int {
	n := len(hist) + 1
	// It holds hist, id and all but the last draft.
	dst = dst[:max(0, min(len(dst), d.cfg.Context-n+1))]
	if len(dst) == 0 {
		return 0
	}
	// At least id is evaluated again, even where d holds it: its logits
	// are those after the last token d evaluated, which may be a draft.
	c := commonPrefix(d.history, hist)
	d.truncate(c)
	d.catch = append(append(d.catch[:0], hist[c:]...), id)
	if d.eval(ctx, d.catch, nil) != nil {
		return 0
	}
	k := 0
	for k < len(dst) {
		tok, p := topProb(d.logits)
		if p < pMin {
			break
		}
		dst[k] = tok
		if k++; k == len(dst) {
			break
		}
		d.one[0] = tok
		if d.eval(ctx, d.one[:], nil) != nil {
			break
		}
	}
	return k
}

// shiftLike makes the draft sequence d drop what its sequence's context
// shift drops from hist, the sequence's tokens before it, as the shift
// drops it (keys moved and re-rotated), when d holds at least the first
// keep+drop of them: it keeps only what it shares with hist (what it
// evaluated after, the sequence evaluates after the shift) and then goes
// on from a state made as the sequence's was, rather than evaluating the
// kept tokens again. Otherwise, or when its shift fails, it is left to
// follow's truncation.
func (d *Seq) shiftLike(hist []int32, keep, drop int) {
	c := commonPrefix(d.history, hist)
	if c < keep+drop {
		return
	}
	d.truncate(c)
	if d.st.Shift(keep, drop) != nil {
		d.truncate(0) // its state is no longer known
		return
	}
	d.mu.Lock()
	d.history = append(d.history[:keep], d.history[keep+drop:]...)
	d.at = len(d.history)
	d.shifts++
	d.mu.Unlock()
}

// topProb is the most likely token of logits and its probability among
// the DraftTopK most likely (a softmax over them alone, as llama.cpp's
// draft sampler, top-k then its distribution, computes it).
func topProb(logits []float32) (int32, float32) {
	var top [DraftTopK]float32
	for i := range top {
		top[i] = float32(math.Inf(-1))
	}
	best := int32(0)
	for i, l := range logits {
		if !(l > top[DraftTopK-1]) {
			continue
		}
		if l > top[0] {
			best = int32(i)
		}
		j := DraftTopK - 1
		for ; j > 0 && top[j-1] < l; j-- {
			top[j] = top[j-1]
		}
		top[j] = l
	}
	if math.IsInf(float64(top[0]), -1) {
		return best, 0 // no token is possible
	}
	var sum float64
	for _, l := range top {
		sum += math.Exp(float64(l - top[0]))
	}
	return best, float32(1 / sum)
}
