package jinja

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// globals are the functions every template can call.
var globals map[string]Value

func init() {
	globals = map[string]Value{
		"range":           funcValue("range", builtinRange),
		"namespace":       funcValue("namespace", builtinNamespace),
		"dict":            funcValue("dict", builtinNamespace),
		"raise_exception": funcValue("raise_exception", builtinRaise),
		"strftime_now":    funcValue("strftime_now", builtinStrftimeNow),
		"tojson": funcValue("tojson", func(e *eval, a *callArgs) (Value, error) {
			if len(a.pos) == 0 {
				return Value{}, fmt.Errorf("tojson needs a value: %w", ErrRuntime)
			}
			return filterToJSON(e, a.pos[0], &callArgs{pos: a.pos[1:], kw: a.kw})
		}),
	}
}

func builtinRange(e *eval, a *callArgs) (Value, error) {
	var start, stop, step int64 = 0, 0, 1
	ints := make([]int64, len(a.pos))
	for i, v := range a.pos {
		if v.k != KindInt && v.k != KindBool {
			return Value{}, fmt.Errorf("range() needs integers, got %s: %w", v.k, ErrRuntime)
		}
		ints[i] = v.n
	}
	switch len(ints) {
	case 1:
		stop = ints[0]
	case 2:
		start, stop = ints[0], ints[1]
	case 3:
		start, stop, step = ints[0], ints[1], ints[2]
	default:
		return Value{}, fmt.Errorf("range() takes 1 to 3 arguments, got %d: %w", len(ints), ErrRuntime)
	}
	if step == 0 {
		return Value{}, fmt.Errorf("range() step must not be zero: %w", ErrRuntime)
	}
	var n int64
	if step > 0 && stop > start {
		n = (stop - start + step - 1) / step
	} else if step < 0 && stop < start {
		n = (start - stop - step - 1) / -step
	}
	if n < 0 || n > e.lim.lim.MaxSteps-e.lim.steps {
		return Value{}, fmt.Errorf("range() of %d items: %w", n, ErrLimit)
	}
	if err := e.lim.step(n); err != nil {
		return Value{}, err
	}
	if err := e.lim.bytesN(n * 48); err != nil {
		return Value{}, err
	}
	items := make([]Value, n)
	for i := range items {
		items[i] = Int(start + int64(i)*step)
	}
	return List(items...), nil
}

func builtinNamespace(_ *eval, a *callArgs) (Value, error) {
	d := NewDict()
	for _, p := range a.pos {
		if p.k != KindDict {
			return Value{}, fmt.Errorf("namespace() takes keyword arguments: %w", ErrRuntime)
		}
		for i, k := range p.o.keys {
			d.o.set(k, p.o.vals[i])
		}
	}
	for _, k := range a.kwNames {
		d.Set(k, a.kw[k])
	}
	return d, nil
}

func builtinRaise(_ *eval, a *callArgs) (Value, error) {
	msg := ""
	if len(a.pos) > 0 {
		msg = a.pos[0].text()
	}
	return Value{}, fmt.Errorf("%w: %s", ErrRaised, msg)
}

func builtinStrftimeNow(e *eval, a *callArgs) (Value, error) {
	if len(a.pos) != 1 || a.pos[0].k != KindString {
		return Value{}, fmt.Errorf("strftime_now needs one format string: %w", ErrRuntime)
	}
	return String(Strftime(e.now, a.pos[0].s)), nil
}

