package tokenizer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Errors returned by New and FromGGUF. Test for them with errors.Is.
var (
	// ErrBadVocab is wrapped by every error about an inconsistent
	// vocabulary: no tokens, duplicate tokens, arrays of the wrong length,
	// special token ids out of range.
	ErrBadVocab = errors.New("tokenizer: bad vocabulary")
	// ErrUnsupported is wrapped when the tokenizer model or pre-tokenizer
	// named by the vocabulary is not implemented.
	ErrUnsupported = errors.New("tokenizer: unsupported tokenizer")
)

// Token types as stored in tokenizer.ggml.token_type.
const (
	TypeUndefined   = 0
	TypeNormal      = 1
	TypeUnknown     = 2
	TypeControl     = 3
	TypeUserDefined = 4
	TypeUnused      = 5
	TypeByte        = 6
)

// Vocab is everything a Tokenizer is built from. FromGGUF fills it from a
// model's tokenizer.ggml.* metadata with llama.cpp's defaults; tests and
// tools may fill it by hand, starting from a Vocab whose special ids are all
// -1 (see ClearSpecial).
type Vocab struct {
	// Model is tokenizer.ggml.model: "llama" for SentencePiece BPE (SPM),
	// "gpt2" for byte-level BPE, "bert" for WordPiece (WPM), "t5" for the
	// SentencePiece unigram model (UGM), or "rwkv" for RWKV World's greedy
	// longest match over escaped byte strings.
	Model string
	// Pre is tokenizer.ggml.pre, the pre-tokenizer of a "gpt2" vocabulary
	// ("gpt-2", "llama3", "qwen2", …). Empty means "default". Ignored for SPM.
	Pre string
	// Name is general.name and Arch is general.architecture. llama.cpp
	// keys a few whitespace quirks on them (in Phi-3 models whitespace
	// after a special token is dropped).
	Name, Arch string

	Tokens []string  // token texts, indexed by id
	Scores []float32 // SPM merge priorities; nil means all 0
	Types  []int32   // Type* per token; nil means all TypeNormal
	Merges []string  // BPE merges, "left right", highest priority first

	// Special token ids, -1 when absent.
	BOS, EOS, UNK, PAD, EOT, EOM, SEP, MASK int32
	// Fill-in-the-middle token ids, -1 when absent. Pad, repo and file
	// separator end generation, as in llama.cpp.
	FIMPre, FIMSuf, FIMMid, FIMPad, FIMRep, FIMSep int32

	AddBOS         bool // Encode(…, true) starts with BOS
	AddEOS         bool // Encode(…, true) ends with EOS
	AddSEP         bool // the vocabulary asks for SEP (WPM: Encode(…, true) ends with it)
	AddSpacePrefix bool // SPM, UGM: a space is put before the text

	// UGM normalization: Charsmap is tokenizer.ggml.precompiled_charsmap
	// (nil for none), RemoveExtraWhitespaces is
	// tokenizer.ggml.remove_extra_whitespaces.
	Charsmap               []byte
	RemoveExtraWhitespaces bool

	// WPM normalisation: KeepCase turns off lowercasing and KeepAccents
	// the dropping of combining marks (llama.cpp's
	// tokenizer.ggml.normalizer.lowercase and .strip_accents, inverted so
	// that the zero Vocab normalises as BERT does).
	KeepCase, KeepAccents bool

	// Warnings lists inconsistencies that llama.cpp tolerates and so does
	// New (a special token id outside the vocabulary, which falls back to
	// the default). FromGGUF fills it; Tokenizer.Warnings returns it.
	Warnings []string
}

// ClearSpecial sets every special token id of v to -1 (absent).
func (v *Vocab) ClearSpecial() {
	for _, p := range v.specialIDs() {
		*p.id = -1
	}
}

type specialID struct {
	name string
	id   *int32
}

