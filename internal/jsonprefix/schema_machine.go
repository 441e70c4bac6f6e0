package jsonprefix

import (
	"math/bits"
	"slices"
)

// SchemaMachine recognizes the prefixes of one JSON object that a Schema
// allows, a byte at a time: Machine's syntax, and at each value, key and
// close what the schema says may stand there. With a nil Schema it is
// Machine. Copy one with CopyFrom: a plain copy works but moves the whole
// stack.
type SchemaMachine struct {
	cursor
	frames [MaxDepth]frame // the open containers' schemas
}

// cursor is the part of a SchemaMachine that is not its stack.
type cursor struct {
	syn  Machine
	s    *Schema
	next *node // the schema of the value about to begin

	// The string being read when it is matched: a key against the
	// object's properties (match is the object), or a value against an
	// enum (match is the string's schema). nil: free text.
	match   *node
	cands   uint64 // the names or values that still match
	at      int    // bytes of the string read
	unknown bool   // the key is none of the properties (the object allows others)
	intOnly bool   // the number being read must be an integer

	depth int

	// A framed schema's texts: bytes of its prefix and suffix read, and
	// the whitespace between them and the object.
	pre, post         int
	spaceIn, spaceOut uint8 // as Machine.space
}

// frame is an open object or array and its schema.
type frame struct {
	n     *node
	seen  uint64 // object: bit i, property i has been given
	count int    // array: items begun
	obj   bool
}

// NewSchemaMachine returns a machine before the object; s nil allows any
// object.
func NewSchemaMachine(s *Schema) SchemaMachine {
	m := SchemaMachine{cursor: cursor{s: s}}
	if s != nil {
		m.next = s.root
	}
	return m
}

// CopyFrom makes m the same as o, copying only o's open containers.
func (m *SchemaMachine) CopyFrom(o *SchemaMachine) {
	m.cursor = o.cursor
	copy(m.frames[:o.depth], o.frames[:o.depth])
}

// Done reports whether the object is complete.
func (m *SchemaMachine) Done() bool {
	return m.syn.Done() && (m.s == nil || m.post == len(m.s.suffix))
}

// Write feeds p and reports whether the text so far can still become an
// object the schema allows. On false the machine is left where the
// offending byte found it, partway through p.
func (m *SchemaMachine) Write(p []byte) bool { return feed(m, p) }

// Step feeds one byte and reports whether the text can still become an
// object the schema allows; on false the machine has not moved.
func (m *SchemaMachine) Step(b byte) bool {
	switch {
	case m.s == nil:
		return m.syn.Step(b)
	case m.pre < len(m.s.prefix):
		if b != m.s.prefix[m.pre] {
			return false
		}
		m.pre++
		return true
	case m.syn.st == stStart && m.s.prefix != "" && isSpace(rune(b)):
		return spaceByte(&m.spaceIn, b)
	case m.syn.Done():
		if m.post == 0 && m.s.suffix != "" && isSpace(rune(b)) {
			return spaceByte(&m.spaceOut, b)
		}
		if m.post < len(m.s.suffix) && b == m.s.suffix[m.post] {
			m.post++
			return true
		}
		return false
	}
	saved := m.cursor
	var top frame
	if m.depth > 0 {
		top = m.frames[m.depth-1]
	}
	if m.syn.Step(b) && m.follow(saved.syn.st, saved.syn.key, b) {
		return true
	}
	// Only the cursor and the top frame change before a refusal (a push
	// writes past the saved depth).
	m.cursor = saved
	if saved.depth > 0 {
		m.frames[saved.depth-1] = top
	}
	return false
}

// follow applies the schema to byte b, which the syntax took in state
// prev (key: prev was inside a key).
func (m *SchemaMachine) follow(prev state, key bool, b byte) bool {
	switch prev {
	case stStart:
		return m.begin(b)
	case stValue, stArrOpen, stObjOpen, stKey:
		switch {
		case isSpace(rune(b)):
			return true
		case b == ']' || b == '}':
			return m.close()
		case prev == stObjOpen || prev == stKey:
			return m.beginKey()
		}
		return m.begin(b)
	case stString, stEscape, stHex:
		if key {
			return m.keyByte(prev, b)
		}
		return m.valueByte(prev, b)
	case stNumber:
		if m.syn.st == stNumber {
			return !m.intOnly || b != '.' && b != 'e' && b != 'E'
		}
		return m.after(b) // b ended the number and stands after it
	case stAfter:
		return m.after(b)
	}
	return true // stColon, stLiteral: nothing the schema decides
}

// top is the innermost open container.
func (m *SchemaMachine) top() *frame { return &m.frames[m.depth-1] }

