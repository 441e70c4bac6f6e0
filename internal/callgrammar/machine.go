package callgrammar

import "github.com/lowmem/llm/internal/jsonprefix"

// gemma4Quote stands around a Gemma 4 string; xmlParamEnd ends an XML
// form's value.
const (
	gemma4Quote = `<|"|>`
	xmlParamEnd = "</parameter>"
	glmValueEnd = "</arg_value>"
)

// state is where a Machine stands in the call.
type state uint8

const (
	sLit       state = iota // inside a fixed text (lit), then goes to then
	sToolName               // the function's name, ended by '>' (XML), '{' (Gemma 4), '<' or a line break (GLM)
	sParams                 // XML, GLM: before <parameter=… or </function>, <arg_key> or </tool_call>
	sParamsLT               // XML, GLM: after that '<': 'p' or 'a', or '/'
	sFirst                  // Gemma 4: after '{': a key or '}'
	sAfter                  // Gemma 4: after a value: ',' or '}'
	sParamName              // a parameter's name, ended by '>' (XML), ':' (Gemma 4) or '<' (GLM)
	sText                   // a free text value (a Gemma 4 string's), ended by the terminator
	sChoice                 // a value that is one of the parameter's choices
	sNumber                 // a JSON number value
	sObject                 // XML: a JSON object value
	sAny                    // Gemma 4: any value of its notation (g says where)
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

// gState is where a Gemma 4 value of any kind stands.
type gState uint8

const (
	gValue   gState = iota // a value begins
	gString                // inside a string (Machine.term: quote bytes matched)
	gQuote                 // inside a string's opening quote (Machine.at bytes read)
	gNumber                // inside a number (Machine.num)
	gLiteral               // inside true, false or null (Machine.cands, Machine.at)
	gKeyNext               // in a dict, after '{' or ',': a key (or '}' right after '{')
	gKey                   // inside a key: ended by ':'
	gNext                  // after a value inside a container: ',' or its close
)

var literals = []string{"true", "false", "null"}

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
	cands    uint64 // sToolName, sParamName, sChoice, gLiteral: the texts still matching at bytes in
	term     int    // sText, gString: bytes of the terminator matched
	bare     int    // sText in Qwen's layout: bytes of a </parameter> matched
	num      numState
	intOnly  bool
	first    bool // gKeyNext: right after '{', where '}' may close
	// sAny: where the value stands, and its open containers (a dict is
	// an object there).
	gst  gState
	open jsonprefix.Nesting
}

// NewMachine returns a machine before the call.
func NewMachine(g *Grammar) Machine {
	m := Machine{pos: pos{g: g}}
	switch g.syntax {
	case Gemma4:
		m.expect(g.open+"call:", sToolName)
	case GLM:
		m.expect(g.open, sToolName)
	default:
		m.expect(g.open+"\n"+xmlTags[g.syntax].function, sToolName)
	}
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

// plainText reports whether m, inside a free text value with nothing of
// its terminator matched, takes p whole and stays inside it: p holds no
// byte that may begin a terminator ('<' begins each, or a line break).
func (m *Machine) plainText(p []byte) bool {
	if m.st != sText || m.term != 0 || m.bare != 0 {
		return false
	}
	for _, b := range p {
		if b == '<' || b == '\n' {
			return false
		}
	}
	return true
}

// Done reports whether the call is complete.
func (m *Machine) Done() bool { return m.st == sDone }

// Write feeds p and reports whether the text so far is still the start of
// a call the grammar allows. On false the machine is left partway, of no
// further use (a Filter tries tokens on a copy): unlike Step, Write does
// not save the machine before each byte.
func (m *Machine) Write(p []byte) bool {
	for _, b := range p {
		if !m.step(b) {
			return false
		}
	}
	return true
}

// Step feeds one byte and reports whether the text can still become a call
// the grammar allows; on false the machine has not moved.
func (m *Machine) Step(b byte) bool {
	saved := m.pos
	if m.step(b) {
		return true
	}
	m.pos = saved // the object value's machine does not move on false
	return false
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
		m.term, m.bare = 0, 0
	case sChoice:
		m.cands = mask(len(m.g.tools[m.tool].params[m.param].choices))
	case sNumber:
		m.num, m.intOnly = nStart, m.g.tools[m.tool].params[m.param].kind == kInteger
	case sObject:
		m.obj = jsonprefix.NewSchemaMachine(m.g.tools[m.tool].params[m.param].object)
	case sAny:
		m.gst, m.open = gValue, jsonprefix.Nesting{}
	}
}

func mask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// step is Step, free to move the machine's pos before it refuses.
func (m *Machine) step(b byte) bool {
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
		i, ok := m.choose(g.names, b, g.nameEnd())
		if ok && i >= 0 {
			m.tool, m.seen = i, 0
			switch {
			case g.syntax == Gemma4:
				m.enter(sFirst)
			case g.syntax == GLM && g.sep == "":
				m.st = sParamsLT // the '<' that ended the name begins what follows
			case g.syntax == GLM:
				m.enter(sParams)
			default:
				m.expect(xmlTags[g.syntax].nameEnd[1:]+"\n", sParams)
			}
		}
		return ok
	case sParams:
		if b != '<' {
			return false
		}
		m.st = sParamsLT
		return true
	case sParamsLT:
		switch {
		case b == 'p' && (g.syntax == XML || g.syntax == MiniMax) && m.paramsLeft():
			m.expect(xmlTags[g.syntax].param, sParamName)
			return true
		case b == 'a' && g.syntax == GLM && m.paramsLeft():
			m.expect("rg_key>", sParamName)
			return true
		case b == '/' && g.syntax == GLM && m.requiredGiven():
			m.expect(g.close[min(2, len(g.close)):], sDone)
			return true
		case b == '/' && m.requiredGiven():
			m.expect(xmlTags[g.syntax].end+"\n"+g.close, sDone)
			return true
		}
		return false
	case sFirst, sAfter:
		switch {
		case b == '}' && m.requiredGiven():
			m.expect(g.close, sDone)
			return true
		case b == ',' && m.st == sAfter && m.paramsLeft():
			m.enter(sParamName)
			return true
		case m.st == sFirst && m.paramsLeft():
			m.enter(sParamName)
			return m.step(b)
		}
		return false
	case sParamName:
		return m.paramName(b)
	case sText:
		if g.term[0] == '\n' {
			// The parser ends a value at the first </parameter>: one
			// without its line break cannot stand inside the text.
			switch {
			case b == xmlParamEnd[m.bare]:
				m.bare++
			case b == xmlParamEnd[0]:
				m.bare = 1
			default:
				m.bare = 0
			}
			if m.bare == len(xmlParamEnd) && m.term != len(g.term)-1 {
				return false
			}
		}
		switch {
		case b == g.term[m.term]:
			if m.term++; m.term == len(g.term) {
				if g.syntax == Gemma4 {
					m.enter(sAfter)
				} else {
					m.expect(g.sep, sParams)
				}
			}
		case b == g.term[0]: // the terminator's first byte appears in it only there
			m.term = 1
		default:
			m.term = 0
		}
		return true
	case sChoice:
		p := &g.tools[m.tool].params[m.param]
		if p.kind == kBool && g.syntax == Gemma4 { // ended by ',' or '}'
			if m.advance(p.choices, b) {
				return true
			}
			if m.complete(p.choices) < 0 {
				return false
			}
			m.enter(sAfter)
			return m.step(b)
		}
		i, ok := m.choose(p.choices, b, g.term[0])
		if ok && i >= 0 {
			if g.syntax == Gemma4 {
				m.expect(g.term[1:], sAfter)
			} else {
				m.expect(g.term[1:]+g.sep, sParams)
			}
		}
		return ok
	case sNumber:
		if next, ok := stepNumber(m.num, b, m.intOnly); ok {
			m.num = next
			return true
		}
		if !m.num.complete() {
			return false
		}
		if g.syntax == Gemma4 { // ',' or '}' ends it
			m.enter(sAfter)
			return m.step(b)
		}
		if b != g.term[0] {
			return false
		}
		m.expect(g.term[1:]+g.sep, sParams)
		return true
	case sObject:
		if m.obj.Done() {
			if b != g.term[0] {
				return false
			}
			m.expect(g.term[1:]+g.sep, sParams)
			return true
		}
		return m.obj.Step(b)
	case sAny:
		return m.anyValue(b)
	}
	return false
}

// nameEnd is the byte that ends a tool's name.
func (g *Grammar) nameEnd() byte {
	switch {
	case g.syntax == Gemma4:
		return '{'
	case g.syntax == GLM && g.sep == "":
		return '<'
	case g.syntax == GLM:
		return '\n'
	}
	return xmlTags[g.syntax].nameEnd[0]
}

// paramsLeft reports whether the tool has parameters not given yet.
func (m *Machine) paramsLeft() bool { return mask(len(m.g.tools[m.tool].names))&^m.seen != 0 }

// requiredGiven reports whether the tool's required parameters are given.
func (m *Machine) requiredGiven() bool { return m.g.tools[m.tool].required&^m.seen == 0 }

