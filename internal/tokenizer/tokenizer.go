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
// tools may fill it by hand.
type Vocab struct {
	// Model is tokenizer.ggml.model: "llama" for SentencePiece BPE (SPM)
	// or "gpt2" for byte-level BPE.
	Model string
	// Pre is tokenizer.ggml.pre, the pre-tokenizer of a "gpt2" vocabulary
	// ("gpt-2", "llama3", "qwen2", …). Empty means "default". Ignored for SPM.
	Pre string
	// Name is general.name. llama.cpp uses it for one quirk: in Phi-3
	// models whitespace after a special token is dropped.
	Name string

	Tokens []string  // token texts, indexed by id
	Scores []float32 // SPM merge priorities; nil means all 0
	Types  []int32   // Type* per token; nil means all TypeNormal
	Merges []string  // BPE merges, "left right", highest priority first

	// Special token ids, -1 when absent.
	BOS, EOS, UNK, PAD, EOT, EOM, SEP int32

	AddBOS         bool // Encode(…, true) starts with BOS
	AddEOS         bool // Encode(…, true) ends with EOS
	AddSpacePrefix bool // SPM: a space is put before the text
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
)

// Tokenizer converts between text and token ids exactly as llama.cpp does
// for the same vocabulary. It is safe for concurrent use.
type Tokenizer struct {
	kind   kind
	tokens []string
	scores []float32
	attrs  []uint16
	ids    map[string]int32

	bos, eos, unk, eot int32
	addBOS, addEOS     bool
	addSpacePrefix     bool
	cleanSpaces        bool // BPE: llama.cpp's clean-up of " ." " 's" … in Decode

	eog     map[int32]bool
	special []int32 // control, user-defined and unknown tokens, longest text first

	pieces    []byte  // Piece(id) of every token, concatenated
	pieceOffs []int32 // piece of id i is pieces[pieceOffs[i]:pieceOffs[i+1]]

	byteTok [256]int32 // SPM byte fallback: token of each byte, -1 if none

	// BPE only.
	pre          *preTokenizer
	merges       map[string]int32 // "left right" → rank
	ignoreMerges bool             // a pre-split word that is a token is used whole

	pool sync.Pool // *scratch
}

