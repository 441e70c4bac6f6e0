package jinja

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Limits bound one render. Zero fields take the defaults.
type Limits struct {
	// MaxSteps bounds evaluation work: nodes evaluated, loop iterations and
	// items copied. Default 5,000,000 (about a second on a slow core; a
	// real chat template with 100 messages takes well under 100,000).
	MaxSteps int64
	// MaxBytes bounds the bytes of strings and lists a render builds in
	// total, garbage included. Default 256 MiB.
	MaxBytes int64
	// MaxOutput bounds the rendered text. Default 64 MiB.
	MaxOutput int64
	// MaxDepth bounds nested macro calls. Default 100.
	MaxDepth int
}

func (l Limits) withDefaults() Limits {
	if l.MaxSteps <= 0 {
		l.MaxSteps = 5_000_000
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = 256 << 20
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = 64 << 20
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = 100
	}
	return l
}

// Options configure a render.
type Options struct {
	Limits Limits
	// Now is the time strftime_now formats. Zero means time.Now().
	Now time.Time
}

type budget struct {
	lim   Limits
	steps int64
	built int64
}

func (b *budget) step(n int64) error {
	b.steps += n
	if b.steps > b.lim.MaxSteps {
		return fmt.Errorf("jinja: render took more than %d steps: %w", b.lim.MaxSteps, ErrLimit)
	}
	return nil
}

func (b *budget) bytesN(n int64) error {
	b.built += n
	if b.built > b.lim.MaxBytes {
		return fmt.Errorf("jinja: render built more than %d bytes: %w", b.lim.MaxBytes, ErrLimit)
	}
	return nil
}

// Render renders the template with the given global variables.
func (t *Template) Render(vars map[string]Value, opts Options) (out string, err error) {
	e := &eval{
		t:   t,
		lim: &budget{lim: opts.Limits.withDefaults()},
		now: opts.Now,
	}
	if e.now.IsZero() {
		e.now = time.Now()
	}
	defer func() {
		// A bug here must not take the caller's process down.
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("jinja: internal error (a bug): %v: %w", r, ErrRuntime)
		}
	}()
	global := &scope{vars: make(map[string]Value, len(vars))}
	for k, v := range vars {
		global.vars[k] = v
	}
	var b strings.Builder
	e.out = &b
	if err := e.stmts(t.body, global); err != nil {
		if errors.Is(err, errBreak) || errors.Is(err, errContinue) {
			return "", fmt.Errorf("jinja: break or continue outside a loop: %w", ErrRuntime)
		}
		return "", err
	}
	return b.String(), nil
}

type scope struct {
	vars   map[string]Value
	parent *scope
}

func (s *scope) lookup(name string) (Value, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return Value{}, false
}

func (s *scope) set(name string, v Value) {
	if s.vars == nil {
		s.vars = map[string]Value{}
	}
	s.vars[name] = v
}

var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

type eval struct {
	t     *Template
	lim   *budget
	now   time.Time
	out   *strings.Builder
	depth int
}

func (e *eval) errAt(n *node, format string, args ...any) error {
	return &posError{ErrRuntime, n.pos, fmt.Sprintf("jinja: %s: %s", lineCol(e.t.src, n.pos), fmt.Sprintf(format, args...))}
}

// wrapAt adds the position to an error from a builtin that has none.
func (e *eval) wrapAt(n *node, err error) error {
	var pe *posError
	if errors.As(err, &pe) || errors.Is(err, errBreak) || errors.Is(err, errContinue) {
		return err
	}
	sentinel := ErrRuntime
	for _, s := range []error{ErrLimit, ErrRaised, ErrSyntax} {
		if errors.Is(err, s) {
			sentinel = s
		}
	}
	msg := strings.TrimPrefix(err.Error(), "jinja: ")
	return &posError{sentinel, n.pos, fmt.Sprintf("jinja: %s: %s", lineCol(e.t.src, n.pos), msg)}
}