// paramName reads byte b of a parameter's name; the byte after it begins
// the value (after a line break in Qwen's layout, a quote for a Gemma 4
// string or enum, GLM's </arg_key> and <arg_value>).
func (m *Machine) paramName(b byte) bool {
	g, t := m.g, &m.g.tools[m.tool]
	var end byte
	switch g.syntax {
	case Gemma4:
		end = ':'
	case GLM:
		end = '<'
	default:
		end = xmlTags[g.syntax].keyEnd[0]
	}
	i, ok := m.choose(t.names, b, end)
	if !ok || i < 0 {
		return ok
	}
	m.param, m.seen = i, m.seen|1<<i
	k := t.params[i].kind
	switch {
	case g.syntax == GLM:
		m.expect("/arg_key>"+g.sep+"<arg_value>", valueState(k))
	case g.syntax == Gemma4 && (k == kString || k == kChoice):
		m.expect(gemma4Quote, valueState(k))
	case g.syntax == Gemma4:
		m.enter(valueState(k))
	case g.term[0] != '\n':
		m.expect(xmlTags[g.syntax].keyEnd[1:], valueState(k))
	default:
		m.expect(xmlTags[g.syntax].keyEnd[1:]+"\n", valueState(k))
	}
	return true
}

func valueState(k kind) state {
	switch k {
	case kObject:
		return sObject
	case kNumber, kInteger:
		return sNumber
	case kChoice, kBool:
		return sChoice
	case kAny:
		return sAny
	}
	return sText
}

// choose reads byte b of one of texts (m.cands those still matching, m.at
// bytes in), which end is the byte after: the index of the text b ends,
// -1 while it goes on, and whether b is allowed.
func (m *Machine) choose(texts []string, b, end byte) (int, bool) {
	if b == end {
		i := m.complete(texts)
		return i, i >= 0
	}
	return -1, m.advance(texts, b)
}

// complete is the index of the text of texts read whole, -1 for none.
func (m *Machine) complete(texts []string) int {
	for i, t := range texts {
		if m.cands>>i&1 == 1 && len(t) == m.at {
			return i
		}
	}
	return -1
}

// advance reads byte b of the texts still matching, and reports whether
// any goes on with it.
func (m *Machine) advance(texts []string, b byte) bool {
	var left uint64
	for i, t := range texts {
		if m.cands>>i&1 == 1 && m.at < len(t) && t[m.at] == b {
			left |= 1 << i
		}
	}
	if left == 0 {
		return false
	}
	m.cands = left
	m.at++
	return true
}

// anyValue reads byte b of a Gemma 4 value of any kind: a <|"|> string,
// a JSON number, true, false, null, a dict of bare keys, an array.
func (m *Machine) anyValue(b byte) bool {
	switch m.gst {
	case gValue:
		switch {
		case b == gemma4Quote[0]:
			m.gst, m.at = gQuote, 1
			return true
		case b == '{' || b == '[':
			m.gst, m.first = gNext, true
			if b == '{' {
				m.gst = gKeyNext
			}
			return m.open.Push(b == '{')
		case b == 't' || b == 'f' || b == 'n':
			m.gst, m.cands, m.at = gLiteral, mask(len(literals)), 0
			return m.advance(literals, b)
		}
		next, ok := stepNumber(nStart, b, false)
		m.gst, m.num = gNumber, next
		return ok
	case gQuote:
		if b != gemma4Quote[m.at] {
			return false
		}
		if m.at++; m.at == len(gemma4Quote) {
			m.gst, m.term = gString, 0
		}
		return true
	case gString:
		switch {
		case b == gemma4Quote[m.term]:
			if m.term++; m.term == len(gemma4Quote) {
				return m.anyDone()
			}
		case b == gemma4Quote[0]:
			m.term = 1
		default:
			m.term = 0
		}
		return true
	case gNumber:
		if next, ok := stepNumber(m.num, b, false); ok {
			m.num = next
			return true
		}
		return m.num.complete() && m.anyDone() && m.step(b)
	case gLiteral:
		if m.advance(literals, b) {
			return true
		}
		return m.complete(literals) >= 0 && m.anyDone() && m.step(b)
	case gKeyNext:
		switch b {
		case '}':
			return m.first && m.closeContainer()
		case ' ', '\t', '\n', ':', ',':
			return false
		}
		m.gst = gKey
		return true
	case gKey:
		switch b {
		case ':':
			m.gst = gValue
		case '}':
			return false
		}
		return true
	case gNext:
		inDict := m.open.InObject()
		closer := byte(']')
		if inDict {
			closer = '}'
		}
		switch {
		case b == closer:
			return m.closeContainer()
		case b == ',' && !m.first:
			m.gst = gValue
			if inDict {
				m.gst, m.first = gKeyNext, false
			}
			return true
		case m.first && !inDict: // an array's first value
			m.first = false
			m.gst = gValue
			return m.anyValue(b)
		}
		return false
	}
	return false
}

// closeContainer closes the innermost dict or array.
func (m *Machine) closeContainer() bool {
	m.open.Pop()
	return m.anyDone()
}

// anyDone goes on after a value inside sAny: at the top the parameter's
// value is complete, inside a container the container goes on.
func (m *Machine) anyDone() bool {
	if m.open.Depth() == 0 {
		m.enter(sAfter)
		return true
	}
	m.gst, m.first = gNext, false
	return true
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