// specialIDs lists v's special token ids with their names.
func (v *Vocab) specialIDs() []specialID {
	return []specialID{
		{"BOS", &v.BOS}, {"EOS", &v.EOS}, {"UNK", &v.UNK}, {"PAD", &v.PAD},
		{"EOT", &v.EOT}, {"EOM", &v.EOM}, {"SEP", &v.SEP}, {"MASK", &v.MASK},
		{"FIMPre", &v.FIMPre}, {"FIMSuf", &v.FIMSuf}, {"FIMMid", &v.FIMMid},
		{"FIMPad", &v.FIMPad}, {"FIMRep", &v.FIMRep}, {"FIMSep", &v.FIMSep},
	}
}

// Token attributes, a bit set like llama.cpp's llama_token_attr.
const (
	attrUnknown uint16 = 1 << iota
	attrUnused
	attrNormal
	attrControl
	attrUserDefined
	attrByte
	attrLStrip
	attrRStrip
)

type kind uint8

const (
	kindSPM kind = iota
	kindBPE
	kindWPM
	kindRWKV
	kindUGM
)

// Tokenizer converts between text and token ids exactly as llama.cpp does
// for the same vocabulary. It is safe for concurrent use.
type Tokenizer struct {
	kind   kind
	tokens []string
	scores []float32
	attrs  []uint16
	ids    map[string]int32

	bos, eos, unk, eot, sep int32
	addBOS, addEOS, addSEP  bool
	addSpacePrefix          bool
	cleanSpaces             bool // llama.cpp's clean-up of " ." " 's" … in Decode

	fim     FIM     // fill-in-the-middle tokens, given or found by their text
	eog     []int32 // end-of-generation tokens, ascending
	special []int32 // control, user-defined and unknown tokens, longest text first

	pieces    []byte  // Piece(id) of every token, concatenated
	pieceOffs []int32 // piece of id i is pieces[pieceOffs[i]:pieceOffs[i+1]]

	byteTok [256]int32 // SPM byte fallback: token of each byte, -1 if none

	// BPE only.
	pre          *preTokenizer
	merges       map[string]int32 // "left right" → rank
	ignoreMerges bool             // a pre-split word that is a token is used whole

	// WPM only: the longest token text in bytes, which bounds the
	// longest-match search.
	maxTokenLen int
	keepCase    bool
	keepAccents bool

	// RWKV only: every token's unescaped bytes to its id (maxTokenLen is
	// then the longest in bytes).
	rwkv map[string]int32

	ugm *ugm // UGM only

	warnings []string

	pool sync.Pool // *scratch
}

// New builds a Tokenizer from v. It returns an error wrapping ErrBadVocab
// when v is inconsistent — arrays of different lengths, duplicate tokens,
// a special id outside the vocabulary, AddBOS (AddEOS, AddSEP) without a
// BOS (EOS, SEP) token — and ErrUnsupported when its Model or Pre is not
// implemented.
func New(v Vocab) (*Tokenizer, error) {
	n := len(v.Tokens)
	if n == 0 {
		return nil, fmt.Errorf("%w: no tokens", ErrBadVocab)
	}
	if n > 1<<31-2 {
		return nil, fmt.Errorf("%w: %d tokens", ErrBadVocab, n)
	}
	if v.Scores != nil && len(v.Scores) != n {
		return nil, fmt.Errorf("%w: %d scores for %d tokens", ErrBadVocab, len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) != n {
		return nil, fmt.Errorf("%w: %d token types for %d tokens", ErrBadVocab, len(v.Types), n)
	}
	for _, s := range v.specialIDs() {
		if *s.id < -1 || *s.id >= int32(n) {
			return nil, fmt.Errorf("%w: %s id %d outside the vocabulary of %d tokens", ErrBadVocab, s.name, *s.id, n)
		}
	}
	for _, c := range []struct {
		flag, id string
		on       bool
		tok      int32
	}{{"AddBOS", "BOS", v.AddBOS, v.BOS}, {"AddEOS", "EOS", v.AddEOS, v.EOS}, {"AddSEP", "SEP", v.AddSEP, v.SEP}} {
		// llama.cpp refuses these: Encode would have no token to add.
		if c.on && c.tok < 0 {
			return nil, fmt.Errorf("%w: %s is set but there is no %s token", ErrBadVocab, c.flag, c.id)
		}
	}
	t := &Tokenizer{
		tokens:         make([]string, n),
		scores:         make([]float32, n),
		attrs:          make([]uint16, n),
		ids:            make(map[string]int32, n),
		bos:            v.BOS,
		eos:            v.EOS,
		unk:            v.UNK,
		eot:            v.EOT,
		sep:            v.SEP,
		addBOS:         v.AddBOS,
		addEOS:         v.AddEOS,
		addSEP:         v.AddSEP,
		addSpacePrefix: v.AddSpacePrefix,
		warnings:       slices.Clone(v.Warnings),
	}
	switch v.Model {
	case "llama":
		t.kind = kindSPM
	case "gpt2":
		t.kind = kindBPE
		t.addSpacePrefix = false
		p, err := newPreTokenizer(v.Pre)
		if err != nil {
			return nil, err
		}
		t.pre = p
		t.ignoreMerges = p.ignoreMerges
		t.cleanSpaces = p.cleanSpaces
		t.merges = make(map[string]int32, len(v.Merges))
		// llama.cpp keeps a malformed merge (no space after the first
		// byte) as the pair ("", ""), which can never match, and lets the
		// first of two equal merges win. Merges of texts that are not
		// tokens are harmless: a merged symbol that is not a token is
		// spelled byte by byte.
		for i, m := range v.Merges {
			if _, dup := t.merges[m]; !dup {
				t.merges[m] = int32(i)
			}
		}
	case "bert":
		t.kind = kindWPM
		t.keepCase, t.keepAccents = v.KeepCase, v.KeepAccents
		t.addSpacePrefix = false
		t.cleanSpaces = true
	case "rwkv":
		t.kind = kindRWKV
		t.addSpacePrefix = false
	case "t5":
		t.kind = kindUGM
	default:
		return nil, fmt.Errorf("%w: tokenizer model %q", ErrUnsupported, v.Model)
	}

	for i, s := range v.Tokens {
		if s == "" {
			// llama.cpp renames empty tokens so they cannot match text.
			s = fmt.Sprintf("[EMPTY_%d]", i)
		}
		if j, dup := t.ids[s]; dup {
			return nil, fmt.Errorf("%w: duplicate token %q has ids %d and %d", ErrBadVocab, s, j, i)
		}
		t.ids[s] = int32(i)
		t.tokens[i] = s
		t.maxTokenLen = max(t.maxTokenLen, len(s))
		if v.Scores != nil {
			t.scores[i] = v.Scores[i]
		}
		ty := int32(TypeNormal)
		if v.Types != nil {
			ty = v.Types[i]
		}
		t.attrs[i] = typeAttr(ty)
	}

	t.findEOG(v)

	for i := range t.attrs {
		if t.attrs[i]&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.special = append(t.special, int32(i))
		}
	}
	slices.SortStableFunc(t.special, func(a, b int32) int {
		return len(t.tokens[b]) - len(t.tokens[a])
	})

	for b := range 256 {
		t.byteTok[b] = -1
		if t.kind != kindSPM {
			continue
		}
		if id, ok := t.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
			t.byteTok[b] = id
		} else if id, ok := t.ids[string([]byte{byte(b)})]; ok {
			t.byteTok[b] = id
		}
	}

	if t.kind == kindRWKV {
		t.buildRWKV()
	}
	t.buildPieces()
	// llama.cpp sets these after building its piece cache; they only
	// change how text around special tokens is split.
	t.markStripped(v)
	if t.kind == kindUGM {
		// After the attributes are final: they choose the tokens Viterbi
		// may use.
		if err := t.buildUGM(v); err != nil {
			return nil, err
		}
	}
	t.pool.New = func() any { return new(scratch) }
	return t, nil
}

func typeAttr(ty int32) uint16 {
	switch ty {
	case TypeNormal:
		return attrNormal
	case TypeUnknown:
		return attrUnknown
	case TypeControl:
		return attrControl
	case TypeUserDefined:
		return attrUserDefined
	case TypeUnused:
		return attrUnused
	case TypeByte:
		return attrByte
	}
	return 0
}

