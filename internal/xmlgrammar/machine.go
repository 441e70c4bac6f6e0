package xmlgrammar

import "github.com/lowmem/llm/internal/jsonprefix"

// state is where a Machine stands in the call.
type state uint8

const (
	sLit       state = iota // inside a fixed text (lit), then goes to then
	sToolName               // the function's name, ended by '>'
	sParams                 // before <parameter=… or </function>
	sParamsLT               // after that '<': 'p' or '/'
	sParamName              // a parameter's name, ended by '>'
	sText                   // a free text value, ended by the terminator
	sChoice                 // a value that is one of the parameter's choices
	sNumber                 // a JSON number value
	sObject                 // a JSON object value
	sDone                   // the call is complete: nothing may follow
)

// numState is where a number stands: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
type numState uint8

const (
	nStart numState = iota
	nMinus
	nZero
	nInt
	nDot
	nFrac
	nExp
	nExpSign
	nExpDigits
)

// complete reports whether a number may end in this state.
func (n numState) complete() bool { return n == nZero || n == nInt || n == nFrac || n == nExpDigits }

// Machine recognizes the prefixes of one call that a Grammar allows, a
// byte at a time. Copy one with CopyFrom.
type Machine struct {
	pos
	obj jsonprefix.SchemaMachine // sObject: the object value
}

// pos is the part of a Machine that is not the object value's machine.
type pos struct {
	g        *Grammar
	st, then state
	lit      string // sLit: the text, of which at bytes are read
	at       int
	tool     int    // the tool named, once it is
	param    int    // the parameter whose value is read
	seen     uint64 // bit i: the tool's parameter i has been given
	cands    uint64 // sToolName, sParamName, sChoice: the texts still matching at bytes in
	term     int    // sText: bytes of the terminator matched
	num      numState
	intOnly  bool
}

// NewMachine returns a machine before the call.
func NewMachine(g *Grammar) Machine {
	m := Machine{pos: pos{g: g}}
	m.expect(g.open+"\n<function=", sToolName)
	return m
}

// CopyFrom makes m the same as o, copying o's object value's machine
// only while it reads one.
func (m *Machine) CopyFrom(o *Machine) {
	m.pos = o.pos
	if o.st == sObject {
		m.obj.CopyFrom(&o.obj)
	}
}

// Done reports whether the call is complete.
func (m *Machine) Done() bool { return m.st == sDone }

// Write feeds p and reports whether the text so far is still the start of
// a call the grammar allows. On false the machine is left where the
// offending byte found it.
func (m *Machine) Write(p []byte) bool {
	for _, b := range p {
		if !m.Step(b) {
			return false
		}
	}
	return true
}

// expect makes the machine read lit, then enter next.
func (m *Machine) expect(lit string, next state) {
	m.st, m.lit, m.at, m.then = sLit, lit, 0, next
	if lit == "" {
		m.enter(next)
	}
}

// enter sets up state s.
func (m *Machine) enter(s state) {
	m.st, m.at = s, 0
	switch s {
	case sToolName:
		m.cands = mask(len(m.g.names))
	case sParamName:
		m.cands = mask(len(m.g.tools[m.tool].names)) &^ m.seen
	case sText:
		m.term = 0
	case sChoice:
		m.cands = mask(len(m.g.tools[m.tool].params[m.param].choices))
	case sNumber:
		m.num, m.intOnly = nStart, m.g.tools[m.tool].params[m.param].kind == kInteger
	case sObject:
		m.obj = jsonprefix.NewSchemaMachine(m.g.tools[m.tool].params[m.param].object)
	}
}