// runTest evaluates "v is name(args)".
func runTest(e *eval, name string, v Value, args []Value) (bool, error) {
	arg := func() (Value, error) {
		if len(args) < 1 {
			return Value{}, fmt.Errorf("test %q needs an argument: %w", name, ErrRuntime)
		}
		return args[0], nil
	}
	switch name {
	case "defined":
		return v.k != KindUndefined, nil
	case "undefined":
		return v.k == KindUndefined, nil
	case "none":
		return v.k == KindNone, nil
	case "boolean":
		return v.k == KindBool, nil
	case "false":
		return v.k == KindBool && v.n == 0, nil
	case "true":
		return v.k == KindBool && v.n != 0, nil
	case "integer":
		return v.k == KindInt, nil
	case "float":
		return v.k == KindFloat, nil
	case "number":
		return v.k == KindInt || v.k == KindFloat, nil
	case "string":
		return v.k == KindString, nil
	case "mapping":
		return v.k == KindDict, nil
	case "iterable", "sequence":
		return v.k == KindList || v.k == KindString || v.k == KindDict || v.k == KindUndefined, nil
	case "callable":
		return v.k == KindFunc, nil
	case "odd", "even":
		if v.k != KindInt {
			return false, fmt.Errorf("test %q needs an integer, not %s: %w", name, v.k, ErrRuntime)
		}
		return (v.n%2 != 0) == (name == "odd"), nil
	case "divisibleby":
		d, err := arg()
		if err != nil {
			return false, err
		}
		if v.k != KindInt || d.k != KindInt || d.n == 0 {
			return false, fmt.Errorf("divisibleby needs nonzero integers: %w", ErrRuntime)
		}
		return v.n%d.n == 0, nil
	case "lower":
		return v.k == KindString && strings.ToLower(v.s) == v.s, nil
	case "upper":
		return v.k == KindString && strings.ToUpper(v.s) == v.s, nil
	case "eq", "equalto", "==":
		d, err := arg()
		return err == nil && equal(v, d, e.lim), err
	case "ne", "!=":
		d, err := arg()
		return err == nil && !equal(v, d, e.lim), err
	case "lt", "lessthan", "<", "gt", "greaterthan", ">", "le", "<=", "ge", ">=":
		d, err := arg()
		if err != nil {
			return false, err
		}
		switch name {
		case "lt", "lessthan", "<":
			return less(v, d, e.lim)
		case "gt", "greaterthan", ">":
			return less(d, v, e.lim)
		case "le", "<=":
			ok, err := less(d, v, e.lim)
			return !ok, err
		default:
			ok, err := less(v, d, e.lim)
			return !ok, err
		}
	case "in":
		d, err := arg()
		if err != nil {
			return false, err
		}
		return contains(d, v, e.lim)
	case "sameas":
		d, err := arg()
		if err != nil {
			return false, err
		}
		if v.o != nil || d.o != nil {
			return v.o == d.o && v.k == d.k, nil
		}
		return v.k == d.k && v.n == d.n && v.f == d.f && v.s == d.s, nil
	case "test":
		return v.k == KindString && isTestName(v.s), nil
	case "filter":
		return v.k == KindString && isFilterName(v.s), nil
	}
	return false, fmt.Errorf("unknown test %q: %w", name, ErrRuntime)
}

var testNames = strings.Fields(`defined undefined none boolean false true integer float number string mapping
	iterable sequence callable odd even divisibleby lower upper eq equalto == ne != lt lessthan < gt greaterthan >
	le <= ge >= in sameas test filter`)

func isTestName(s string) bool {
	for _, t := range testNames {
		if t == s {
			return true
		}
	}
	return false
}

var filterNames = strings.Fields(`abs attr batch capitalize center count d default dictsort e escape first float
	format indent int items join last length list lower map max min reject rejectattr replace reverse round
	safe select selectattr slice sort string strip sum title tojson trim truncate unique upper wordcount`)

func isFilterName(s string) bool {
	for _, f := range filterNames {
		if f == s {
			return true
		}
	}
	return false
}

