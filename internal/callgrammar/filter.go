package callgrammar

import "github.com/lowmem/llm/internal/jsonprefix"

// Filter says which tokens may come next so that the output stays the
// start of the call a Grammar allows, and follows the tokens chosen. It
// implements sampler.Allower. Each question feeds the token's text to a
// copy of the machine: a sampler asks about the vocabulary only when the
// token it drew is refused. A Filter is for one generation, and not safe
// for concurrent use.
type Filter struct {
	v        jsonprefix.Pieces
	m, trial Machine
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
	f.trial.CopyFrom(&f.m)
	return f.trial.Write(p)
}

// Accept moves past token id and reports whether it was allowed; a token
// that was not leaves the Filter where it was.
func (f *Filter) Accept(id int32) bool {
	if !f.Allowed(id) {
		return false
	}
	f.m.CopyFrom(&f.trial)
	return true
}

// Done reports whether the output is a complete call.
func (f *Filter) Done() bool { return f.m.Done() }