// valueAt is v, or, when a builtin (index, slice, call, operator, filter
// or test at n) failed, err with n's position (wrapAt).
func (e *eval) valueAt(n *node, v Value, err error) (Value, error) {
	if err != nil {
		return Value{}, e.wrapAt(n, err)
	}
	return v, nil
}

func (e *eval) write(s string) error {
	if int64(e.out.Len()+len(s)) > e.lim.lim.MaxOutput {
		return fmt.Errorf("jinja: output longer than %d bytes: %w", e.lim.lim.MaxOutput, ErrLimit)
	}
	if err := e.lim.bytesN(int64(len(s))); err != nil {
		return err
	}
	e.out.WriteString(s)
	return nil
}

// capture runs fn with output going to a fresh buffer and returns it.
func (e *eval) capture(fn func() error) (string, error) {
	saved := e.out
	var b strings.Builder
	e.out = &b
	err := fn()
	e.out = saved
	return b.String(), err
}

func (e *eval) stmts(list []*node, s *scope) error {
	for _, n := range list {
		if err := e.stmt(n, s); err != nil {
			return err
		}
	}
	return nil
}

func (e *eval) stmt(n *node, s *scope) error {
	if err := e.lim.step(1); err != nil {
		return err
	}
	switch n.kind {
	case nText:
		return e.write(n.name)
	case nOutput:
		v, err := e.expr(n.a, s)
		if err != nil {
			return err
		}
		markUsed(v)
		text, err := e.str(v)
		if err != nil {
			return err
		}
		return e.write(text)
	case nIf:
		v, err := e.expr(n.a, s)
		if err != nil {
			return err
		}
		if v.truth() {
			return e.stmts(n.body, s)
		}
		return e.stmts(n.els, s)
	case nFor:
		return e.forLoop(n, s)
	case nSet:
		v, err := e.expr(n.b, s)
		if err != nil {
			return err
		}
		return e.assign(n.a, v, s)
	case nSetBlock:
		text, err := e.capture(func() error { return e.stmts(n.body, s) })
		if err != nil {
			return err
		}
		v := String(text)
		if n.c != nil {
			if v, err = e.applyFilter(n.c, v, s); err != nil {
				return err
			}
		}
		s.set(n.a.name, v)
		return nil
	case nMacro:
		s.set(n.name, e.macro(n, s))
		return nil
	case nCallBlock:
		return e.callBlock(n, s)
	case nFilterBlock:
		text, err := e.capture(func() error { return e.stmts(n.body, s) })
		if err != nil {
			return err
		}
		v, err := e.applyFilter(n.a, String(text), s)
		if err != nil {
			return err
		}
		if text, err = e.str(v); err != nil {
			return err
		}
		return e.write(text)
	case nBreak:
		return errBreak
	case nContinue:
		return errContinue
	case nDo:
		_, err := e.expr(n.a, s)
		return err
	case nNoop:
		return nil
	}
	return e.errAt(n, "cannot execute node %d", n.kind)
}

func (e *eval) assign(target *node, v Value, s *scope) error {
	switch target.kind {
	case nName:
		s.set(target.name, v)
	case nAttr:
		obj, err := e.expr(target.a, s)
		if err != nil {
			return err
		}
		if obj.k != KindDict {
			return e.errAt(target, "cannot set attribute %q of a %s", target.name, obj.k)
		}
		obj.o.set(String(target.name), v)
	case nTuple:
		if v.k != KindList {
			return e.errAt(target, "cannot unpack a %s", v.k)
		}
		if len(v.o.list) != len(target.args) {
			return e.errAt(target, "cannot unpack %d values into %d names", len(v.o.list), len(target.args))
		}
		for i, t := range target.args {
			if err := e.assign(t, v.o.list[i], s); err != nil {
				return err
			}
		}
	default:
		return e.errAt(target, "cannot assign to this expression")
	}
	return nil
}

