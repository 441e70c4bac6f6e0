package callgrammar

import "github.com/lowmem/llm/internal/jsonprefix"

// Filter says which tokens may come next so that the output stays the
// start of the call a Grammar allows, and follows the tokens chosen. It
// implements sampler.Allower. A question feeds the token's text to a
// copy of the machine, once its first byte is one the machine takes where
// it stands (settled for the 256 bytes once a position): a sampler asks
// about the whole vocabulary only when the token it drew is refused, and
// most of it is then refused by its first byte. A Filter is for one
// generation, and not safe for concurrent use.
type Filter struct {
	v        jsonprefix.Pieces
	m, trial Machine
	ready    bool      // firstOK is m's
	firstOK  [256]bool // the bytes m takes next
}

// NewFilter returns a Filter for output that has not begun, reading
// tokens' texts from v.
func NewFilter(v jsonprefix.Pieces, g *Grammar) *Filter {
	return &Filter{v: v, m: NewMachine(g)}
}

// Allowed reports whether token id may come next: it adds text, and the
// output with that text is still the start of the call. A token that adds
// no text (end of generation included) is never allowed: the output ends
// where the call is complete (Done).
func (f *Filter) Allowed(id int32) bool {
	p := f.v.OutputPiece(id)
	if len(p) == 0 {
		return false
	}
	if f.m.plainText(p) {
		return true
	}
	if !f.ready {
		for b := range f.firstOK {
			f.trial.CopyFrom(&f.m)
			f.firstOK[b] = f.trial.step(byte(b))
		}
		f.ready = true
	}
	if !f.firstOK[p[0]] {
		return false
	}
	f.trial.CopyFrom(&f.m)
	return f.trial.Write(p)
}

// Accept moves past token id and reports whether it was allowed; a token
// that was not leaves the Filter where it was.
func (f *Filter) Accept(id int32) bool {
	p := f.v.OutputPiece(id)
	f.trial.CopyFrom(&f.m)
	if len(p) == 0 || !f.trial.Write(p) {
		return false
	}
	f.m.CopyFrom(&f.trial)
	f.ready = false
	return true
}

// Done reports whether the output is a complete call.
func (f *Filter) Done() bool { return f.m.Done() }
