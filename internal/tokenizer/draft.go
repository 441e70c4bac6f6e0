package tokenizer

import "fmt"

// Draft vocabularies are compared as llama.cpp's speculative decoding
// compares them (common_speculative_are_compatible): their sizes may
// differ by at most MaxDraftVocabDiff tokens, and token texts are compared
// from DraftCheckFrom on (the first ids are special tokens that converters
// lay out differently).
const (
	MaxDraftVocabDiff = 128
	DraftCheckFrom    = 5
)

// kindNames are llama.cpp's names of the tokenizer models.
var kindNames = [...]string{kindSPM: "llama (SPM)", kindBPE: "gpt2 (BPE)", kindWPM: "bert (WPM)", kindRWKV: "rwkv"}

// CheckDraft reports why a draft model of vocabulary d cannot draft tokens
// for a model of vocabulary t, naming the first difference; nil when it
// can: the same tokenizer model, the same BOS when either adds it and the
// same EOS when either adds it (whether each adds them too), sizes within
// MaxDraftVocabDiff, the same text for every id from DraftCheckFrom up to
// the smaller size.
func (t *Tokenizer) CheckDraft(d *Tokenizer) error {
	switch {
	case t.kind != d.kind:
		return fmt.Errorf("the draft's tokenizer is %s, the model's %s", kindNames[d.kind], kindNames[t.kind])
	case t.addBOS != d.addBOS || t.addBOS && t.bos != d.bos:
		return fmt.Errorf("BOS differs: the draft adds it %v (id %d), the model %v (id %d)", d.addBOS, d.bos, t.addBOS, t.bos)
	case t.addEOS != d.addEOS || t.addEOS && t.eos != d.eos:
		return fmt.Errorf("EOS differs: the draft adds it %v (id %d), the model %v (id %d)", d.addEOS, d.eos, t.addEOS, t.eos)
	}
	nt, nd := len(t.tokens), len(d.tokens)
	if diff := max(nt-nd, nd-nt); diff > MaxDraftVocabDiff {
		return fmt.Errorf("the draft's vocabulary has %d tokens, the model's %d: more than %d apart", nd, nt, MaxDraftVocabDiff)
	}
	for id := DraftCheckFrom; id < min(nt, nd); id++ {
		if t.tokens[id] != d.tokens[id] {
			return fmt.Errorf("token %d is %q in the draft's vocabulary, %q in the model's", id, d.tokens[id], t.tokens[id])
		}
	}
	return nil
}