func (e *eval) forLoop(n *node, s *scope) error {
	loopScope := &scope{parent: s}
	iter, err := e.expr(n.b, loopScope)
	if err != nil {
		return err
	}
	markOp(iter, OpIndexed)
	var items []Value
	switch iter.k {
	case KindUndefined, KindNone:
	case KindList:
		items = iter.o.list
	case KindDict:
		items = iter.o.keys
		if n.a.kind == nTuple {
			// llama.cpp lets "for k, v in d" iterate the items.
			items = dictItems(iter).o.list
		}
	case KindString:
		for _, r := range iter.s {
			items = append(items, String(string(r)))
		}
	default:
		return e.errAt(n, "cannot loop over a %s", iter.k)
	}
	// Snapshot so that appends inside the body do not extend the loop.
	items = append([]Value(nil), items...)
	if err := e.lim.step(int64(len(items))); err != nil {
		return err
	}
	if n.c != nil {
		kept := items[:0:0]
		for _, it := range items {
			if err := e.assign(n.a, it, loopScope); err != nil {
				return err
			}
			ok, err := e.expr(n.c, loopScope)
			if err != nil {
				return err
			}
			if ok.truth() {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		return e.stmts(n.els, s)
	}
	// One loop object per loop, updated in place: building a dict per
	// iteration would cost more than most loop bodies.
	loop := NewDict()
	loop.o.plain = true
	size := int64(len(items))
	cur := 0
	loop.Set("length", Int(size))
	loop.Set("cycle", funcValue("cycle", func(_ *eval, a *callArgs) (Value, error) {
		if len(a.pos) == 0 {
			return Value{}, fmt.Errorf("loop.cycle needs arguments: %w", ErrRuntime)
		}
		return a.pos[cur%len(a.pos)], nil
	}))
	for i, it := range items {
		if err := e.lim.step(1); err != nil {
			return err
		}
		cur = i
		loop.Set("index", Int(int64(i)+1))
		loop.Set("index0", Int(int64(i)))
		loop.Set("revindex", Int(size-int64(i)))
		loop.Set("revindex0", Int(size-int64(i)-1))
		loop.Set("first", Bool(i == 0))
		loop.Set("last", Bool(i == len(items)-1))
		var prev, next Value
		if i > 0 {
			prev = items[i-1]
		}
		if i < len(items)-1 {
			next = items[i+1]
		}
		loop.Set("previtem", prev)
		loop.Set("nextitem", next)
		loopScope.set("loop", loop)
		if err := e.assign(n.a, it, loopScope); err != nil {
			return err
		}
		err := e.stmts(n.body, loopScope)
		if errors.Is(err, errBreak) {
			break
		}
		if err != nil && !errors.Is(err, errContinue) {
			return err
		}
	}
	return nil
}

func funcValue(name string, fn func(e *eval, a *callArgs) (Value, error)) Value {
	return Value{k: KindFunc, o: &object{fn: &function{name: name, call: fn}}}
}

// macro makes the function value of a {% macro %}. Like llama.cpp, a macro
// body runs in a scope on top of its caller's.
func (e *eval) macro(n *node, _ *scope) Value {
	return funcValue(n.name, func(e *eval, a *callArgs) (Value, error) {
		return e.runMacro(n, n.args, n.body, a, nil)
	})
}

func (e *eval) runMacro(n *node, params []*node, body []*node, a *callArgs, extra map[string]Value) (Value, error) {
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > e.lim.lim.MaxDepth {
		return Value{}, fmt.Errorf("jinja: macro calls nested deeper than %d: %w", e.lim.lim.MaxDepth, ErrLimit)
	}
	ms := &scope{parent: a.scope, vars: map[string]Value{}}
	for k, v := range extra {
		ms.vars[k] = v
	}
	var rest []Value
	for i, v := range a.pos {
		if i < len(params) {
			ms.vars[params[i].name] = v
		} else {
			rest = append(rest, v)
		}
	}
	kw := NewDict()
	for _, k := range a.kwNames {
		found := false
		for _, p := range params {
			if p.name == k {
				ms.vars[k] = a.kw[k]
				found = true
			}
		}
		if !found {
			kw.Set(k, a.kw[k])
		}
	}
	for i, p := range params {
		if _, ok := ms.vars[p.name]; ok && (i < len(a.pos) || a.has(p.name)) {
			continue
		}
		if p.a != nil {
			v, err := e.expr(p.a, ms)
			if err != nil {
				return Value{}, err
			}
			ms.vars[p.name] = v
		} else {
			ms.vars[p.name] = Value{s: p.name}
		}
	}
	ms.vars["varargs"] = List(rest...)
	ms.vars["kwargs"] = kw
	text, err := e.capture(func() error { return e.stmts(body, ms) })
	if err != nil {
		return Value{}, err
	}
	return String(text), nil
}

func (e *eval) callBlock(n *node, s *scope) error {
	call := n.a
	callee, err := e.expr(call.a, s)
	if err != nil {
		return err
	}
	if callee.k != KindFunc {
		return e.errAt(n, "{%% call %%} of a %s", callee.k)
	}
	caller := funcValue("caller", func(e *eval, a *callArgs) (Value, error) {
		return e.runMacro(n, n.args, n.body, &callArgs{pos: a.pos, kw: a.kw, kwNames: a.kwNames, scope: s}, nil)
	})
	a, err := e.args(call.args, s)
	if err != nil {
		return err
	}
	a.scope = &scope{parent: s, vars: map[string]Value{"caller": caller}}
	v, err := callee.o.fn.call(e, a)
	if err != nil {
		return e.wrapAt(n, err)
	}
	text, err := e.str(v)
	if err != nil {
		return err
	}
	return e.write(text)
}

// callArgs holds the arguments of a call: positional, then keyword.
type callArgs struct {
	pos     []Value
	kw      map[string]Value
	kwNames []string
	scope   *scope
}

func (a *callArgs) has(name string) bool {
	_, ok := a.kw[name]
	return ok
}

// arg returns keyword name, or positional i when that was not given.
func (a *callArgs) arg(name string, i int) (Value, bool) {
	if v, ok := a.kw[name]; ok {
		return v, true
	}
	if i >= 0 && i < len(a.pos) {
		return a.pos[i], true
	}
	return Value{}, false
}

func (e *eval) args(list []*node, s *scope) (*callArgs, error) {
	a := &callArgs{scope: s}
	for _, n := range list {
		switch n.kind {
		case nKwarg:
			v, err := e.expr(n.a, s)
			if err != nil {
				return nil, err
			}
			if a.kw == nil {
				a.kw = map[string]Value{}
			}
			if _, dup := a.kw[n.name]; !dup {
				a.kwNames = append(a.kwNames, n.name)
			}
			a.kw[n.name] = v
		case nSpread:
			v, err := e.expr(n.a, s)
			if err != nil {
				return nil, err
			}
			if v.k != KindList {
				return nil, e.errAt(n, "cannot unpack a %s into arguments", v.k)
			}
			a.pos = append(a.pos, v.o.list...)
		default:
			v, err := e.expr(n, s)
			if err != nil {
				return nil, err
			}
			a.pos = append(a.pos, v)
		}
	}
	return a, nil
}

func (e *eval) expr(n *node, s *scope) (Value, error) {
	if err := e.lim.step(1); err != nil {
		return Value{}, err
	}
	switch n.kind {
	case nLiteral:
		return n.val, nil
	case nName:
		if v, ok := s.lookup(n.name); ok {
			markUsed(v)
			return v, nil
		}
		if f, ok := globals[n.name]; ok {
			return f, nil
		}
		return Value{s: n.name}, nil
	case nList, nTuple:
		items := make([]Value, 0, len(n.args))
		for _, a := range n.args {
			v, err := e.expr(a, s)
			if err != nil {
				return Value{}, err
			}
			items = append(items, v)
		}
		if err := e.lim.bytesN(int64(len(items)) * 48); err != nil {
			return Value{}, err
		}
		if n.kind == nTuple {
			return tuple(items), nil
		}
		return List(items...), nil
	case nDict:
		d := NewDict()
		for i := 0; i+1 < len(n.args); i += 2 {
			k, err := e.expr(n.args[i], s)
			if err != nil {
				return Value{}, err
			}
			v, err := e.expr(n.args[i+1], s)
			if err != nil {
				return Value{}, err
			}
			if !d.o.set(k, v) {
				return Value{}, e.errAt(n.args[i], "a %s cannot be a dict key", k.k)
			}
		}
		if err := e.lim.bytesN(int64(len(n.args)) * 48); err != nil {
			return Value{}, err
		}
		return d, nil
	case nAttr:
		obj, err := e.expr(n.a, s)
		if err != nil {
			return Value{}, err
		}
		return e.attr(obj, n.name), nil
	case nIndex:
		obj, key, err := e.operands(n, s)
		if err != nil {
			return Value{}, err
		}
		v, err := e.index(obj, key)
		return e.valueAt(n, v, err)
	case nSlice:
		obj, err := e.expr(n.a, s)
		if err != nil {
			return Value{}, err
		}
		var bounds [3]Value
		for i, b := range n.args {
			if b != nil {
				if bounds[i], err = e.expr(b, s); err != nil {
					return Value{}, err
				}
			}
		}
		v, err := e.slice(obj, bounds)
		return e.valueAt(n, v, err)
	case nCall:
		callee, a, err := e.operandArgs(n, s)
		if err != nil {
			return Value{}, err
		}
		if callee.k != KindFunc {
			what := callee.k.String()
			if callee.k == KindUndefined && callee.s != "" {
				what = "undefined " + callee.s
			}
			return Value{}, e.errAt(n, "cannot call %s", what)
		}
		v, err := callee.o.fn.call(e, a)
		return e.valueAt(n, v, err)
	case nFilter:
		in, err := e.expr(n.a, s)
		if err != nil {
			return Value{}, err
		}
		return e.applyFilter(n, in, s)
	case nTest:
		in, a, err := e.operandArgs(n, s)
		if err != nil {
			return Value{}, err
		}
		ok, err := runTest(e, n.name, in, a.pos)
		return e.valueAt(n, Bool(ok), err)
	case nNot:
		v, err := e.expr(n.a, s)
		if err != nil {
			return Value{}, err
		}
		return Bool(!v.truth()), nil
	case nAnd:
		l, err := e.expr(n.a, s)
		if err != nil || !l.truth() {
			return l, err
		}
		return e.expr(n.b, s)
	case nOr:
		l, err := e.expr(n.a, s)
		if err != nil || l.truth() {
			return l, err
		}
		return e.expr(n.b, s)
	case nCond:
		c, err := e.expr(n.a, s)
		if err != nil {
			return Value{}, err
		}
		if c.truth() {
			return e.expr(n.b, s)
		}
		if n.c == nil {
			return Value{}, nil
		}
		return e.expr(n.c, s)
	case nUnary:
		v, err := e.expr(n.a, s)
		if err != nil {
			return Value{}, err
		}
		switch {
		case v.k == KindInt || v.k == KindBool:
			if n.name == "-" {
				return Int(-v.n), nil
			}
			return Int(v.n), nil
		case v.k == KindFloat:
			if n.name == "-" {
				return Float(-v.f), nil
			}
			return v, nil
		}
		return Value{}, e.errAt(n, "unary %s of a %s", n.name, v.k)
	case nBinary:
		l, r, err := e.operands(n, s)
		if err != nil {
			return Value{}, err
		}
		v, err := e.binary(n.name, l, r)
		return e.valueAt(n, v, err)
	}
	return Value{}, e.errAt(n, "cannot evaluate node %d here", n.kind)
}

// operands evaluates n's two operands, n.a then n.b.
func (e *eval) operands(n *node, s *scope) (a, b Value, err error) {
	if a, err = e.expr(n.a, s); err != nil {
		return Value{}, Value{}, err
	}
	b, err = e.expr(n.b, s)
	return a, b, err
}

// operandArgs evaluates n's operand n.a, then its arguments n.args.
func (e *eval) operandArgs(n *node, s *scope) (Value, *callArgs, error) {
	v, err := e.expr(n.a, s)
	if err != nil {
		return Value{}, nil, err
	}
	a, err := e.args(n.args, s)
	return v, a, err
}

func (e *eval) applyFilter(n *node, in Value, s *scope) (Value, error) {
	a, err := e.args(n.args, s)
	if err != nil {
		return Value{}, err
	}
	v, err := runFilter(e, n.name, in, a)
	return e.valueAt(n, v, err)
}

// attr is obj.name: a method of the object's type first (as in Jinja,
// d.items is the method even when d has a key "items"), then a dict key.
func (e *eval) attr(obj Value, name string) Value {
	if obj.k != KindDict || !obj.o.plain {
		if m, ok := method(obj, name); ok {
			markUsed(obj)
			return m
		}
	}
	if obj.k == KindDict {
		v, _ := obj.o.get(String(name))
		markUsed(v)
		markOp(obj, OpAttr)
		return v
	}
	return Value{}
}

// index is obj[key].
func (e *eval) index(obj, key Value) (Value, error) {
	switch obj.k {
	case KindDict:
		v, ok := obj.o.get(key)
		if !ok && key.k == KindString {
			if m, ok := method(obj, key.s); ok {
				return m, nil
			}
		}
		markUsed(v)
		markUsed(key)
		markOp(obj, OpAttr)
		return v, nil
	case KindList:
		if key.k == KindString {
			m, _ := method(obj, key.s)
			return m, nil
		}
		if key.k != KindInt && key.k != KindBool {
			return Value{}, fmt.Errorf("list index must be an integer, not %s: %w", key.k, ErrRuntime)
		}
		i := key.n
		if i < 0 {
			i += int64(len(obj.o.list))
		}
		markOp(obj, OpIndexed)
		if i < 0 || i >= int64(len(obj.o.list)) {
			return Value{}, nil
		}
		v := obj.o.list[i]
		markUsed(v)
		return v, nil
	case KindString:
		if key.k == KindString {
			m, _ := method(obj, key.s)
			return m, nil
		}
		if key.k != KindInt {
			return Value{}, fmt.Errorf("string index must be an integer, not %s: %w", key.k, ErrRuntime)
		}
		markOp(obj, OpIndexed)
		r := []rune(obj.s)
		i := key.n
		if i < 0 {
			i += int64(len(r))
		}
		if i < 0 || i >= int64(len(r)) {
			return Value{}, nil
		}
		return String(string(r[i])), nil
	case KindUndefined, KindNone:
		return Value{}, nil
	}
	return Value{}, fmt.Errorf("cannot index a %s: %w", obj.k, ErrRuntime)
}

// slice is obj[a:b:c] with Python's rules.
func (e *eval) slice(obj Value, b [3]Value) (Value, error) {
	step := int64(1)
	if b[2].k != KindUndefined && b[2].k != KindNone {
		if b[2].k != KindInt {
			return Value{}, fmt.Errorf("slice step must be an integer: %w", ErrRuntime)
		}
		step = b[2].n
	}
	if step == 0 {
		return Value{}, fmt.Errorf("slice step cannot be zero: %w", ErrRuntime)
	}
	var n int64
	var runes []rune
	switch obj.k {
	case KindList:
		n = int64(len(obj.o.list))
		markOp(obj, OpIndexed)
	case KindString:
		runes = []rune(obj.s)
		n = int64(len(runes))
	case KindUndefined, KindNone:
		return Value{}, nil
	default:
		return Value{}, fmt.Errorf("cannot slice a %s: %w", obj.k, ErrRuntime)
	}
	bound := func(v Value, def int64) (int64, error) {
		if v.k == KindUndefined || v.k == KindNone {
			return def, nil
		}
		if v.k != KindInt {
			return 0, fmt.Errorf("slice bounds must be integers: %w", ErrRuntime)
		}
		i := v.n
		if i < 0 {
			i += n
			if i < 0 {
				if step < 0 {
					i = -1
				} else {
					i = 0
				}
			}
		} else if i >= n {
			if step < 0 {
				i = n - 1
			} else {
				i = n
			}
		}
		return i, nil
	}
	var start, stop int64
	var err error
	if step > 0 {
		if start, err = bound(b[0], 0); err != nil {
			return Value{}, err
		}
		if stop, err = bound(b[1], n); err != nil {
			return Value{}, err
		}
	} else {
		if start, err = bound(b[0], n-1); err != nil {
			return Value{}, err
		}
		if stop, err = bound(b[1], -1); err != nil {
			return Value{}, err
		}
	}
	var idx []int64
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		idx = append(idx, i)
	}
	if err := e.lim.step(int64(len(idx))); err != nil {
		return Value{}, err
	}
	if obj.k == KindString {
		var sb strings.Builder
		for _, i := range idx {
			sb.WriteRune(runes[i])
		}
		return String(sb.String()), e.lim.bytesN(int64(sb.Len()))
	}
	items := make([]Value, len(idx))
	for j, i := range idx {
		items[j] = obj.o.list[i]
	}
	if obj.o.tuple {
		return tuple(items), nil
	}
	return List(items...), e.lim.bytesN(int64(len(items)) * 48)
}

func (e *eval) binary(op string, l, r Value) (Value, error) {
	switch op {
	case "==":
		return Bool(equal(l, r, e.lim)), nil
	case "!=":
		return Bool(!equal(l, r, e.lim)), nil
	case "in", "not in":
		ok, err := contains(r, l, e.lim)
		if err != nil {
			return Value{}, err
		}
		return Bool(ok == (op == "in")), nil
	case "<", ">", "<=", ">=":
		var ok bool
		var err error
		switch op {
		case "<":
			ok, err = less(l, r, e.lim)
		case ">":
			ok, err = less(r, l, e.lim)
		case "<=":
			ok, err = less(r, l, e.lim)
			ok = !ok
		case ">=":
			ok, err = less(l, r, e.lim)
			ok = !ok
		}
		return Bool(ok), err
	case "~":
		return e.concat(l, r)
	case "+":
		switch {
		case l.isNumber() && r.isNumber():
			return arith(op, l, r)
		case l.k == KindList && r.k == KindList:
			if err := e.lim.bytesN(int64(len(l.o.list)+len(r.o.list)) * 48); err != nil {
				return Value{}, err
			}
			if err := e.lim.step(int64(len(l.o.list) + len(r.o.list))); err != nil {
				return Value{}, err
			}
			items := append(append(make([]Value, 0, len(l.o.list)+len(r.o.list)), l.o.list...), r.o.list...)
			return List(items...), nil
		case l.k == KindString || r.k == KindString:
			// llama.cpp concatenates a string with anything, none and
			// undefined counting as empty.
			return e.concat(l, r)
		}
	case "*":
		if l.k == KindString && r.k == KindInt || l.k == KindInt && r.k == KindString {
			str, n := l.s, r.n
			if l.k == KindInt {
				str, n = r.s, l.n
			}
			if n <= 0 || str == "" {
				return String(""), nil
			}
			if n > e.lim.lim.MaxBytes/int64(len(str)) {
				return Value{}, fmt.Errorf("string repetition of %d bytes: %w", n*int64(len(str)), ErrLimit)
			}
			if err := e.lim.bytesN(n * int64(len(str))); err != nil {
				return Value{}, err
			}
			return String(strings.Repeat(str, int(n))), nil
		}
		if l.isNumber() && r.isNumber() {
			return arith(op, l, r)
		}
	case "-", "/", "//", "%", "**":
		if l.isNumber() && r.isNumber() {
			return arith(op, l, r)
		}
		if op == "%" && l.k == KindString {
			return Value{}, fmt.Errorf("%%-formatting of strings is not supported: %w", ErrRuntime)
		}
	}
	return Value{}, fmt.Errorf("unsupported operation: %s %s %s: %w", l.k, op, r.k, ErrRuntime)
}

// concat joins two values' texts; like llama.cpp, none and undefined count
// as empty there.
func (e *eval) concat(l, r Value) (Value, error) {
	a, err := e.concatText(l)
	if err != nil {
		return Value{}, err
	}
	b, err := e.concatText(r)
	if err != nil {
		return Value{}, err
	}
	if err := e.lim.bytesN(int64(len(a) + len(b))); err != nil {
		return Value{}, err
	}
	return String(a + b), nil
}

func (e *eval) concatText(v Value) (string, error) {
	if v.k == KindNone {
		return "", nil
	}
	return e.str(v)
}

// str is the text "{{ v }}" prints; printing a list or dict costs a step
// per item, so printing a huge or self-containing one stays bounded.
func (e *eval) str(v Value) (string, error) {
	if v.k != KindList && v.k != KindDict {
		return v.text(), nil
	}
	var b strings.Builder
	writeRepr(&b, v, 0, e.lim)
	if e.lim.steps > e.lim.lim.MaxSteps {
		return "", fmt.Errorf("jinja: render took more than %d steps: %w", e.lim.lim.MaxSteps, ErrLimit)
	}
	return b.String(), e.lim.bytesN(int64(b.Len()))
}

func arith(op string, l, r Value) (Value, error) {
	if l.k != KindFloat && r.k != KindFloat {
		a, b := l.n, r.n
		switch op {
		case "+":
			if s := a + b; (s > a) == (b > 0) {
				return Int(s), nil
			}
		case "-":
			if d := a - b; (d < a) == (b > 0) {
				return Int(d), nil
			}
		case "*":
			if a == 0 || b == 0 {
				return Int(0), nil
			}
			if p := a * b; p/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64) {
				return Int(p), nil
			}
		case "//", "%":
			if b == 0 {
				return Value{}, fmt.Errorf("integer division or modulo by zero: %w", ErrRuntime)
			}
			q, m := a/b, a%b
			if m != 0 && (m < 0) != (b < 0) { // floor, as Python
				q--
				m += b
			}
			if op == "//" {
				return Int(q), nil
			}
			return Int(m), nil
		case "**":
			if b >= 0 {
				res := int64(1)
				for i := int64(0); i < b; i++ {
					if res != 0 && (res*a)/a != res {
						return Float(math.Pow(float64(a), float64(b))), nil
					}
					res *= a
					if res == 0 || res == 1 && a == 1 {
						break
					}
				}
				return Int(res), nil
			}
		}
	}
	a, b := l.num(), r.num()
	switch op {
	case "+":
		return Float(a + b), nil
	case "-":
		return Float(a - b), nil
	case "*":
		return Float(a * b), nil
	case "/":
		if b == 0 {
			return Value{}, fmt.Errorf("division by zero: %w", ErrRuntime)
		}
		return Float(a / b), nil
	case "//":
		if b == 0 {
			return Value{}, fmt.Errorf("division by zero: %w", ErrRuntime)
		}
		return Float(math.Floor(a / b)), nil
	case "%":
		if b == 0 {
			return Value{}, fmt.Errorf("modulo by zero: %w", ErrRuntime)
		}
		m := math.Mod(a, b)
		if m != 0 && (m < 0) != (b < 0) {
			m += b
		}
		return Float(m), nil
	case "**":
		return Float(math.Pow(a, b)), nil
	}
	return Value{}, fmt.Errorf("unsupported operator %s: %w", op, ErrRuntime)
}

// contains is "needle in hay".
func contains(hay, needle Value, lim *budget) (bool, error) {
	switch hay.k {
	case KindUndefined:
		return false, nil
	case KindList:
		markOp(hay, OpIndexed)
		for _, it := range hay.o.list {
			if equal(it, needle, lim) {
				return true, nil
			}
		}
		return false, nil
	case KindString:
		if needle.k != KindString {
			return false, fmt.Errorf("'in <string>' needs a string on the left, not %s: %w", needle.k, ErrRuntime)
		}
		return strings.Contains(hay.s, needle.s), nil
	case KindDict:
		_, ok := hay.o.get(needle)
		return ok, nil
	}
	return false, fmt.Errorf("'in' needs a list, string or dict on the right, not %s: %w", hay.k, ErrRuntime)
}