// runFilter applies filter name to in.
func runFilter(e *eval, name string, in Value, a *callArgs) (Value, error) {
	markUsed(in)
	switch name {
	case "count":
		name = "length"
	case "d":
		name = "default"
	case "e":
		name = "escape"
	case "trim":
		name = "strip"
	}
	switch name {
	case "capitalize", "lower", "upper", "title", "strip", "replace", "wordcount", "escape", "center", "truncate", "indent":
		if in.k == KindUndefined {
			if name == "wordcount" {
				return Int(0), nil
			}
			return String(""), nil
		}
		if in.k != KindString {
			in = String(in.text())
		}
	}
	switch name {
	case "default":
		def := String("")
		if v, ok := a.arg("default_value", 0); ok {
			def = v
		}
		boolean, _ := a.arg("boolean", 1)
		// As llama.cpp: none counts as missing too.
		if in.k == KindUndefined || in.k == KindNone || boolean.truth() && !in.truth() {
			return def, nil
		}
		return in, nil
	case "tojson":
		return filterToJSON(e, in, a)
	case "string":
		if in.k == KindList || in.k == KindDict {
			markDeep(in, 0)
		}
		s, err := e.str(in)
		if err != nil {
			return Value{}, err
		}
		return String(s), e.lim.bytesN(int64(len(s)))
	case "safe":
		return in, nil
	case "length":
		switch in.k {
		case KindString:
			return Int(int64(utf8.RuneCountInString(in.s))), nil
		case KindList, KindDict:
			return Int(int64(in.Len())), nil
		case KindUndefined, KindNone:
			return Int(0), nil
		}
		return Value{}, fmt.Errorf("length of a %s: %w", in.k, ErrRuntime)
	case "abs":
		switch in.k {
		case KindInt, KindBool:
			if in.n < 0 {
				return Int(-in.n), nil
			}
			return Int(in.n), nil
		case KindFloat:
			return Float(math.Abs(in.f)), nil
		}
	case "int":
		return toInt(in, a)
	case "float":
		switch in.k {
		case KindInt, KindBool:
			return Float(float64(in.n)), nil
		case KindFloat:
			return in, nil
		case KindString:
			if f, err := strconv.ParseFloat(strings.TrimSpace(in.s), 64); err == nil {
				return Float(f), nil
			}
		}
		if d, ok := a.arg("default", 0); ok {
			return Float(d.num()), nil
		}
		return Float(0), nil
	case "round":
		prec, _ := a.arg("precision", 0)
		method, _ := a.arg("method", 1)
		f := in.num()
		p := math.Pow(10, float64(prec.n))
		switch method.s {
		case "ceil":
			f = math.Ceil(f*p) / p
		case "floor":
			f = math.Floor(f*p) / p
		default:
			f = math.RoundToEven(f*p) / p
		}
		return Float(f), nil
	case "capitalize", "lower", "upper", "title", "strip", "replace", "center", "truncate", "indent":
		m, _ := method(in, name)
		if name == "center" || name == "truncate" || name == "indent" {
			return stringFilter(e, name, in, a)
		}
		return m.o.fn.call(e, a)
	case "escape":
		return String(html.EscapeString(in.s)), nil
	case "wordcount":
		return Int(int64(len(strings.Fields(in.s)))), nil
	case "first", "last":
		switch in.k {
		case KindList:
			if len(in.o.list) == 0 {
				return Value{}, nil
			}
			markOp(in, OpIndexed)
			if name == "first" {
				return in.o.list[0], nil
			}
			return in.o.list[len(in.o.list)-1], nil
		case KindString:
			r := []rune(in.s)
			if len(r) == 0 {
				return Value{}, nil
			}
			if name == "first" {
				return String(string(r[0])), nil
			}
			return String(string(r[len(r)-1])), nil
		case KindUndefined:
			return Value{}, nil
		}
	case "list":
		items, err := iterate(in)
		if err != nil {
			return Value{}, err
		}
		return List(append([]Value(nil), items...)...), e.lim.step(int64(len(items)))
	case "items":
		switch in.k {
		case KindDict:
			return dictItems(in), e.lim.step(int64(in.Len()))
		case KindUndefined, KindNone:
			return List(), nil
		}
	case "dictsort":
		if in.k != KindDict {
			break
		}
		byValue, _ := a.arg("by", 1)
		reverse, _ := a.arg("reverse", 2)
		caseSens, _ := a.arg("case_sensitive", 0)
		items := dictItems(in).o.list
		col := 0
		if byValue.s == "value" {
			col = 1
		}
		return sortedList(e, items, func(v Value) Value { return v.o.list[col] }, caseSens.truth(), reverse.truth())
	case "join":
		return filterJoin(e, in, a)
	case "map":
		return filterMap(e, in, a)
	case "select", "reject", "selectattr", "rejectattr":
		return filterSelect(e, name, in, a)
	case "sort":
		items, err := iterate(in)
		if err != nil {
			return Value{}, err
		}
		items = append([]Value(nil), items...)
		reverse, _ := a.arg("reverse", 0)
		caseSens, _ := a.arg("case_sensitive", 1)
		attr, hasAttr := a.arg("attribute", 2)
		return sortedList(e, items, func(v Value) Value {
			if hasAttr {
				return e.lookupPath(v, attr)
			}
			return v
		}, caseSens.truth(), reverse.truth())
	case "reverse":
		switch in.k {
		case KindString:
			r := []rune(in.s)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return String(string(r)), nil
		case KindList:
			items := make([]Value, len(in.o.list))
			for i, v := range in.o.list {
				items[len(items)-1-i] = v
			}
			return List(items...), e.lim.step(int64(len(items)))
		case KindUndefined:
			return List(), nil
		}
	case "unique":
		items, err := iterate(in)
		if err != nil {
			return Value{}, err
		}
		var out []Value
		for _, v := range items {
			dup := false
			for _, o := range out {
				if err := e.lim.step(1); err != nil {
					return Value{}, err
				}
				if equal(o, v, e.lim) {
					dup = true
					break
				}
			}
			if !dup {
				out = append(out, v)
			}
		}
		return List(out...), nil
	case "sum":
		items, err := iterate(in)
		if err != nil {
			return Value{}, err
		}
		total := Value{k: KindInt}
		if s, ok := a.arg("start", 1); ok {
			total = s
		}
		attr, hasAttr := a.arg("attribute", 0)
		for _, v := range items {
			if hasAttr {
				v = e.lookupPath(v, attr)
			}
			if total, err = e.binary("+", total, v); err != nil {
				return Value{}, err
			}
		}
		return total, nil
	case "min", "max":
		items, err := iterate(in)
		if err != nil {
			return Value{}, err
		}
		if len(items) == 0 {
			return Value{}, nil
		}
		best := items[0]
		for _, v := range items[1:] {
			var better bool
			if name == "min" {
				better, err = less(v, best, e.lim)
			} else {
				better, err = less(best, v, e.lim)
			}
			if err != nil {
				return Value{}, err
			}
			if better {
				best = v
			}
		}
		return best, nil
	case "batch":
		items, err := iterate(in)
		if err != nil {
			return Value{}, err
		}
		size, _ := a.arg("linecount", 0)
		if size.k != KindInt || size.n <= 0 {
			return Value{}, fmt.Errorf("batch needs a positive size: %w", ErrRuntime)
		}
		var out []Value
		for i := 0; i < len(items); i += int(size.n) {
			out = append(out, List(items[i:min(len(items), i+int(size.n))]...))
		}
		return List(out...), nil
	case "attr":
		key, _ := a.arg("name", 0)
		return e.attr(in, key.text()), nil
	case "format":
		m, _ := method(String(in.text()), "format")
		return m.o.fn.call(e, a)
	}
	if in.k == KindUndefined {
		return Value{}, fmt.Errorf("filter %q applied to undefined %s: %w", name, in.s, ErrRuntime)
	}
	if !isFilterName(name) {
		return Value{}, fmt.Errorf("unknown filter %q: %w", name, ErrRuntime)
	}
	return Value{}, fmt.Errorf("filter %q does not apply to a %s: %w", name, in.k, ErrRuntime)
}