// Texts by which llama.cpp recognises special tokens that the metadata
// does not name (llama_vocab::impl::load).
var (
	eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
		"<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}
	eomTexts    = []string{"<|eom_id|>"}
	fimPreTexts = []string{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"}
	fimSufTexts = []string{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"}
	fimMidTexts = []string{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"}
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}
	fimSepTexts = []string{"<|file_sep|>"}
	// Every token with one of these texts ends generation.
	eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
		"<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
		"<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~["}
	// gpt-oss's channel markers are always rendered: llama.cpp makes them
	// user-defined whatever the file says.
	userDefinedTexts = []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}
)

// findEOG completes the special tokens and fills the end-of-generation set
// the way llama.cpp's vocabulary loader does:
//   - an EOT, EOM or FIM id the metadata does not give is a token whose
//     text is a known marker for it (llama.cpp takes the first it meets in
//     hash order; here the first in the list of markers, so that
//     <|eot_id|> wins over <|end_of_text|>);
//   - the EOG set is the FIM pad, repo and file-separator tokens, every
//     token whose text is a known end-of-turn marker, EOS, EOT and EOM;
//   - tokens found by their text become control tokens (only: a normal
//     or user-defined one loses that type, as in llama.cpp);
//   - two model-family workarounds: with <|return|> and <|call|> (gpt-oss)
//     or <|call(s)|> and <|flush|> (solar-open), <|end|> does not end
//     generation and is user-defined; with <|tool_response> (gemma 4),
//     </s> does not end generation and is a normal token.
func (t *Tokenizer) findEOG(v Vocab) {
	control := func(id int32) {
		// Replaced, not added to: a normal token so found is no longer
		// normal, which keeps it out of the unigram model's search.
		if t.attrs[id]&attrControl == 0 {
			t.attrs[id] = attrControl
		}
	}
	find := func(id int32, texts []string) int32 {
		if id >= 0 {
			return id
		}
		for _, s := range texts {
			if j, ok := t.ids[s]; ok {
				control(j)
				return j
			}
		}
		return -1
	}
	t.eot = find(v.EOT, eotTexts)
	eom := find(v.EOM, eomTexts)
	t.fim.Pre = find(v.FIMPre, fimPreTexts)
	t.fim.Suf = find(v.FIMSuf, fimSufTexts)
	t.fim.Mid = find(v.FIMMid, fimMidTexts)
	t.fim.Pad = find(v.FIMPad, fimPadTexts)
	t.fim.Rep = find(v.FIMRep, fimRepTexts)
	t.fim.Sep = find(v.FIMSep, fimSepTexts)
	eog := map[int32]bool{}
	for _, id := range []int32{t.fim.Pad, t.fim.Rep, t.fim.Sep} {
		if id >= 0 {
			eog[id] = true
		}
	}
	for _, s := range eogTexts {
		if j, ok := t.ids[s]; ok {
			eog[j] = true
			control(j)
		}
	}
	for _, s := range userDefinedTexts {
		if j, ok := t.ids[s]; ok {
			t.attrs[j] = attrUserDefined
		}
	}
	for _, id := range []int32{t.eos, t.eot, eom} {
		if id >= 0 {
			eog[id] = true
		}
	}
	in := func(s string) (int32, bool) {
		j, ok := t.ids[s]
		return j, ok && eog[j]
	}
	_, ret := in("<|return|>")
	_, call := in("<|call|>")
	_, calls := in("<|calls|>")
	_, flush := in("<|flush|>")
	if end, ok := in("<|end|>"); ok && ((ret && (call || calls)) || ((call || calls) && flush)) {
		delete(eog, end)
		t.attrs[end] = attrUserDefined
	}
	if _, tool := in("<|tool_response>"); tool {
		if s, ok := in("</s>"); ok {
			delete(eog, s)
			t.attrs[s] = attrNormal
		}
	}
	t.eog = make([]int32, 0, len(eog))
	for id := range eog {
		t.eog = append(t.eog, id)
	}
	slices.Sort(t.eog)
}