func mask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// Step feeds one byte and reports whether the text can still become a call
// the grammar allows; on false the machine has not moved.
func (m *Machine) Step(b byte) bool {
	g := m.g
	switch m.st {
	case sLit:
		if b != m.lit[m.at] {
			return false
		}
		if m.at++; m.at == len(m.lit) {
			m.enter(m.then)
		}
		return true
	case sToolName:
		i, ok := m.choose(g.names, b, '>')
		if ok && i >= 0 {
			m.tool, m.seen = i, 0
			m.expect("\n", sParams)
		}
		return ok
	case sParams:
		if b != '<' {
			return false
		}
		m.st = sParamsLT
		return true
	case sParamsLT:
		t := &g.tools[m.tool]
		switch {
		case b == 'p' && mask(len(t.names))&^m.seen != 0:
			m.expect("arameter=", sParamName)
			return true
		case b == '/' && t.required&^m.seen == 0:
			m.expect("function>\n"+g.close, sDone)
			return true
		}
		return false
	case sParamName:
		t := &g.tools[m.tool]
		i, ok := m.choose(t.names, b, '>')
		if ok && i >= 0 {
			m.param, m.seen = i, m.seen|1<<i
			value := valueState(t.params[i].kind)
			if g.term[0] == '\n' {
				m.expect("\n", value)
			} else {
				m.enter(value)
			}
		}
		return ok
	case sText:
		switch {
		case b == g.term[m.term]:
			if m.term++; m.term == len(g.term) {
				m.expect("\n", sParams)
			}
		case b == g.term[0]: // the terminator's first byte appears in it only there
			m.term = 1
		default:
			m.term = 0
		}
		return true
	case sChoice:
		i, ok := m.choose(g.tools[m.tool].params[m.param].choices, b, g.term[0])
		if ok && i >= 0 {
			m.expect(g.term[1:]+"\n", sParams)
		}
		return ok
	case sNumber:
		if next, ok := stepNumber(m.num, b, m.intOnly); ok {
			m.num = next
			return true
		}
		if b == g.term[0] && m.num.complete() {
			m.expect(g.term[1:]+"\n", sParams)
			return true
		}
		return false
	case sObject:
		if m.obj.Done() {
			if b != g.term[0] {
				return false
			}
			m.expect(g.term[1:]+"\n", sParams)
			return true
		}
		return m.obj.Step(b)
	}
	return false
}

func valueState(k kind) state {
	switch k {
	case kObject:
		return sObject
	case kNumber, kInteger:
		return sNumber
	case kChoice:
		return sChoice
	}
	return sText
}

// choose reads byte b of one of texts (m.cands those still matching, m.at
// bytes in), which end is the byte after: the index of the text b ends,
// -1 while it goes on, and whether b is allowed.
func (m *Machine) choose(texts []string, b, end byte) (int, bool) {
	if b == end {
		for i, t := range texts {
			if m.cands>>i&1 == 1 && len(t) == m.at {
				return i, true
			}
		}
		return -1, false
	}
	var left uint64
	for i, t := range texts {
		if m.cands>>i&1 == 1 && m.at < len(t) && t[m.at] == b {
			left |= 1 << i
		}
	}
	if left == 0 {
		return -1, false
	}
	m.cands = left
	m.at++
	return -1, true
}

// stepNumber is the state of a JSON number after byte b, and whether b
// continues it (intOnly: no fraction or exponent).
func stepNumber(n numState, b byte, intOnly bool) (numState, bool) {
	digit := b >= '0' && b <= '9'
	switch n {
	case nStart:
		switch {
		case b == '-':
			return nMinus, true
		case b == '0':
			return nZero, true
		case digit:
			return nInt, true
		}
	case nMinus:
		switch {
		case b == '0':
			return nZero, true
		case digit:
			return nInt, true
		}
	case nZero, nInt:
		switch {
		case digit && n == nInt:
			return nInt, true
		case b == '.' && !intOnly:
			return nDot, true
		case (b == 'e' || b == 'E') && !intOnly:
			return nExp, true
		}
	case nDot, nFrac:
		switch {
		case digit:
			return nFrac, true
		case (b == 'e' || b == 'E') && n == nFrac:
			return nExp, true
		}
	case nExp:
		switch {
		case b == '+' || b == '-':
			return nExpSign, true
		case digit:
			return nExpDigits, true
		}
	case nExpSign, nExpDigits:
		if digit {
			return nExpDigits, true
		}
	}
	return n, false
}
