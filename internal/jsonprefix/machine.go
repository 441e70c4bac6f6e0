package jsonprefix

// MaxDepth is how deep objects and arrays may nest, the outer object
// counting as one.
const MaxDepth = 64

// MaxSpace is the longest run of whitespace allowed between the tokens of
// the JSON text. A run holds at most one line feed and no carriage
// return, as in llama.cpp's JSON grammar: room for a line break and the
// indentation of pretty-printed JSON, none for a model to idle in. Inside
// strings whitespace is text and not counted.
const MaxSpace = 24

// newline marks, in Machine.space, a run that holds its line feed.
const newline = 0x80

// state is where the recognizer stands in the grammar.
type state uint8

const (
	stStart   state = iota // before the object: '{'
	stObjOpen              // after '{': whitespace, a key or '}'
	stKey                  // after ',' in an object: whitespace or a key
	stColon                // after a key: whitespace or ':'
	stValue                // after ':', or ',' in an array: whitespace or a value
	stArrOpen              // after '[': whitespace, a value or ']'
	stAfter                // after a value in a container: whitespace, ',' or the container's close
	stString               // inside a string
	stEscape               // after a backslash in a string
	stHex                  // inside \uXXXX
	stNumber               // inside a number (num says where)
	stLiteral              // inside true, false or null
	stDone                 // the object is complete: nothing may follow
)

// numState is where a number stands: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
type numState uint8

const (
	nMinus     numState = iota // "-"
	nZero                      // "0" or "-0": no more integer digits
	nInt                       // integer digits
	nDot                       // "."
	nFrac                      // fraction digits
	nExp                       // "e" or "E"
	nExpSign                   // the exponent's sign
	nExpDigits                 // exponent digits
)

// complete reports whether a number may end in this state.
func (n numState) complete() bool {
	return n == nZero || n == nInt || n == nFrac || n == nExpDigits
}

var literals = [...]string{"true", "false", "null"}

// Machine recognizes prefixes of one JSON object, a byte at a time. Its
// zero value stands before the object. It is a small value: copying it
// saves its position, which is how a filter tries a token's bytes without
// moving.
type Machine struct {
	st    state
	key   bool     // the string being read is an object key
	num   numState // with stNumber
	lit   uint8    // with stLiteral: which of literals
	at    uint8    // with stLiteral: bytes of it read; with stHex: digits left
	need  uint8    // continuation bytes a UTF-8 character in a string still needs
	lo    byte     // the range the next continuation byte must fall in
	hi    byte
	space uint8   // whitespace bytes in the current run, | newline once it holds a line feed
	open  Nesting // the containers open
}

// Done reports whether the object is complete.
func (m *Machine) Done() bool { return m.st == stDone }

// Write feeds p and reports whether the text so far is still the start of
// a JSON object. On false the machine is left where the offending byte
// found it, partway through p.
func (m *Machine) Write(p []byte) bool { return feed(m, p) }

// feed steps m through p until a byte is refused.
func feed[M interface{ Step(byte) bool }](m M, p []byte) bool {
	for _, b := range p {
		if !m.Step(b) {
			return false
		}
	}
	return true
}

// Step feeds one byte and reports whether the text is still the start of
// a JSON object; on false the machine has not moved.
func (m *Machine) Step(b byte) bool {
	switch m.st {
	case stString:
		return m.stringByte(b)
	case stEscape:
		switch b {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			m.st = stString
			return true
		case 'u':
			m.st, m.at = stHex, 4
			return true
		}
		return false
	case stHex:
		if !isHex(b) {
			return false
		}
		if m.at--; m.at == 0 {
			m.st = stString
		}
		return true
	case stNumber:
		if m.numberByte(b) {
			return true
		}
		if !m.num.complete() {
			return false
		}
		// b ends the number; it must be what may follow a value.
		saved := *m
		m.st = stAfter
		if m.Step(b) {
			return true
		}
		*m = saved
		return false
	case stLiteral:
		lit := literals[m.lit]
		if b != lit[m.at] {
			return false
		}
		if m.at++; int(m.at) == len(lit) {
			m.st = stAfter
		}
		return true
	case stDone:
		return false
	case stStart:
		// No whitespace before the object, as llama.cpp's JSON grammar:
		// a model would idle there.
		if b != '{' {
			return false
		}
		return m.push(true)
	}
	if b == ' ' || b == '\t' || b == '\n' {
		return spaceByte(&m.space, b)
	}
	switch m.st {
	case stObjOpen:
		if b == '}' {
			return m.close()
		}
		return m.startKey(b)
	case stKey:
		return m.startKey(b)
	case stColon:
		if b != ':' {
			return false
		}
		m.st, m.space = stValue, 0
		return true
	case stValue:
		return m.startValue(b)
	case stArrOpen:
		if b == ']' {
			return m.close()
		}
		return m.startValue(b)
	case stAfter:
		obj := m.open.InObject()
		switch {
		case b == ',' && obj:
			m.st, m.space = stKey, 0
			return true
		case b == ',':
			m.st, m.space = stValue, 0
			return true
		case b == '}' && obj, b == ']' && !obj:
			return m.close()
		}
	}
	return false
}