func toInt(in Value, a *callArgs) (Value, error) {
	switch in.k {
	case KindInt, KindBool:
		return Int(in.n), nil
	case KindFloat:
		if math.IsNaN(in.f) || math.IsInf(in.f, 0) {
			return Int(0), nil
		}
		return Int(int64(in.f)), nil
	case KindString:
		base := int64(10)
		if b, ok := a.arg("base", 1); ok && b.k == KindInt {
			base = b.n
		}
		if base == 0 || base >= 2 && base <= 36 {
			s := strings.ReplaceAll(strings.TrimSpace(in.s), "_", "")
			if i, err := strconv.ParseInt(s, int(base), 64); err == nil {
				return Int(i), nil
			}
			if base == 10 {
				if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
					return Int(int64(f)), nil
				}
			}
		}
	}
	if d, ok := a.arg("default", 0); ok {
		return Int(d.n), nil
	}
	return Int(0), nil
}

func dictItems(d Value) Value {
	items := make([]Value, len(d.o.keys))
	for i := range d.o.keys {
		items[i] = tuple([]Value{d.o.keys[i], d.o.vals[i]})
	}
	markOp(d, OpAttr)
	return List(items...)
}

func iterate(v Value) ([]Value, error) {
	switch v.k {
	case KindList:
		markOp(v, OpIndexed)
		return v.o.list, nil
	case KindDict:
		return v.o.keys, nil
	case KindString:
		var out []Value
		for _, r := range v.s {
			out = append(out, String(string(r)))
		}
		return out, nil
	case KindUndefined, KindNone:
		return nil, nil
	}
	return nil, fmt.Errorf("a %s is not iterable: %w", v.k, ErrRuntime)
}

// sortedList sorts items in place, stably, by key(item) (dictsort's and
// sort's order; string keys compared in lower case unless caseSens) and
// returns them as a list.
func sortedList(e *eval, items []Value, key func(Value) Value, caseSens, reverse bool) (Value, error) {
	if err := e.lim.step(int64(len(items)) * 8); err != nil {
		return Value{}, err
	}
	fold := func(v Value) Value {
		k := key(v)
		if !caseSens && k.k == KindString {
			return String(strings.ToLower(k.s))
		}
		return k
	}
	var cmpErr error
	sort.SliceStable(items, func(i, j int) bool {
		a, b := fold(items[i]), fold(items[j])
		if reverse {
			a, b = b, a
		}
		ok, err := less(a, b, e.lim)
		if err != nil && cmpErr == nil {
			cmpErr = err
		}
		return ok
	})
	if cmpErr != nil {
		return Value{}, cmpErr
	}
	return List(items...), nil
}

// lookupPath reads attribute "a.b.c" (or an integer index) of v.
func (e *eval) lookupPath(v Value, attr Value) Value {
	if attr.k == KindInt {
		r, _ := e.index(v, attr)
		return r
	}
	for _, part := range strings.Split(attr.text(), ".") {
		if i, err := strconv.Atoi(part); err == nil && v.k == KindList {
			v, _ = e.index(v, Int(int64(i)))
			continue
		}
		if v.k == KindDict {
			r, _ := v.o.get(String(part))
			markUsed(r)
			markOp(v, OpAttr)
			v = r
		} else {
			v = Value{}
		}
	}
	return v
}

func filterToJSON(e *eval, in Value, a *callArgs) (Value, error) {
	markDeep(in, 0)
	st := &jsonStyle{indent: -1, itemSep: ", ", keySep: ": "}
	if v, ok := a.arg("indent", 0); ok && v.k == KindInt {
		st.indent = int(min(max(v.n, 0), 64))
		st.itemSep = ","
	}
	if v, ok := a.arg("separators", -1); ok && v.k == KindList && len(v.o.list) == 2 {
		st.itemSep, st.keySep = v.o.list[0].text(), v.o.list[1].text()
	}
	if v, ok := a.arg("ensure_ascii", -1); ok {
		st.ensureASCII = v.truth()
	}
	if v, ok := a.arg("sort_keys", -1); ok {
		st.sortKeys = v.truth()
	}
	var b strings.Builder
	if err := writeJSON(&b, in, st, 0, e.lim); err != nil {
		return Value{}, err
	}
	return String(b.String()), e.lim.bytesN(int64(b.Len()))
}

