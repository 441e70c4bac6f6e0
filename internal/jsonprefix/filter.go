package jsonprefix

import (
	"bytes"
	"unicode/utf8"
	"unsafe"
)

// Pieces is the vocabulary as a Filter reads it: the text each token adds
// to the output, none for control tokens (tokenizer.Tokenizer.OutputPiece).
type Pieces interface {
	OutputPiece(id int32) []byte
}

// Filter says which tokens may come next so that the output stays the
// start of one JSON object (that a Schema allows, when it has one), and
// follows the tokens chosen. It implements sampler.Allower. A Filter is
// for one generation, and not safe for concurrent use.
type Filter struct {
	v     Pieces
	m     SchemaMachine
	trial SchemaMachine // where tokens are tried

	// What a sweep over the whole vocabulary reads instead of each
	// token's text: most tokens are settled by their first byte, and in a
	// string by being plain text.
	first []byte   // each token's first byte; 0, which no state takes, for no text
	lead  []byte   // its first byte that is not whitespace; ' ' for all whitespace
	plain []uint64 // bit id: the token's text may stand anywhere inside a string

	ready   bool      // firstOK, inText and between are those of m
	inText  bool      // m is inside a string, between characters
	between bool      // m is between JSON tokens, where whitespace changes nothing but its count
	firstOK [256]bool // the bytes m takes next
}

// FilterBytes is what NewFilter allocates for a vocabulary of size tokens:
// the Filter, two bytes a token and a bit, and for each of its three
// tables a page of the allocator's rounding. The memory planner counts it
// for every session.
func FilterBytes(size int) int64 {
	return int64(unsafe.Sizeof(Filter{})) + 2*int64(size) + 8*int64((size+63)/64) + 3*8192
}

// NewFilter returns a Filter for output that has not begun, over the
// tokens 0 to size-1 of v, for any JSON object (s nil) or one that s
// allows. It reads each token's text once, here, so that sweeping the
// vocabulary later is cheap.
func NewFilter(v Pieces, size int, s *Schema) *Filter {
	f := &Filter{v: v, m: NewSchemaMachine(s), first: make([]byte, size), lead: make([]byte, size), plain: make([]uint64, (size+63)/64)}
	for id := range size {
		p := v.OutputPiece(int32(id))
		if len(p) == 0 {
			continue
		}
		f.first[id] = p[0]
		f.lead[id] = ' '
		if i := bytes.IndexFunc(p, func(r rune) bool { return !isSpace(r) }); i >= 0 {
			f.lead[id] = p[i]
		}
		if plainText(p) {
			f.plain[id/64] |= 1 << (id % 64)
		}
	}
	return f
}

// plainText reports whether p is whole UTF-8 characters with no control
// character, quote or backslash: text a string takes as it is.
func plainText(p []byte) bool {
	for _, b := range p {
		if b < 0x20 || b == '"' || b == '\\' {
			return false
		}
	}
	return utf8.Valid(p)
}

// Allowed reports whether token id may come next: it adds text, and the
// output with that text is still the start of a JSON object. A token that
// adds no text (a control token, end of generation included) is never
// allowed: the output ends where the object is complete (Done).
func (f *Filter) Allowed(id int32) bool {
	if !f.ready {
		f.prepare()
	}
	if uint(id) < uint(len(f.first)) {
		b := f.first[id]
		if f.between {
			b = f.lead[id]
		}
		if !f.firstOK[b] {
			return false
		}
		if f.inText && f.plain[id/64]>>(id%64)&1 == 1 {
			return true
		}
	}
	p := f.v.OutputPiece(id)
	if len(p) == 0 {
		return false
	}
	f.trial.CopyFrom(&f.m)
	return f.trial.Write(p)
}

// prepare settles which first bytes the machine takes where it stands.
func (f *Filter) prepare() {
	for b := range f.firstOK {
		f.trial.CopyFrom(&f.m)
		f.firstOK[b] = f.trial.Step(byte(b))
	}
	f.inText = f.m.freeText()
	// Between JSON tokens a token's leading whitespace only counts towards
	// the run (and the schema has nothing to say of it): its first other
	// byte meets the state m is in now.
	switch f.m.syn.st {
	case stObjOpen, stKey, stColon, stValue, stArrOpen, stAfter:
		f.between = true
	default:
		f.between = false
	}
	f.ready = true
}

// Accept moves past token id and reports whether it was allowed; a token
// that was not leaves the Filter where it was.
func (f *Filter) Accept(id int32) bool {
	p := f.v.OutputPiece(id)
	if len(p) == 0 {
		return false
	}
	f.trial.CopyFrom(&f.m)
	if !f.trial.Write(p) {
		return false
	}
	f.m.CopyFrom(&f.trial)
	f.ready = false
	return true
}

// Done reports whether the output is a complete JSON object.
func (f *Filter) Done() bool { return f.m.Done() }

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }
