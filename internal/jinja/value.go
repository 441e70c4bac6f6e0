package jinja

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lowmem/llm/internal/enum"
)

// Kind is the type of a Value.
type Kind uint8

// Value kinds.
const (
	KindUndefined Kind = iota
	KindNone
	KindBool
	KindInt
	KindFloat
	KindString
	KindList
	KindDict
	KindFunc
)

var kindNames = [...]string{"undefined", "none", "boolean", "integer", "float", "string", "list", "dict", "function"}

func (k Kind) String() string { return enum.Name(k, kindNames[:], "Kind") }

// Value is a template value. The zero Value is undefined. Lists and dicts
// are references: copies of a Value share them, as in Jinja.
type Value struct {
	k Kind
	n int64   // bool, int
	f float64 // float
	s string  // string; the name of an undefined variable
	o *object // list, dict, function; usage record of tracked scalars
}

type object struct {
	used  bool
	ops   uint8
	tuple bool
	list  []Value
	keys  []Value
	vals  []Value
	index map[string]int
	fn    *function
	plain bool // a dict without methods (the loop variable)
}

// Operations a value took part in; see Value.Accessed.
const (
	OpIndexed    uint8 = 1 << iota // iterated or indexed like a list
	OpAttr                         // read like a dict
	OpSelectattr                   // filtered with selectattr / rejectattr
)

type function struct {
	name string
	call func(e *eval, a *callArgs) (Value, error)
}

// Constructors.

// Undefined returns an undefined value.
func Undefined() Value { return Value{} }

// None returns none.
func None() Value { return Value{k: KindNone} }

// Bool returns a boolean.
func Bool(b bool) Value {
	if b {
		return Value{k: KindBool, n: 1}
	}
	return Value{k: KindBool}
}

// Int returns an integer.
func Int(i int64) Value { return Value{k: KindInt, n: i} }

// Float returns a float.
func Float(f float64) Value { return Value{k: KindFloat, f: f} }

// String returns a string.
func String(s string) Value { return Value{k: KindString, s: s} }

// List returns a list holding items (not copied).
func List(items ...Value) Value { return Value{k: KindList, o: &object{list: items}} }

func tuple(items []Value) Value { return Value{k: KindList, o: &object{list: items, tuple: true}} }

// NewDict returns an empty dict; add entries with Set.
func NewDict() Value { return Value{k: KindDict, o: &object{index: map[string]int{}}} }

// Kind returns the value's kind.
func (v Value) Kind() Kind { return v.k }

// Str returns a string value's text ("" for other kinds).
func (v Value) Str() string { return v.s }

// Len returns the number of items of a list or dict.
func (v Value) Len() int {
	switch v.k {
	case KindList:
		return len(v.o.list)
	case KindDict:
		return len(v.o.keys)
	}
	return 0
}

// Index returns item i of a list (undefined when out of range).
func (v Value) Index(i int) Value {
	if v.k == KindList && i >= 0 && i < len(v.o.list) {
		return v.o.list[i]
	}
	return Value{}
}

// Set adds or replaces key in a dict. It does nothing to other kinds.
func (v Value) Set(key string, val Value) {
	if v.k != KindDict {
		return
	}
	v.o.set(String(key), val)
}

// Get returns the value under key in a dict (undefined when absent).
func (v Value) Get(key string) Value {
	if v.k != KindDict {
		return Value{}
	}
	r, _ := v.o.get(String(key))
	return r
}

// Used reports whether a render read this value (tracked values only, see
// Track).
func (v Value) Used() bool { return v.o != nil && v.o.used }

// Accessed reports whether a render used this value in one of the ways of op
// (OpIndexed, OpAttr, OpSelectattr).
func (v Value) Accessed(op uint8) bool { return v.o != nil && v.o.ops&op != 0 }

// Track returns a deep copy of v in which every value records whether a
// render reads it (Used) and how (Accessed).
func Track(v Value) Value {
	switch v.k {
	case KindList:
		items := make([]Value, len(v.o.list))
		for i, it := range v.o.list {
			items[i] = Track(it)
		}
		return Value{k: KindList, o: &object{list: items, tuple: v.o.tuple}}
	case KindDict:
		d := NewDict()
		for i, k := range v.o.keys {
			d.o.set(k, Track(v.o.vals[i]))
		}
		return d
	case KindFunc:
		return v
	}
	v.o = &object{}
	return v
}

func markUsed(v Value) {
	if v.o != nil {
		v.o.used = true
	}
}

func markDeep(v Value, depth int) { markDeepSeen(v, depth, map[*object]bool{}) }

func markDeepSeen(v Value, depth int, seen map[*object]bool) {
	if v.o == nil || depth > maxNesting || seen[v.o] {
		return
	}
	seen[v.o] = true
	v.o.used = true
	for _, it := range v.o.list {
		markDeepSeen(it, depth+1, seen)
	}
	for i := range v.o.keys {
		markDeepSeen(v.o.keys[i], depth+1, seen)
		markDeepSeen(v.o.vals[i], depth+1, seen)
	}
}

func markOp(v Value, op uint8) {
	if v.o != nil {
		v.o.ops |= op
		v.o.used = true
	}
}

// dict internals

func hashKey(k Value) (string, bool) {
	switch k.k {
	case KindString:
		return "s" + k.s, true
	case KindInt, KindBool:
		return "n" + strconv.FormatInt(k.n, 10), true
	case KindFloat:
		if k.f == math.Trunc(k.f) && math.Abs(k.f) < 1<<62 {
			return "n" + strconv.FormatInt(int64(k.f), 10), true
		}
		return "f" + strconv.FormatFloat(k.f, 'g', -1, 64), true
	case KindNone:
		return "z", true
	case KindList:
		if k.o.tuple {
			var b strings.Builder
			b.WriteString("t")
			for _, it := range k.o.list {
				h, ok := hashKey(it)
				if !ok {
					return "", false
				}
				b.WriteString(strconv.Itoa(len(h)))
				b.WriteString(":")
				b.WriteString(h)
			}
			return b.String(), true
		}
	}
	return "", false
}

func (o *object) set(k, v Value) bool {
	h, ok := hashKey(k)
	if !ok {
		return false
	}
	if i, ok := o.index[h]; ok {
		o.vals[i] = v
		return true
	}
	o.index[h] = len(o.keys)
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	return true
}

func (o *object) get(k Value) (Value, bool) {
	h, ok := hashKey(k)
	if !ok {
		return Value{}, false
	}
	if i, ok := o.index[h]; ok {
		return o.vals[i], true
	}
	return Value{}, false
}

// truth is Python truthiness.
func (v Value) truth() bool {
	switch v.k {
	case KindBool, KindInt:
		return v.n != 0
	case KindFloat:
		return v.f != 0
	case KindString:
		return v.s != ""
	case KindList:
		return len(v.o.list) > 0
	case KindDict:
		return len(v.o.keys) > 0
	case KindFunc:
		return true
	}
	return false
}

func (v Value) isNumber() bool { return v.k == KindInt || v.k == KindFloat || v.k == KindBool }

func (v Value) num() float64 {
	if v.k == KindFloat {
		return v.f
	}
	return float64(v.n)
}

// text converts a value to the text "{{ v }}" prints.
func (v Value) text() string {
	switch v.k {
	case KindUndefined:
		return ""
	case KindNone:
		return "None"
	case KindBool:
		if v.n != 0 {
			return "True"
		}
		return "False"
	case KindInt:
		return strconv.FormatInt(v.n, 10)
	case KindFloat:
		return floatText(v.f)
	case KindString:
		return v.s
	case KindFunc:
		return "<function " + v.o.fn.name + ">"
	}
	var b strings.Builder
	writeRepr(&b, v, 0, &budget{lim: Limits{MaxSteps: 256}})
	return b.String()
}

// floatText prints a float as Python's str does for ordinary values.
func floatText(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if math.Abs(f) >= 1e16 || (f != 0 && math.Abs(f) < 1e-4) {
		s = strconv.FormatFloat(f, 'g', -1, 64)
		return s
	}
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// writeRepr writes Python's repr of lists, tuples, dicts and strings. Every
// item costs a step of lim; past its limit the rest is written as "...".
func writeRepr(b *strings.Builder, v Value, depth int, lim *budget) {
	if depth > maxNesting || lim.step(1) != nil {
		b.WriteString("...")
		return
	}
	switch v.k {
	case KindString:
		if strings.Contains(v.s, "'") {
			writeJSONString(b, v.s, false)
		} else {
			b.WriteString("'")
			b.WriteString(v.s)
			b.WriteString("'")
		}
	case KindList:
		open, close := "[", "]"
		if v.o.tuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i, it := range v.o.list {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it, depth+1, lim)
			if lim.steps > lim.lim.MaxSteps {
				break
			}
		}
		if v.o.tuple && len(v.o.list) == 1 {
			b.WriteString(",")
		}
		b.WriteString(close)
	case KindDict:
		b.WriteString("{")
		for i := range v.o.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, v.o.keys[i], depth+1, lim)
			b.WriteString(": ")
			writeRepr(b, v.o.vals[i], depth+1, lim)
			if lim.steps > lim.lim.MaxSteps {
				break
			}
		}
		b.WriteString("}")
	default:
		b.WriteString(v.text())
	}
}