func filterJoin(e *eval, in Value, a *callArgs) (Value, error) {
	items, err := iterate(in)
	if err != nil {
		return Value{}, err
	}
	sep, _ := a.arg("d", 0)
	attr, hasAttr := a.arg("attribute", 1)
	var b strings.Builder
	for i, v := range items {
		if i > 0 {
			b.WriteString(sep.text())
		}
		if hasAttr {
			v = e.lookupPath(v, attr)
		}
		markUsed(v)
		text, err := e.str(v)
		if err != nil {
			return Value{}, err
		}
		b.WriteString(text)
		if err := e.lim.step(1); err != nil {
			return Value{}, err
		}
		if int64(b.Len()) > e.lim.lim.MaxOutput {
			return Value{}, fmt.Errorf("join: text longer than %d bytes: %w", e.lim.lim.MaxOutput, ErrLimit)
		}
	}
	return String(b.String()), e.lim.bytesN(int64(b.Len()))
}

func filterMap(e *eval, in Value, a *callArgs) (Value, error) {
	items, err := iterate(in)
	if err != nil {
		return Value{}, err
	}
	out := make([]Value, 0, len(items))
	if attr, ok := a.kw["attribute"]; ok {
		def, hasDef := a.kw["default"]
		for _, v := range items {
			r := e.lookupPath(v, attr)
			if r.k == KindUndefined && hasDef {
				r = def
			}
			out = append(out, r)
		}
		return List(out...), e.lim.step(int64(len(items)))
	}
	if len(a.pos) == 0 {
		return Value{}, fmt.Errorf("map needs a filter name or attribute=: %w", ErrRuntime)
	}
	name := a.pos[0].text()
	rest := &callArgs{pos: a.pos[1:], kw: a.kw, kwNames: a.kwNames, scope: a.scope}
	for _, v := range items {
		if err := e.lim.step(1); err != nil {
			return Value{}, err
		}
		r, err := runFilter(e, name, v, rest)
		if err != nil {
			return Value{}, err
		}
		out = append(out, r)
	}
	return List(out...), nil
}

func filterSelect(e *eval, name string, in Value, a *callArgs) (Value, error) {
	items, err := iterate(in)
	if err != nil {
		return Value{}, err
	}
	byAttr := name == "selectattr" || name == "rejectattr"
	keep := name == "select" || name == "selectattr"
	if byAttr {
		markOp(in, OpSelectattr)
	}
	args := a.pos
	var attr Value
	if byAttr {
		if len(args) == 0 {
			return Value{}, fmt.Errorf("%s needs an attribute name: %w", name, ErrRuntime)
		}
		attr, args = args[0], args[1:]
	}
	var out []Value
	for _, v := range items {
		if err := e.lim.step(1); err != nil {
			return Value{}, err
		}
		subject := v
		if byAttr {
			subject = e.lookupPath(v, attr)
		}
		var ok bool
		if len(args) == 0 {
			ok = subject.truth()
		} else {
			if ok, err = runTest(e, args[0].text(), subject, args[1:]); err != nil {
				return Value{}, err
			}
		}
		if ok == keep {
			out = append(out, v)
		}
	}
	return List(out...), nil
}

func stringFilter(e *eval, name string, in Value, a *callArgs) (Value, error) {
	s := in.s
	switch name {
	case "center":
		w, _ := a.arg("width", 0)
		width := int(min(max(w.n, 0), 1<<16))
		if w.k != KindInt {
			width = 80
		}
		n := utf8.RuneCountInString(s)
		if n >= width {
			return in, nil
		}
		left := (width - n) / 2
		return String(strings.Repeat(" ", left) + s + strings.Repeat(" ", width-n-left)), nil
	case "truncate":
		l, _ := a.arg("length", 0)
		length := 255
		if l.k == KindInt {
			length = int(max(l.n, 0))
		}
		end := "..."
		if v, ok := a.arg("end", 2); ok {
			end = v.text()
		}
		r := []rune(s)
		if len(r) <= length {
			return in, nil
		}
		cut := max(length-utf8.RuneCountInString(end), 0)
		return String(string(r[:cut]) + end), nil
	case "indent":
		width := "    "
		if w, ok := a.arg("width", 0); ok {
			if w.k == KindInt {
				width = strings.Repeat(" ", int(min(max(w.n, 0), 256)))
			} else if w.k == KindString {
				width = w.s
			}
		}
		first, _ := a.arg("first", 1)
		blank, _ := a.arg("blank", 2)
		lines := strings.Split(s, "\n")
		var b strings.Builder
		for i, line := range lines {
			if i > 0 {
				b.WriteByte('\n')
			}
			if i == 0 && first.truth() || i > 0 && (line != "" || blank.truth()) {
				b.WriteString(width)
			}
			b.WriteString(line)
		}
		return String(b.String()), e.lim.bytesN(int64(b.Len()))
	}
	return Value{}, fmt.Errorf("unknown filter %q: %w", name, ErrRuntime)
}

// method returns obj.name bound to obj when the name is a method of its type.
func method(obj Value, name string) (Value, bool) {
	var fn func(e *eval, a *callArgs) (Value, error)
	switch obj.k {
	case KindString:
		fn = stringMethod(obj, name)
	case KindList:
		fn = listMethod(obj, name)
	case KindDict:
		fn = dictMethod(obj, name)
	}
	if fn == nil {
		return Value{}, false
	}
	return funcValue(name, fn), true
}