// New builds a Tokenizer from v. It returns an error wrapping ErrBadVocab
// when v is inconsistent and ErrUnsupported when its Model or Pre is not
// implemented.
func New(v Vocab) (*Tokenizer, error) {
	n := len(v.Tokens)
	if n == 0 {
		return nil, fmt.Errorf("%w: no tokens", ErrBadVocab)
	}
	if n > 1<<31-2 {
		return nil, fmt.Errorf("%w: %d tokens", ErrBadVocab, n)
	}
	if v.Scores != nil && len(v.Scores) < n {
		return nil, fmt.Errorf("%w: %d scores for %d tokens", ErrBadVocab, len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) < n {
		return nil, fmt.Errorf("%w: %d token types for %d tokens", ErrBadVocab, len(v.Types), n)
	}
	t := &Tokenizer{
		tokens:         make([]string, n),
		scores:         make([]float32, n),
		attrs:          make([]uint16, n),
		ids:            make(map[string]int32, n),
		addBOS:         v.AddBOS,
		addEOS:         v.AddEOS,
		addSpacePrefix: v.AddSpacePrefix,
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
		for i, m := range v.Merges {
			if _, dup := t.merges[m]; !dup {
				t.merges[m] = int32(i)
			}
		}
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
		if v.Scores != nil {
			t.scores[i] = v.Scores[i]
		}
		ty := int32(TypeNormal)
		if v.Types != nil {
			ty = v.Types[i]
		}
		t.attrs[i] = typeAttr(ty)
	}

	ids := [...]struct {
		name string
		id   int32
		dst  *int32
	}{
		{"BOS", v.BOS, &t.bos}, {"EOS", v.EOS, &t.eos}, {"UNK", v.UNK, &t.unk}, {"EOT", v.EOT, &t.eot},
		{"PAD", v.PAD, nil}, {"EOM", v.EOM, nil}, {"SEP", v.SEP, nil},
	}
	for _, s := range ids {
		if s.id < -1 || s.id >= int32(n) {
			return nil, fmt.Errorf("%w: %s id %d out of range [0, %d)", ErrBadVocab, s.name, s.id, n)
		}
		if s.dst != nil {
			*s.dst = s.id
		}
	}

	t.findEOG(v.EOM)
	t.markStripped(v.Name, v.Pre)

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

	t.buildPieces()
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

// Texts by which llama.cpp (at the commit the tests were made with)
// recognises end-of-turn and fill-in-the-middle tokens that the metadata
// does not name.
var (
	eotTexts    = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>"}
	eomTexts    = []string{"<|eom_id|>"}
	fimPreTexts = []string{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>"}
	fimSufTexts = []string{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>"}
	fimMidTexts = []string{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>"}
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}
	fimSepTexts = []string{"<|file_sep|>"}
	eogTexts    = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>"}
)

// findEOG fills the end-of-generation set the way llama.cpp's vocabulary
// loader does: EOS, EOT and EOM, FIM pad/repo/separator tokens, and every
// token whose text is a known end-of-turn marker. Tokens found by their text
// become control tokens, as in llama.cpp.
func (t *Tokenizer) findEOG(eom int32) {
	find := func(id int32, texts []string) int32 {
		if id >= 0 {
			return id
		}
		for _, s := range texts {
			if j, ok := t.ids[s]; ok {
				t.attrs[j] |= attrControl
				return j
			}
		}
		return -1
	}
	t.eot = find(t.eot, eotTexts)
	eom = find(eom, eomTexts)
	find(-1, fimPreTexts)
	find(-1, fimSufTexts)
	find(-1, fimMidTexts)
	t.eog = make(map[int32]bool)
	for _, texts := range [][]string{fimPadTexts, fimRepTexts, fimSepTexts} {
		if j := find(-1, texts); j >= 0 {
			t.eog[j] = true
		}
	}
	for _, s := range eogTexts {
		if j, ok := t.ids[s]; ok {
			t.eog[j] = true
			t.attrs[j] |= attrControl
		}
	}
	for _, id := range []int32{t.eos, t.eot, eom} {
		if id >= 0 {
			t.eog[id] = true
		}
	}
}

// markStripped sets llama.cpp's per-model whitespace stripping around
// special tokens, which it keys on the model and pre-tokenizer names.
func (t *Tokenizer) markStripped(name, pre string) {
	set := func(text string, a uint16, on bool) {
		if id, ok := t.ids[text]; ok {
			if on {
				t.attrs[id] |= a
			} else {
				t.attrs[id] &^= a
			}
		}
	}
	name = strings.ToLower(name)
	switch {
	case strings.Contains(pre, "jina-v2-de") || strings.Contains(pre, "jina-v2-es") || strings.Contains(pre, "jina-v2-code"):
		set("<mask>", attrLStrip, true)
	case strings.Contains(name, "phi-3") || strings.Contains(name, "phi3"):
		for i, a := range t.attrs {
			if a&(attrControl|attrUserDefined|attrUnknown) != 0 {
				t.attrs[i] |= attrRStrip
			}
		}
		set("</s>", attrRStrip, true)
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			set(s, attrRStrip, false)
		}
	}
}

// Size returns the number of tokens in the vocabulary.
func (t *Tokenizer) Size() int { return len(t.tokens) }

// BOS returns the beginning-of-sequence token, or -1 if there is none.
func (t *Tokenizer) BOS() int32 { return t.bos }

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

// IsEOG reports whether generation should stop after id: EOS, EOT, and the
// other end-of-turn tokens llama.cpp recognises.
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

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
