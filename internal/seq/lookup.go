package seq

import (
	"fmt"
	"slices"
)

// Lookup is speculative decoding with prompt-lookup drafts (llama.cpp's
// n-gram speculation, llama-server's --spec-type ngram-simple): after
// each sampled token the sequence's last NGram tokens are looked for among
// its earlier ones (prompt and output), the tokens that followed the
// latest match are taken as a draft, and the sampled token and the draft
// are evaluated in one pass with every position's logits. Sampling then
// goes on as it would token by token, over those logits: a draft token is
// kept while the token sampled at its position is that token; the first
// other sample is the next token, and the drafts after it are dropped.
// The tokens are those sampling one by one gives, from the logits of
// batched passes. The zero value (Draft 0) is off.
type Lookup struct {
	// Draft is the most tokens drafted after a sampled token (llama.cpp's
	// --draft-max, speculative.n_max): 0 turns speculation off, at most
	// MaxDraft. A pass also drafts no more than the model's arena holds
	// logits for (model.State.RowsFit), nor past the context or
	// MaxTokens.
	Draft int
	// MinDraft is the fewest drafted tokens worth a verification pass
	// (--draft-min, speculative.n_min): a shorter match is not used and
	// the token is evaluated alone. 0 means 1; at most Draft.
	MinDraft int
	// NGram is how many of the last tokens must match earlier ones
	// (--spec-ngram-size-n): 0 means DefaultNGram; at most MaxNGram.
	NGram int
}

// Bounds of Lookup's fields.
const (
	MaxDraft     = 64
	MaxNGram     = 64
	DefaultNGram = 3
)

// Check refuses fields out of range, naming the field, with an error
// wrapping ErrInvalidOption.
func (l Lookup) Check() error {
	bad := func(field string, v, lo, hi int) error {
		return fmt.Errorf("llm: speculation %s %d outside [%d, %d]: %w", field, v, lo, hi, ErrInvalidOption)
	}
	switch {
	case l.Draft < 0 || l.Draft > MaxDraft:
		return bad("Draft", l.Draft, 0, MaxDraft)
	case l.MinDraft < 0 || l.MinDraft > max(l.Draft, 1):
		return bad("MinDraft", l.MinDraft, 0, max(l.Draft, 1))
	case l.NGram < 0 || l.NGram > MaxNGram:
		return bad("NGram", l.NGram, 0, MaxNGram)
	}
	return nil
}

// ngram is the n-gram length l matches.
func (l Lookup) ngram() int {
	if l.NGram == 0 {
		return DefaultNGram
	}
	return l.NGram
}

// lookup drafts the tokens that followed the latest earlier occurrence of
// toks's last n tokens: it copies up to len(dst) of them into dst and
// returns how many (0 when toks has no earlier occurrence). A draft that
// reaches the end of toks goes on with itself, as the repeat it found
// would (a loop of p tokens drafts len(dst) of them, not p). It allocates
// nothing and takes time in len(toks)·n at worst.
func lookup(toks []int32, n int, dst []int32) int {
	L := len(toks)
	if n < 1 || L <= n || len(dst) == 0 {
		return 0
	}
	tail := toks[L-n:]
	for j := L - n - 1; j >= 0; j-- {
		if toks[j] != tail[0] || !slices.Equal(toks[j+1:j+n], tail[1:]) {
			continue
		}
		k := copy(dst, toks[j+n:])
		for ; k < len(dst); k++ {
			dst[k] = dst[k-(L-j-n)]
		}
		return k
	}
	return 0
}