// equal is Jinja's ==. Every node compared costs a step of lim (nil: free),
// so comparing huge or self-containing lists stays bounded.
func equal(a, b Value, lim *budget) bool { return equalAt(a, b, 0, lim) }

func equalAt(a, b Value, depth int, lim *budget) bool {
	if depth > maxNesting || lim != nil && lim.step(1) != nil {
		return false
	}
	if a.isNumber() && b.isNumber() {
		if a.k == KindFloat || b.k == KindFloat {
			return a.num() == b.num()
		}
		return a.n == b.n
	}
	if a.k != b.k {
		return false
	}
	switch a.k {
	case KindUndefined, KindNone:
		return true
	case KindString:
		return a.s == b.s
	case KindList:
		if a.o == b.o {
			return true
		}
		if len(a.o.list) != len(b.o.list) {
			return false
		}
		for i := range a.o.list {
			if !equalAt(a.o.list[i], b.o.list[i], depth+1, lim) {
				return false
			}
		}
		return true
	case KindDict:
		if a.o == b.o {
			return true
		}
		if len(a.o.keys) != len(b.o.keys) {
			return false
		}
		for i, k := range a.o.keys {
			bv, ok := b.o.get(k)
			if !ok || !equalAt(a.o.vals[i], bv, depth+1, lim) {
				return false
			}
		}
		return true
	case KindFunc:
		return a.o == b.o
	}
	return false
}

// less orders numbers, strings and lists, as Python's < does.
func less(a, b Value, lim *budget) (bool, error) { return lessAt(a, b, 0, lim) }

func lessAt(a, b Value, depth int, lim *budget) (bool, error) {
	if lim != nil {
		if err := lim.step(1); err != nil {
			return false, err
		}
	}
	switch {
	case depth > maxNesting:
		return false, fmt.Errorf("cannot compare values nested deeper than %d: %w", maxNesting, ErrLimit)
	case a.isNumber() && b.isNumber():
		if a.k == KindFloat || b.k == KindFloat {
			return a.num() < b.num(), nil
		}
		return a.n < b.n, nil
	case a.k == KindString && b.k == KindString:
		return a.s < b.s, nil
	case a.k == KindList && b.k == KindList:
		for i := 0; i < len(a.o.list) && i < len(b.o.list); i++ {
			if equalAt(a.o.list[i], b.o.list[i], depth+1, lim) {
				continue
			}
			return lessAt(a.o.list[i], b.o.list[i], depth+1, lim)
		}
		return len(a.o.list) < len(b.o.list), nil
	}
	return false, fmt.Errorf("cannot compare %s with %s: %w", a.k, b.k, ErrRuntime)
}

// JSON encoding, in the shape Python's json.dumps gives (which is what chat
// templates' tojson is on Hugging Face and in llama.cpp): ", " and ": "
// separators, no HTML escaping, non-ASCII kept unless ensureASCII.

type jsonStyle struct {
	indent      int // < 0: one line
	itemSep     string
	keySep      string
	ensureASCII bool
	sortKeys    bool
}

func writeJSON(b *strings.Builder, v Value, st *jsonStyle, level int, lim *budget) error {
	if level > maxNesting {
		return fmt.Errorf("tojson: value nested deeper than %d: %w", maxNesting, ErrLimit)
	}
	if err := lim.step(1); err != nil {
		return err
	}
	if int64(b.Len()) > lim.lim.MaxOutput {
		return fmt.Errorf("tojson: text longer than %d bytes: %w", lim.lim.MaxOutput, ErrLimit)
	}
	newline := func(l int) {
		if st.indent >= 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", st.indent*l))
		}
	}
	switch v.k {
	case KindUndefined, KindNone:
		b.WriteString("null")
	case KindBool:
		if v.n != 0 {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case KindInt:
		b.WriteString(strconv.FormatInt(v.n, 10))
	case KindFloat:
		switch {
		case math.IsNaN(v.f):
			b.WriteString("NaN")
		case math.IsInf(v.f, 1):
			b.WriteString("Infinity")
		case math.IsInf(v.f, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(floatText(v.f))
		}
	case KindString:
		writeJSONString(b, v.s, st.ensureASCII)
	case KindList:
		if len(v.o.list) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, it := range v.o.list {
			if i > 0 {
				b.WriteString(st.itemSep)
			}
			newline(level + 1)
			if err := writeJSON(b, it, st, level+1, lim); err != nil {
				return err
			}
		}
		newline(level)
		b.WriteByte(']')
	case KindDict:
		if len(v.o.keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		order := make([]int, len(v.o.keys))
		for i := range order {
			order[i] = i
		}
		if st.sortKeys {
			sortStable(order, func(x, y int) bool { return v.o.keys[x].text() < v.o.keys[y].text() })
		}
		b.WriteByte('{')
		for j, i := range order {
			if j > 0 {
				b.WriteString(st.itemSep)
			}
			newline(level + 1)
			k := v.o.keys[i]
			if k.k == KindString {
				writeJSONString(b, k.s, st.ensureASCII)
			} else {
				writeJSONString(b, jsonKeyText(k), st.ensureASCII)
			}
			b.WriteString(st.keySep)
			if err := writeJSON(b, v.o.vals[i], st, level+1, lim); err != nil {
				return err
			}
		}
		newline(level)
		b.WriteByte('}')
	default:
		return fmt.Errorf("tojson: cannot encode a %s: %w", v.k, ErrRuntime)
	}
	return nil
}

func jsonKeyText(k Value) string {
	switch k.k {
	case KindBool:
		if k.n != 0 {
			return "true"
		}
		return "false"
	case KindNone:
		return "null"
	}
	return k.text()
}

func writeJSONString(b *strings.Builder, s string, ascii bool) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				fmt.Fprintf(b, `\u%04x`, c)
			} else if c >= 0x80 && ascii {
				r, n := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && n <= 1 {
					b.WriteString(`\ufffd`)
					i++
					continue
				}
				if r > 0xFFFF {
					r -= 0x10000
					fmt.Fprintf(b, `\u%04x\u%04x`, 0xD800+(r>>10)&0x3FF, 0xDC00+r&0x3FF)
				} else {
					fmt.Fprintf(b, `\u%04x`, r)
				}
				i += n
				continue
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}

func sortStable(idx []int, less func(a, b int) bool) {
	// insertion sort is enough for template-sized data and keeps order stable
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && less(idx[j], idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}

// FromJSON decodes JSON into a Value, keeping the order of object keys.
func FromJSON(data []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeJSON(dec, 0)
	if err != nil {
		return Value{}, err
	}
	if dec.More() {
		return Value{}, fmt.Errorf("jinja: trailing data after JSON value: %w", ErrRuntime)
	}
	return v, nil
}

func decodeJSON(dec *json.Decoder, depth int) (Value, error) {
	if depth > maxNesting {
		return Value{}, fmt.Errorf("jinja: JSON nested deeper than %d: %w", maxNesting, ErrLimit)
	}
	tok, err := dec.Token()
	if err != nil {
		return Value{}, fmt.Errorf("jinja: bad JSON: %v: %w", err, ErrRuntime)
	}
	switch t := tok.(type) {
	case nil:
		return None(), nil
	case bool:
		return Bool(t), nil
	case string:
		return String(t), nil
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return Int(i), nil
		}
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return Value{}, fmt.Errorf("jinja: bad JSON number %s: %w", t, ErrRuntime)
		}
		return Float(f), nil
	case json.Delim:
		switch t {
		case '[':
			var items []Value
			for dec.More() {
				it, err := decodeJSON(dec, depth+1)
				if err != nil {
					return Value{}, err
				}
				items = append(items, it)
			}
			if _, err := dec.Token(); err != nil {
				return Value{}, fmt.Errorf("jinja: bad JSON: %v: %w", err, ErrRuntime)
			}
			return List(items...), nil
		case '{':
			d := NewDict()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return Value{}, fmt.Errorf("jinja: bad JSON: %v: %w", err, ErrRuntime)
				}
				k, _ := kt.(string)
				v, err := decodeJSON(dec, depth+1)
				if err != nil {
					return Value{}, err
				}
				d.o.set(String(k), v)
			}
			if _, err := dec.Token(); err != nil {
				return Value{}, fmt.Errorf("jinja: bad JSON: %v: %w", err, ErrRuntime)
			}
			return d, nil
		}
	}
	return Value{}, fmt.Errorf("jinja: bad JSON token %v: %w", tok, ErrRuntime)
}

// ToJSON encodes v compactly (for callers that need the data back out).
func ToJSON(v Value) (string, error) {
	var b strings.Builder
	lim := &budget{lim: Limits{MaxSteps: 1 << 40, MaxOutput: 1 << 40}.withDefaults()}
	err := writeJSON(&b, v, &jsonStyle{indent: -1, itemSep: ",", keySep: ":"}, 0, lim)
	return b.String(), err
}