// begin starts the value whose first byte is b, of schema m.next.
func (m *SchemaMachine) begin(b byte) bool {
	t := start(b)
	if t == tNumber {
		t |= tInteger
	}
	n := m.next.pick(t)
	if n == nil {
		return false
	}
	if m.depth > 0 && !m.top().obj {
		f := m.top()
		if f.n.maxItems >= 0 && f.count >= f.n.maxItems {
			return false
		}
		f.count++
	}
	m.match = nil
	switch t {
	case tObject:
		return m.push(frame{n: n, obj: true})
	case tArray:
		m.next = n.items
		return m.push(frame{n: n})
	case tString:
		if n.enum != nil {
			m.match, m.cands, m.at = n, all(len(n.enum)), 0
		}
	case tNumber | tInteger:
		m.intOnly = n.types&tNumber == 0
	}
	return true
}

func (m *SchemaMachine) push(f frame) bool {
	if m.depth == MaxDepth {
		return false
	}
	m.frames[m.depth] = f
	m.depth++
	return true
}

// close ends the innermost container: an object that has every required
// property, an array of at least minItems items.
func (m *SchemaMachine) close() bool {
	f := m.top()
	if f.obj && f.seen&f.n.required != f.n.required || !f.obj && f.count < f.n.minItems {
		return false
	}
	m.depth--
	return true
}

// after handles what follows a value in a container.
func (m *SchemaMachine) after(b byte) bool {
	switch {
	case b == '}' || b == ']':
		return m.close()
	case b != ',':
		return true // whitespace
	}
	// A comma must leave room for what follows it, or the output would
	// end in a corner with no way out.
	f := m.top()
	if !f.obj {
		m.next = f.n.items
		return f.n.maxItems < 0 || f.count < f.n.maxItems
	}
	return f.n.extra || all(len(f.n.props))&^f.seen != 0
}

// beginKey starts a key of the innermost object.
func (m *SchemaMachine) beginKey() bool {
	f := m.top()
	m.unknown, m.at = false, 0
	if len(f.n.props) == 0 {
		m.match = nil // any name: a property the schema does not name
		return f.n.extra
	}
	m.match, m.cands = f.n, all(len(f.n.props))&^f.seen
	return m.cands != 0 || f.n.extra
}

// keyByte reads a byte of a key: names narrow to the properties it can
// still be; its close chooses the schema of the value.
func (m *SchemaMachine) keyByte(prev state, b byte) bool {
	n := m.match
	if n == nil || m.unknown {
		if m.syn.st == stColon {
			m.next = anyValue
		}
		return true
	}
	if prev == stString && b == '"' {
		for c := m.cands; c != 0; c &= c - 1 {
			if i := bits.TrailingZeros64(c); len(n.names[i]) == m.at {
				m.next = n.props[i].n
				m.top().seen |= 1 << i
				return true
			}
		}
		m.next = anyValue
		return n.extra
	}
	if prev != stString || b == '\\' {
		// An escape: no property name has one.
		m.unknown = true
		return n.extra
	}
	m.cands = narrow(m.cands, m.at, b, n.names)
	m.at++
	if m.cands == 0 {
		m.unknown = true
		return n.extra
	}
	return true
}

// valueByte reads a byte of a string value: an enum narrows to the
// values it can still be.
func (m *SchemaMachine) valueByte(prev state, b byte) bool {
	n := m.match
	if n == nil {
		return true
	}
	if prev != stString || b == '\\' {
		return false // no enum value has an escape
	}
	if b == '"' {
		for c := m.cands; c != 0; c &= c - 1 {
			if i := bits.TrailingZeros64(c); len(n.enum[i]) == m.at {
				m.match = nil
				if n.selects {
					// The discriminator chooses the variant the rest of
					// the object follows; its property is given.
					f := m.top()
					key := f.n.names[0]
					f.n = f.n.variants[i]
					f.seen = 1 << slices.Index(f.n.names, key)
				}
				return true
			}
		}
		return false
	}
	m.cands = narrow(m.cands, m.at, b, n.enum)
	m.at++
	return m.cands != 0
}

// narrow keeps the candidates whose text has b at byte at.
func narrow(cands uint64, at int, b byte, text []string) uint64 {
	for c := cands; c != 0; c &= c - 1 {
		i := bits.TrailingZeros64(c)
		if s := text[i]; at >= len(s) || s[at] != b {
			cands &^= 1 << i
		}
	}
	return cands
}

// all is the set of the first n candidates.
func all(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// freeText reports whether the machine is inside a string, between
// characters, where any plain text is allowed.
func (m *SchemaMachine) freeText() bool {
	return m.syn.st == stString && m.syn.need == 0 && (m.s == nil || m.match == nil || m.unknown)
}

// spaceByte counts whitespace byte b into a run, as Machine counts its
// runs: at most MaxSpace bytes and one line feed.
func spaceByte(run *uint8, b byte) bool {
	if *run&^newline == MaxSpace || b == '\n' && *run&newline != 0 {
		return false
	}
	*run++
	if b == '\n' {
		*run |= newline
	}
	return true
}