// markStripped sets llama.cpp's per-model whitespace stripping around
// special tokens, which it keys on the model, pre-tokenizer and
// architecture names.
func (t *Tokenizer) markStripped(v Vocab) {
	set := func(text string, a uint16, on bool) {
		if id, ok := t.ids[text]; ok {
			if on {
				t.attrs[id] |= a
			} else {
				t.attrs[id] &^= a
			}
		}
	}
	name := strings.ToLower(v.Name)
	contains := func(s string, subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case contains(v.Pre, "jina-v2-de", "jina-v2-es", "jina-v2-code") || contains(v.Arch, "nomic-bert-moe", "jina-bert-v3"):
		set("<mask>", attrLStrip, true)
	case contains(name, "phi-3", "phi3"):
		for _, id := range t.special {
			t.attrs[id] |= attrRStrip
		}
		set("</s>", attrRStrip, true)
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			set(s, attrRStrip, false)
		}
	case contains(name, "modern-bert"):
		set("[MASK]", attrLStrip, true)
	}
}

// Size returns the number of tokens in the vocabulary.
func (t *Tokenizer) Size() int { return len(t.tokens) }

// BOS returns the beginning-of-sequence token, or -1 if there is none.
func (t *Tokenizer) BOS() int32 { return t.bos }

// FIM are a vocabulary's fill-in-the-middle token ids, -1 when absent:
// the prefix, suffix and middle markers, the padding, and the repository
// and file separators of the repo-level pattern.
type FIM struct {
	Pre, Suf, Mid, Pad, Rep, Sep int32
}

// FIM returns the fill-in-the-middle tokens: the metadata's, else the
// tokens whose text is a known marker for them (as llama.cpp finds them).
func (t *Tokenizer) FIM() FIM { return t.fim }

// EOS returns the end-of-sequence token, or -1 if there is none.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT returns the end-of-turn token, or -1 if there is none. It is taken
// from the metadata or else recognised by its text (<|eot_id|>, <|im_end|>,
// <end_of_turn>, <|endoftext|> …).
func (t *Tokenizer) EOT() int32 { return t.eot }

// AddBOS reports whether Encode with addSpecial puts BOS first.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// AddEOS reports whether Encode with addSpecial puts EOS last.
func (t *Tokenizer) AddEOS() bool { return t.addEOS }

// SEP returns the separator token ([SEP], </s>), or -1 if there is none.
func (t *Tokenizer) SEP() int32 { return t.sep }

// AddSEP reports whether the vocabulary asks for SEP between the two
// texts of a pair (tokenizer.ggml.add_sep_token; WordPiece's default), as
// a reranker's query and document are joined.
func (t *Tokenizer) AddSEP() bool { return t.addSEP }

// End is the token Encode(…, true) appends after a text: EOS when the
// vocabulary adds it, a WordPiece vocabulary's [SEP]; -1 for none.
func (t *Tokenizer) End() int32 {
	switch {
	case t.kind == kindWPM:
		return t.sep
	case t.addEOS:
		return t.eos
	}
	return -1
}

// IsEOG reports whether generation should stop after id: EOS, EOT, EOM and
// the other end-of-generation tokens llama.cpp recognises (see EOG).
func (t *Tokenizer) IsEOG(id int32) bool {
	_, ok := slices.BinarySearch(t.eog, id)
	return ok
}

// EOG returns every end-of-generation token in ascending order: EOS, EOT,
// EOM, the fill-in-the-middle pad, repo and file-separator tokens, and
// every token whose text llama.cpp treats as the end of a turn
// (<|im_end|>, <end_of_turn>, <|eot_id|>, <|endoftext|>, </s>, …). The
// slice is a copy.
func (t *Tokenizer) EOG() []int32 { return slices.Clone(t.eog) }

// IsControl reports whether id is a control token (BOS, EOS, chat markers
// and the like). Control tokens have no text in Decode.
func (t *Tokenizer) IsControl(id int32) bool {
	return id >= 0 && int(id) < len(t.attrs) && t.attrs[id]&attrControl != 0
}

// Text returns the raw vocabulary text of id (with SPM's "▁" and GPT-2's
// byte alphabet left as they are), or "" for an invalid id.
func (t *Tokenizer) Text(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// Warnings returns what was wrong with the vocabulary but tolerated, as
// llama.cpp tolerates it (for example a special token id outside the
// vocabulary, replaced by the default). Callers may log it.
func (t *Tokenizer) Warnings() []string { return slices.Clone(t.warnings) }