func (m *Machine) startKey(b byte) bool {
	if b != '"' {
		return false
	}
	m.st, m.key, m.space = stString, true, 0
	return true
}

// startValue begins the value whose first byte is b.
func (m *Machine) startValue(b byte) bool {
	switch {
	case b == '{':
		return m.push(true)
	case b == '[':
		return m.push(false)
	case b == '"':
		m.st, m.key = stString, false
	case b == '-':
		m.st, m.num = stNumber, nMinus
	case b == '0':
		m.st, m.num = stNumber, nZero
	case b >= '1' && b <= '9':
		m.st, m.num = stNumber, nInt
	case b == 't':
		m.st, m.lit, m.at = stLiteral, 0, 1
	case b == 'f':
		m.st, m.lit, m.at = stLiteral, 1, 1
	case b == 'n':
		m.st, m.lit, m.at = stLiteral, 2, 1
	default:
		return false
	}
	m.space = 0
	return true
}

func (m *Machine) push(obj bool) bool {
	if !m.open.Push(obj) {
		return false
	}
	m.st = stArrOpen
	if obj {
		m.st = stObjOpen
	}
	m.space = 0
	return true
}

func (m *Machine) close() bool {
	m.space = 0
	if m.open.Pop() == 0 {
		m.st = stDone
	} else {
		m.st = stAfter
	}
	return true
}

func (m *Machine) numberByte(b byte) bool {
	digit := b >= '0' && b <= '9'
	exp := b == 'e' || b == 'E'
	next := m.num
	switch m.num {
	case nMinus:
		switch {
		case b == '0':
			next = nZero
		case digit:
			next = nInt
		default:
			return false
		}
	case nZero, nInt:
		switch {
		case digit && m.num == nInt:
			next = nInt
		case b == '.':
			next = nDot
		case exp:
			next = nExp
		default:
			return false
		}
	case nDot, nFrac:
		switch {
		case digit:
			next = nFrac
		case exp && m.num == nFrac:
			next = nExp
		default:
			return false
		}
	case nExp:
		switch {
		case b == '+' || b == '-':
			next = nExpSign
		case digit:
			next = nExpDigits
		default:
			return false
		}
	case nExpSign, nExpDigits:
		if !digit {
			return false
		}
		next = nExpDigits
	}
	m.num = next
	return true
}

// stringByte reads a byte of a string: text (valid UTF-8, no control
// characters), an escape, or the closing quote.
func (m *Machine) stringByte(b byte) bool {
	if m.need > 0 {
		if b < m.lo || b > m.hi {
			return false
		}
		m.need--
		m.lo, m.hi = 0x80, 0xBF
		return true
	}
	// The ranges of a first byte and of the continuation byte after it
	// that leave out overlong forms and surrogates (RFC 3629, section 4).
	need, lo, hi := uint8(0), byte(0x80), byte(0xBF)
	switch {
	case b == '"':
		if m.key {
			m.st, m.space = stColon, 0
		} else {
			m.st = stAfter
		}
		return true
	case b == '\\':
		m.st = stEscape
		return true
	case b < 0x20:
		return false
	case b < 0x80:
		return true
	case b >= 0xC2 && b <= 0xDF:
		need = 1
	case b == 0xE0:
		need, lo = 2, 0xA0
	case b == 0xED:
		need, hi = 2, 0x9F
	case b >= 0xE1 && b <= 0xEF:
		need = 2
	case b == 0xF0:
		need, lo = 3, 0x90
	case b >= 0xF1 && b <= 0xF3:
		need = 3
	case b == 0xF4:
		need, hi = 3, 0x8F
	default:
		return false
	}
	m.need, m.lo, m.hi = need, lo, hi
	return true
}

func isHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}