func stringArg(a *callArgs, name string, i int) (string, bool, error) {
	v, ok := a.arg(name, i)
	if !ok || v.k == KindNone || v.k == KindUndefined {
		return "", false, nil
	}
	if v.k != KindString {
		return "", false, fmt.Errorf("argument %s must be a string, not %s: %w", name, v.k, ErrRuntime)
	}
	return v.s, true, nil
}

func stringMethod(obj Value, name string) func(e *eval, a *callArgs) (Value, error) {
	s := obj.s
	strip := func(left, right bool) func(e *eval, a *callArgs) (Value, error) {
		return func(_ *eval, a *callArgs) (Value, error) {
			chars, ok, err := stringArg(a, "chars", 0)
			if err != nil {
				return Value{}, err
			}
			r := s
			cut := func(r rune) bool { return unicode.IsSpace(r) }
			if ok {
				cut = func(r rune) bool { return strings.ContainsRune(chars, r) }
			}
			if left {
				r = strings.TrimLeftFunc(r, cut)
			}
			if right {
				r = strings.TrimRightFunc(r, cut)
			}
			return String(r), nil
		}
	}
	switch name {
	case "strip":
		return strip(true, true)
	case "lstrip":
		return strip(true, false)
	case "rstrip":
		return strip(false, true)
	case "upper":
		return func(*eval, *callArgs) (Value, error) { return String(strings.ToUpper(s)), nil }
	case "lower":
		return func(*eval, *callArgs) (Value, error) { return String(strings.ToLower(s)), nil }
	case "title":
		return func(*eval, *callArgs) (Value, error) { return String(titleCase(s)), nil }
	case "capitalize":
		return func(*eval, *callArgs) (Value, error) {
			r := []rune(strings.ToLower(s))
			if len(r) > 0 {
				r[0] = unicode.ToUpper(r[0])
			}
			return String(string(r)), nil
		}
	case "startswith", "endswith":
		return func(_ *eval, a *callArgs) (Value, error) {
			if len(a.pos) == 0 {
				return Value{}, fmt.Errorf("%s needs an argument: %w", name, ErrRuntime)
			}
			var cands []Value
			if a.pos[0].k == KindList {
				cands = a.pos[0].o.list
			} else {
				cands = a.pos[:1]
			}
			for _, c := range cands {
				if c.k != KindString {
					return Value{}, fmt.Errorf("%s needs a string, not %s: %w", name, c.k, ErrRuntime)
				}
				if name == "startswith" && strings.HasPrefix(s, c.s) || name == "endswith" && strings.HasSuffix(s, c.s) {
					return Bool(true), nil
				}
			}
			return Bool(false), nil
		}
	case "split", "rsplit":
		return func(e *eval, a *callArgs) (Value, error) {
			sep, hasSep, err := stringArg(a, "sep", 0)
			if err != nil {
				return Value{}, err
			}
			maxsplit := int64(-1)
			if m, ok := a.arg("maxsplit", 1); ok && m.k == KindInt {
				maxsplit = m.n
			}
			var parts []string
			switch {
			case hasSep && sep == "":
				return Value{}, fmt.Errorf("split: empty separator: %w", ErrRuntime)
			case hasSep && maxsplit < 0:
				parts = strings.Split(s, sep)
			case hasSep && name == "split":
				parts = strings.SplitN(s, sep, int(min(maxsplit, 1<<30))+1)
			case hasSep:
				parts = rsplitN(s, sep, int(min(maxsplit, 1<<30)))
			default:
				parts = strings.Fields(s)
				if maxsplit >= 0 && int64(len(parts)) > maxsplit+1 {
					// Rare; re-split keeping the remainder whole.
					parts = fieldsN(s, int(maxsplit), name == "rsplit")
				}
			}
			if err := e.lim.step(int64(len(parts))); err != nil {
				return Value{}, err
			}
			if err := e.lim.bytesN(int64(len(parts)) * 48); err != nil {
				return Value{}, err
			}
			items := make([]Value, len(parts))
			for i, p := range parts {
				items[i] = String(p)
			}
			return List(items...), nil
		}
	case "splitlines":
		return func(e *eval, a *callArgs) (Value, error) {
			lines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), "\n")
			if s == "" {
				lines = nil
			}
			items := make([]Value, len(lines))
			for i, l := range lines {
				items[i] = String(l)
			}
			return List(items...), e.lim.step(int64(len(items)))
		}
	case "replace":
		return func(e *eval, a *callArgs) (Value, error) {
			old, _, err := stringArg(a, "old", 0)
			if err != nil {
				return Value{}, err
			}
			repl, _, err := stringArg(a, "new", 1)
			if err != nil {
				return Value{}, err
			}
			n := -1
			if c, ok := a.arg("count", 2); ok && c.k == KindInt {
				n = int(min(max(c.n, -1), 1<<30))
			}
			// Bound the result before building it.
			matches := int64(strings.Count(s, old))
			if n >= 0 && int64(n) < matches {
				matches = int64(n)
			}
			size := int64(len(s)) + matches*int64(len(repl)-len(old))
			if err := e.lim.bytesN(max(size, 0)); err != nil {
				return Value{}, err
			}
			return String(strings.Replace(s, old, repl, n)), nil
		}
	case "find", "rfind", "index", "count":
		return func(_ *eval, a *callArgs) (Value, error) {
			sub, _, err := stringArg(a, "sub", 0)
			if err != nil {
				return Value{}, err
			}
			var i int
			switch name {
			case "find", "index":
				i = strings.Index(s, sub)
			case "rfind":
				i = strings.LastIndex(s, sub)
			case "count":
				return Int(int64(strings.Count(s, sub))), nil
			}
			if i < 0 {
				if name == "index" {
					return Value{}, fmt.Errorf("substring not found: %w", ErrRuntime)
				}
				return Int(-1), nil
			}
			return Int(int64(utf8.RuneCountInString(s[:i]))), nil
		}
	case "join":
		return func(e *eval, a *callArgs) (Value, error) {
			if len(a.pos) == 0 {
				return Value{}, fmt.Errorf("join needs a list: %w", ErrRuntime)
			}
			return filterJoin(e, a.pos[0], &callArgs{pos: []Value{String(s)}})
		}
	case "format":
		return func(e *eval, a *callArgs) (Value, error) {
			var b strings.Builder
			next := 0
			for i := 0; i < len(s); i++ {
				if s[i] == '{' && i+1 < len(s) && s[i+1] == '}' {
					if next >= len(a.pos) {
						return Value{}, fmt.Errorf("format: not enough arguments: %w", ErrRuntime)
					}
					b.WriteString(a.pos[next].text())
					next++
					i++
					continue
				}
				b.WriteByte(s[i])
			}
			return String(b.String()), e.lim.bytesN(int64(b.Len()))
		}
	case "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower":
		return func(*eval, *callArgs) (Value, error) {
			if s == "" {
				return Bool(false), nil
			}
			ok := true
			for _, r := range s {
				switch name {
				case "isdigit":
					ok = ok && unicode.IsDigit(r)
				case "isalpha":
					ok = ok && unicode.IsLetter(r)
				case "isalnum":
					ok = ok && (unicode.IsLetter(r) || unicode.IsDigit(r))
				case "isspace":
					ok = ok && unicode.IsSpace(r)
				}
			}
			switch name {
			case "isupper":
				ok = strings.ToUpper(s) == s && strings.ToLower(s) != s
			case "islower":
				ok = strings.ToLower(s) == s && strings.ToUpper(s) != s
			}
			return Bool(ok), nil
		}
	}
	return nil
}

func rsplitN(s, sep string, n int) []string {
	var out []string
	for n > 0 {
		i := strings.LastIndex(s, sep)
		if i < 0 {
			break
		}
		out = append(out, s[i+len(sep):])
		s = s[:i]
		n--
	}
	out = append(out, s)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func fieldsN(s string, n int, fromRight bool) []string {
	if fromRight {
		f := strings.Fields(s)
		if len(f) <= n+1 {
			return f
		}
		tail := f[len(f)-n:]
		head := strings.TrimRightFunc(s, unicode.IsSpace)
		for range tail {
			head = strings.TrimRightFunc(head, func(r rune) bool { return !unicode.IsSpace(r) })
			head = strings.TrimRightFunc(head, unicode.IsSpace)
		}
		return append([]string{strings.TrimLeftFunc(head, unicode.IsSpace)}, tail...)
	}
	var out []string
	rest := strings.TrimLeftFunc(s, unicode.IsSpace)
	for len(out) < n && rest != "" {
		i := strings.IndexFunc(rest, unicode.IsSpace)
		if i < 0 {
			break
		}
		out = append(out, rest[:i])
		rest = strings.TrimLeftFunc(rest[i:], unicode.IsSpace)
	}
	if rest != "" {
		out = append(out, rest)
	}
	return out
}

func titleCase(s string) string {
	r := []rune(s)
	prevLetter := false
	for i, c := range r {
		if unicode.IsLetter(c) {
			if prevLetter {
				r[i] = unicode.ToLower(c)
			} else {
				r[i] = unicode.ToUpper(c)
			}
			prevLetter = true
		} else {
			prevLetter = false
		}
	}
	return string(r)
}

func listMethod(obj Value, name string) func(e *eval, a *callArgs) (Value, error) {
	o := obj.o
	switch name {
	case "append":
		return func(e *eval, a *callArgs) (Value, error) {
			if len(a.pos) != 1 {
				return Value{}, fmt.Errorf("append takes one argument: %w", ErrRuntime)
			}
			if err := e.lim.bytesN(48); err != nil {
				return Value{}, err
			}
			o.list = append(o.list, a.pos[0])
			return Value{k: KindNone}, nil
		}
	case "extend":
		return func(e *eval, a *callArgs) (Value, error) {
			if len(a.pos) != 1 || a.pos[0].k != KindList {
				return Value{}, fmt.Errorf("extend takes one list: %w", ErrRuntime)
			}
			add := a.pos[0].o.list
			if err := e.lim.bytesN(int64(len(add)) * 48); err != nil {
				return Value{}, err
			}
			if err := e.lim.step(int64(len(add))); err != nil {
				return Value{}, err
			}
			o.list = append(o.list, add...)
			return Value{k: KindNone}, nil
		}
	case "insert":
		return func(e *eval, a *callArgs) (Value, error) {
			if len(a.pos) != 2 || a.pos[0].k != KindInt {
				return Value{}, fmt.Errorf("insert takes an index and a value: %w", ErrRuntime)
			}
			if err := e.lim.bytesN(48); err != nil {
				return Value{}, err
			}
			i := a.pos[0].n
			if i < 0 {
				i += int64(len(o.list))
			}
			i = min(max(i, 0), int64(len(o.list)))
			o.list = append(o.list, Value{})
			copy(o.list[i+1:], o.list[i:])
			o.list[i] = a.pos[1]
			return Value{k: KindNone}, nil
		}
	case "pop":
		return func(_ *eval, a *callArgs) (Value, error) {
			i := int64(len(o.list) - 1)
			if len(a.pos) > 0 {
				i = a.pos[0].n
				if i < 0 {
					i += int64(len(o.list))
				}
			}
			if i < 0 || i >= int64(len(o.list)) {
				return Value{}, fmt.Errorf("pop index out of range: %w", ErrRuntime)
			}
			v := o.list[i]
			o.list = append(o.list[:i:i], o.list[i+1:]...)
			return v, nil
		}
	case "index", "count":
		return func(e *eval, a *callArgs) (Value, error) {
			if len(a.pos) == 0 {
				return Value{}, fmt.Errorf("%s needs a value: %w", name, ErrRuntime)
			}
			n := 0
			for i, v := range o.list {
				if equal(v, a.pos[0], e.lim) {
					if name == "index" {
						return Int(int64(i)), nil
					}
					n++
				}
			}
			if name == "index" {
				return Value{}, fmt.Errorf("value not in list: %w", ErrRuntime)
			}
			return Int(int64(n)), nil
		}
	case "copy":
		return func(e *eval, _ *callArgs) (Value, error) {
			return List(append([]Value(nil), o.list...)...), e.lim.step(int64(len(o.list)))
		}
	}
	return nil
}

func dictMethod(obj Value, name string) func(e *eval, a *callArgs) (Value, error) {
	o := obj.o
	switch name {
	case "get":
		return func(_ *eval, a *callArgs) (Value, error) {
			if len(a.pos) == 0 {
				return Value{}, fmt.Errorf("get needs a key: %w", ErrRuntime)
			}
			v, ok := o.get(a.pos[0])
			if !ok {
				if len(a.pos) > 1 {
					return a.pos[1], nil
				}
				return None(), nil
			}
			markUsed(v)
			o.used = true
			return v, nil
		}
	case "keys", "values", "items":
		return func(e *eval, _ *callArgs) (Value, error) {
			if err := e.lim.step(int64(len(o.keys))); err != nil {
				return Value{}, err
			}
			o.used = true
			switch name {
			case "keys":
				return List(append([]Value(nil), o.keys...)...), nil
			case "values":
				return List(append([]Value(nil), o.vals...)...), nil
			}
			return dictItems(obj), nil
		}
	case "update":
		return func(e *eval, a *callArgs) (Value, error) {
			for _, p := range a.pos {
				if p.k != KindDict {
					return Value{}, fmt.Errorf("update takes a dict: %w", ErrRuntime)
				}
				for i, k := range p.o.keys {
					o.set(k, p.o.vals[i])
				}
			}
			for _, k := range a.kwNames {
				o.set(String(k), a.kw[k])
			}
			return None(), e.lim.bytesN(int64(len(a.kwNames)+len(a.pos)) * 96)
		}
	case "copy":
		return func(e *eval, _ *callArgs) (Value, error) {
			d := NewDict()
			for i, k := range o.keys {
				d.o.set(k, o.vals[i])
			}
			return d, e.lim.step(int64(len(o.keys)))
		}
	case "pop":
		return func(_ *eval, a *callArgs) (Value, error) {
			if len(a.pos) == 0 {
				return Value{}, fmt.Errorf("pop needs a key: %w", ErrRuntime)
			}
			h, ok := hashKey(a.pos[0])
			i, found := o.index[h]
			if !ok || !found {
				if len(a.pos) > 1 {
					return a.pos[1], nil
				}
				return Value{}, fmt.Errorf("key not found: %w", ErrRuntime)
			}
			v := o.vals[i]
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			o.vals = append(o.vals[:i:i], o.vals[i+1:]...)
			delete(o.index, h)
			for j := i; j < len(o.keys); j++ {
				kh, _ := hashKey(o.keys[j])
				o.index[kh] = j
			}
			return v, nil
		}
	}
	return nil
}
