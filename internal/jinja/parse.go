package jinja

import (
	"fmt"
	"slices"
	"strconv"
)

// maxNesting bounds how deeply expressions and blocks may nest in a
// template, so that parsing and evaluating cannot exhaust the stack.
const maxNesting = 200

// Node kinds of the syntax tree. One struct serves all nodes; fields unused
// by a kind stay zero. That keeps the evaluator a single switch.
type nodeKind uint8

const (
	// statements
	nText nodeKind = iota
	nOutput
	nIf
	nFor
	nSet
	nSetBlock
	nMacro
	nCallBlock
	nFilterBlock
	nBreak
	nContinue
	nNoop
	nDo
	// expressions
	nLiteral
	nName
	nList
	nTuple
	nDict
	nAttr  // x.name
	nIndex // x[expr]
	nSlice // x[a:b:c]
	nCall
	nFilter
	nTest
	nUnary
	nBinary
	nAnd
	nOr
	nNot
	nCond // a if c else b
	nKwarg
	nSpread
)

type node struct {
	kind nodeKind
	pos  int
	name string // identifier, attribute, operator, filter/test name, text
	val  Value  // literal
	a    *node  // operand / object / test / target
	b    *node  // second operand
	c    *node  // third (slice step, cond else, for filter)
	args []*node
	body []*node
	els  []*node
}

// Template is a parsed template. It is immutable and safe for concurrent use.
type Template struct {
	src  string
	body []*node
}

// Parse parses a template source.
func Parse(source string) (*Template, error) {
	toks, src, err := lex(source)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, src: src}
	body, end, err := p.block()
	if err != nil {
		return nil, err
	}
	if end != "" {
		return nil, syntaxErr(src, p.peek().pos, "unexpected {%% %s %%}", end)
	}
	return &Template{src: src, body: body}, nil
}

// Source returns the template source as parsed (line ends normalised).
func (t *Template) Source() string { return t.src }

type parser struct {
	toks  []token
	i     int
	src   string
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekN(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) errf(pos int, format string, args ...any) error {
	return syntaxErr(p.src, pos, format, args...)
}

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tOp && t.val == op
}

func (p *parser) isName(name string) bool {
	t := p.peek()
	return t.kind == tName && t.val == name
}

// after parses, by parse, what follows the operator or word tok when it
// comes next (taking tok), and is nil when it does not: an optional part
// ("= default", "else b", "| filter").
func (p *parser) after(tok string, parse func() (*node, error)) (*node, error) {
	if !p.isOp(tok) && !p.isName(tok) {
		return nil, nil
	}
	p.next()
	return parse()
}

func (p *parser) expectOp(op string) error {
	t := p.next()
	if t.kind != tOp || t.val != op {
		return p.errf(t.pos, "expected %q, found %s", op, describe(t))
	}
	return nil
}

func (p *parser) expectName() (token, error) {
	t := p.next()
	if t.kind != tName {
		return t, p.errf(t.pos, "expected a name, found %s", describe(t))
	}
	return t, nil
}

func (p *parser) expectClose() error {
	t := p.next()
	if t.kind != tCloseStmt {
		return p.errf(t.pos, "expected %%}, found %s", describe(t))
	}
	return nil
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of template"
	case tText:
		return "text"
	case tString:
		return strconv.Quote(t.val)
	}
	return strconv.Quote(t.val)
}

func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > maxNesting {
		return &posError{ErrLimit, pos, fmt.Sprintf("jinja: at %s: template nests deeper than %d", lineCol(p.src, pos), maxNesting)}
	}
	return nil
}

// block parses statements until an end tag it does not own ({% endfor %},
// {% else %} …) or the end, and returns that tag's name ("" at the end).
// The end tag's "{%" and name are consumed; its arguments and "%}" are not.
func (p *parser) block() ([]*node, string, error) {
	var out []*node
	for {
		t := p.peek()
		switch t.kind {
		case tEOF:
			return out, "", nil
		case tText:
			p.next()
			out = append(out, &node{kind: nText, pos: t.pos, name: t.val})
		case tOpenExpr:
			p.next()
			e, err := p.expr()
			if err != nil {
				return nil, "", err
			}
			if c := p.next(); c.kind != tCloseExpr {
				return nil, "", p.errf(c.pos, "expected }}, found %s", describe(c))
			}
			out = append(out, &node{kind: nOutput, pos: t.pos, a: e})
		case tOpenStmt:
			p.next()
			nameTok, err := p.expectName()
			if err != nil {
				return nil, "", err
			}
			switch nameTok.val {
			case "endif", "elif", "else", "endfor", "endmacro", "endset", "endcall", "endfilter":
				return out, nameTok.val, nil
			}
			st, err := p.statement(nameTok)
			if err != nil {
				return nil, "", err
			}
			if st != nil {
				out = append(out, st)
			}
		default:
			return nil, "", p.errf(t.pos, "unexpected %s", describe(t))
		}
	}
}

// statementParsers parse the statements after their tag's name, at pos.
var statementParsers map[string]func(p *parser, pos int) (*node, error)

func init() {
	// Set here, not where declared: the parsers reach statement, which
	// reads the map, and Go refuses such a cycle in an initializer.
	statementParsers = map[string]func(p *parser, pos int) (*node, error){
		"if":     (*parser).ifStatement,
		"for":    (*parser).forStatement,
		"set":    (*parser).setStatement,
		"macro":  (*parser).macroStatement,
		"call":   (*parser).callStatement,
		"filter": (*parser).filterStatement,
	}
}

func (p *parser) statement(nameTok token) (*node, error) {
	if err := p.enter(nameTok.pos); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	pos := nameTok.pos
	if parse, ok := statementParsers[nameTok.val]; ok {
		return parse(p, pos)
	}
	switch nameTok.val {
	case "break", "continue":
		if err := p.expectClose(); err != nil {
			return nil, err
		}
		if nameTok.val == "break" {
			return &node{kind: nBreak, pos: pos}, nil
		}
		return &node{kind: nContinue, pos: pos}, nil
	case "do":
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		return &node{kind: nDo, pos: pos, a: e}, p.expectClose()
	case "generation", "endgeneration":
		// Hugging Face's marker for assistant masks: nothing to render.
		return &node{kind: nNoop, pos: pos}, p.expectClose()
	}
	return nil, p.errf(pos, "unknown statement %q", nameTok.val)
}

// endTag checks that a block ended with one of the wanted tags.
func (p *parser) endTag(got string, pos int, want ...string) error {
	for _, w := range want {
		if got == w {
			return nil
		}
	}
	if got == "" {
		return p.errf(pos, "missing {%% %s %%}", want[len(want)-1])
	}
	return p.errf(p.peek().pos, "unexpected {%% %s %%}", got)
}

func (p *parser) ifStatement(pos int) (*node, error) {
	test, err := p.expr()
	if err != nil {
		return nil, err
	}
	body, end, err := p.blockUntil(pos, "elif", "else", "endif")
	if err != nil {
		return nil, err
	}
	n := &node{kind: nIf, pos: pos, a: test, body: body}
	switch end {
	case "elif":
		sub, err := p.ifStatement(p.peek().pos)
		if err != nil {
			return nil, err
		}
		n.els = []*node{sub}
		return n, nil // the nested if consumed {% endif %}
	case "else":
		els, _, err := p.blockUntil(pos, "endif")
		if err != nil {
			return nil, err
		}
		n.els = els
	}
	return n, p.expectClose()
}

// blockUntil closes the current tag, parses the block after it and checks
// that the tag ending it is one of ends, for the statement opened at pos.
func (p *parser) blockUntil(pos int, ends ...string) ([]*node, string, error) {
	if err := p.expectClose(); err != nil {
		return nil, "", err
	}
	body, end, err := p.block()
	if err != nil {
		return nil, "", err
	}
	if err := p.endTag(end, pos, ends...); err != nil {
		return nil, "", err
	}
	return body, end, nil
}

func (p *parser) forStatement(pos int) (*node, error) {
	target, err := p.targets()
	if err != nil {
		return nil, err
	}
	if !p.isName("in") {
		return nil, p.errf(p.peek().pos, "expected 'in' in for loop")
	}
	p.next()
	iter, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	n := &node{kind: nFor, pos: pos, a: target, b: iter}
	if p.isName("if") {
		ifPos := p.next().pos
		if n.c, err = p.orExpr(); err != nil {
			return nil, err
		}
		// "for x in a if c else b": a conditional iterable, not a filter.
		if els, err := p.after("else", p.expr); err != nil {
			return nil, err
		} else if els != nil {
			n.b = &node{kind: nCond, pos: ifPos, a: n.c, b: iter, c: els}
			n.c = nil
		}
	}
	if p.isName("recursive") {
		return nil, p.errf(p.peek().pos, "recursive loops are not supported")
	}
	body, end, err := p.blockUntil(pos, "else", "endfor")
	if err != nil {
		return nil, err
	}
	n.body = body
	if end == "else" {
		els, _, err := p.blockUntil(pos, "endfor")
		if err != nil {
			return nil, err
		}
		n.els = els
	}
	return n, p.expectClose()
}

// targets parses assignment targets: a name, name.attr, or a tuple of names.
func (p *parser) targets() (*node, error) {
	var list []*node
	for {
		t, err := p.expectName()
		if err != nil {
			return nil, err
		}
		n := &node{kind: nName, pos: t.pos, name: t.val}
		for p.isOp(".") {
			p.next()
			a, err := p.expectName()
			if err != nil {
				return nil, err
			}
			n = &node{kind: nAttr, pos: a.pos, name: a.val, a: n}
		}
		list = append(list, n)
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	if len(list) == 1 {
		return list[0], nil
	}
	return &node{kind: nTuple, pos: list[0].pos, args: list}, nil
}

func (p *parser) setStatement(pos int) (*node, error) {
	target, err := p.targets()
	if err != nil {
		return nil, err
	}
	if p.isOp("=") {
		p.next()
		val, err := p.exprSequence()
		if err != nil {
			return nil, err
		}
		return &node{kind: nSet, pos: pos, a: target, b: val}, p.expectClose()
	}
	if target.kind != nName {
		return nil, p.errf(pos, "block set needs a single name")
	}
	n := &node{kind: nSetBlock, pos: pos, a: target}
	// {% set x | filter %}…{% endset %}
	if n.c, err = p.after("|", func() (*node, error) { return p.filterSpec(nil) }); err != nil {
		return nil, err
	}
	body, _, err := p.blockUntil(pos, "endset")
	if err != nil {
		return nil, err
	}
	n.body = body
	return n, p.expectClose()
}

func (p *parser) macroStatement(pos int) (*node, error) {
	name, err := p.expectName()
	if err != nil {
		return nil, err
	}
	params, err := p.params()
	if err != nil {
		return nil, err
	}
	body, _, err := p.blockUntil(pos, "endmacro")
	if err != nil {
		return nil, err
	}
	return &node{kind: nMacro, pos: pos, name: name.val, args: params, body: body}, p.expectClose()
}

// params parses a macro's parameter list: names with optional defaults.
func (p *parser) params() ([]*node, error) {
	if !p.isOp("(") {
		return nil, nil
	}
	p.next()
	var out []*node
	return out, p.items(")", func() error {
		prm, err := p.named(nName)
		out = append(out, prm)
		return err
	})
}

// named parses "name" or "name=expr" as a node of kind holding the name,
// and the expression in a: a macro's parameter and its default, a call's
// keyword argument.
func (p *parser) named(kind nodeKind) (*node, error) {
	t, err := p.expectName()
	if err != nil {
		return nil, err
	}
	n := &node{kind: kind, pos: t.pos, name: t.val}
	n.a, err = p.after("=", p.expr)
	return n, err
}

// items parses the items of a list up to close, which it consumes, each
// by item: separated by commas, a trailing one allowed.
func (p *parser) items(close string, item func() error) error {
	for !p.isOp(close) {
		if err := item(); err != nil {
			return err
		}
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	return p.expectOp(close)
}

func (p *parser) callStatement(pos int) (*node, error) {
	var callerParams []*node
	var err error
	if p.isOp("(") {
		if callerParams, err = p.params(); err != nil {
			return nil, err
		}
	}
	call, err := p.postfix()
	if err != nil {
		return nil, err
	}
	if call.kind != nCall {
		return nil, p.errf(pos, "{%% call %%} needs a macro call")
	}
	body, _, err := p.blockUntil(pos, "endcall")
	if err != nil {
		return nil, err
	}
	return &node{kind: nCallBlock, pos: pos, a: call, args: callerParams, body: body}, p.expectClose()
}

func (p *parser) filterStatement(pos int) (*node, error) {
	f, err := p.filterSpec(nil)
	if err != nil {
		return nil, err
	}
	body, _, err := p.blockUntil(pos, "endfilter")
	if err != nil {
		return nil, err
	}
	f.body = body
	return &node{kind: nFilterBlock, pos: pos, a: f, body: body}, p.expectClose()
}

// filterSpec parses "name" or "name(args)" after a "|" and applies it to
// operand (nil for filter blocks).
func (p *parser) filterSpec(operand *node) (*node, error) { return p.applied(nFilter, operand) }

// applied parses the name of a filter or a test (kind) applied to operand,
// then its arguments: in parentheses, or for a test one argument without
// them ("x is divisibleby 3").
func (p *parser) applied(kind nodeKind, operand *node) (*node, error) {
	t, err := p.expectName()
	if err != nil {
		return nil, err
	}
	n := &node{kind: kind, pos: t.pos, name: t.val, a: operand}
	switch nt := p.peek(); {
	case nt.kind == tOp && nt.val == "(":
		n.args, err = p.callArgs()
	case kind == nTest && (nt.kind == tString || nt.kind == tInt || nt.kind == tFloat || nt.kind == tName && !keywords[nt.val]):
		var arg *node
		arg, err = p.postfix()
		n.args = []*node{arg}
	}
	return n, err
}

// exprSequence parses "a, b, c" as a tuple, or a single expression.
func (p *parser) exprSequence() (*node, error) {
	first, err := p.expr()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return first, nil
	}
	list := []*node{first}
	for p.isOp(",") {
		p.next()
		if p.isOp(")") || p.peek().kind == tCloseStmt {
			break
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		list = append(list, e)
	}
	return &node{kind: nTuple, pos: first.pos, args: list}, nil
}

func (p *parser) expr() (*node, error) {
	if err := p.enter(p.peek().pos); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	a, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	if !p.isName("if") {
		return a, nil
	}
	pos := p.next().pos
	test, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	n := &node{kind: nCond, pos: pos, a: test, b: a}
	n.c, err = p.after("else", p.expr)
	return n, err
}

func (p *parser) orExpr() (*node, error)  { return p.leftAssoc(p.andExpr, p.keyword("or", nOr)) }
func (p *parser) andExpr() (*node, error) { return p.leftAssoc(p.notExpr, p.keyword("and", nAnd)) }

func (p *parser) notExpr() (*node, error) {
	if p.isName("not") {
		return p.prefix(p.next().pos, nNot, "", p.notExpr)
	}
	return p.compare()
}

// prefix parses the operand of a prefix operator at pos (already taken)
// and builds its node; the operand's own prefixes recurse, so it counts
// toward the nesting limit.
func (p *parser) prefix(pos int, kind nodeKind, name string, operand func() (*node, error)) (*node, error) {
	if err := p.enter(pos); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	a, err := operand()
	if err != nil {
		return nil, err
	}
	return &node{kind: kind, pos: pos, name: name, a: a}, nil
}

func (p *parser) compare() (*node, error) { return p.leftAssoc(p.additive, p.comparison) }

func (p *parser) additive() (*node, error) {
	return p.leftAssoc(p.multiplicative, p.ops("+", "-", "~"))
}

func (p *parser) multiplicative() (*node, error) {
	return p.leftAssoc(p.unary, p.ops("*", "/", "//", "%"))
}

// operator says what node the operator at the next tokens builds and how
// many tokens it spans ("not in" is two), or width 0 where the operators of
// a precedence level end.
type operator func() (kind nodeKind, name string, width int)

// leftAssoc parses operand (operator operand)* and folds it to the left, as
// Jinja groups every binary level but **.
func (p *parser) leftAssoc(operand func() (*node, error), op operator) (*node, error) {
	left, err := operand()
	if err != nil {
		return nil, err
	}
	for {
		kind, name, width := op()
		if width == 0 {
			return left, nil
		}
		pos := p.peek().pos
		for range width {
			p.next()
		}
		right, err := operand()
		if err != nil {
			return nil, err
		}
		left = &node{kind: kind, pos: pos, name: name, a: left, b: right}
	}
}

// keyword is a word operator whose node kind says all (and, or).
func (p *parser) keyword(word string, kind nodeKind) operator {
	return func() (nodeKind, string, int) {
		if p.isName(word) {
			return kind, "", 1
		}
		return 0, "", 0
	}
}

// ops are symbol operators evaluated by name.
func (p *parser) ops(syms ...string) operator {
	return func() (nodeKind, string, int) {
		if t := p.peek(); t.kind == tOp && slices.Contains(syms, t.val) {
			return nBinary, t.val, 1
		}
		return 0, "", 0
	}
}

func (p *parser) comparison() (nodeKind, string, int) {
	t := p.peek()
	switch {
	case t.kind == tOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == ">" || t.val == "<=" || t.val == ">="):
		return nBinary, t.val, 1
	case t.kind == tName && t.val == "in":
		return nBinary, "in", 1
	case t.kind == tName && t.val == "not" && p.peekN(1).kind == tName && p.peekN(1).val == "in":
		return nBinary, "not in", 2
	}
	return 0, "", 0
}

func (p *parser) unary() (*node, error) {
	if p.isOp("-") || p.isOp("+") {
		t := p.next()
		return p.prefix(t.pos, nUnary, t.val, p.unary)
	}
	return p.power()
}

func (p *parser) power() (*node, error) {
	left, err := p.test()
	if err != nil {
		return nil, err
	}
	if p.isOp("**") {
		t := p.next()
		right, err := p.unary()
		if err != nil {
			return nil, err
		}
		left = &node{kind: nBinary, pos: t.pos, name: "**", a: left, b: right}
	}
	return left, nil
}

var keywords = map[string]bool{"and": true, "or": true, "not": true, "in": true, "is": true, "if": true, "else": true, "recursive": true}

func (p *parser) test() (*node, error) {
	return p.suffixed(p.filtered, "is", func(operand *node) (*node, error) {
		negate := false
		if p.isName("not") {
			p.next()
			negate = true
		}
		n, err := p.applied(nTest, operand)
		if err != nil || !negate {
			return n, err
		}
		return &node{kind: nNot, pos: n.pos, a: n}, nil
	})
}

func (p *parser) filtered() (*node, error) { return p.suffixed(p.postfix, "|", p.filterSpec) }

// suffixed parses operand, then while the operator or word tok follows
// takes it and makes the operand apply's node on it: "x | f | g", "x is
// a is not b".
func (p *parser) suffixed(operand func() (*node, error), tok string, apply func(*node) (*node, error)) (*node, error) {
	x, err := operand()
	for err == nil && (p.isOp(tok) || p.isName(tok)) {
		p.next()
		x, err = apply(x)
	}
	return x, err
}

func (p *parser) postfix() (*node, error) {
	n, err := p.primary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tOp {
			return n, nil
		}
		switch t.val {
		case ".":
			p.next()
			a := p.next()
			switch a.kind {
			case tName:
				n = &node{kind: nAttr, pos: a.pos, name: a.val, a: n}
			case tInt:
				// x.0 is x[0] in Jinja
				i, _ := strconv.ParseInt(a.val, 10, 64)
				n = &node{kind: nIndex, pos: a.pos, a: n, b: &node{kind: nLiteral, val: Int(i)}}
			default:
				return nil, p.errf(a.pos, "expected an attribute name after '.'")
			}
		case "[":
			p.next()
			if n, err = p.subscript(n, t.pos); err != nil {
				return nil, err
			}
		case "(":
			args, err := p.callArgs()
			if err != nil {
				return nil, err
			}
			n = &node{kind: nCall, pos: t.pos, a: n, args: args}
		default:
			return n, nil
		}
	}
}

func (p *parser) subscript(obj *node, pos int) (*node, error) {
	var parts [3]*node
	colons := 0
	for !p.isOp("]") {
		if p.isOp(":") {
			p.next()
			colons++
			if colons > 2 {
				return nil, p.errf(pos, "too many ':' in slice")
			}
			continue
		}
		if parts[colons] != nil {
			return nil, p.errf(p.peek().pos, "expected ']'")
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		parts[colons] = e
	}
	p.next()
	if colons == 0 {
		if parts[0] == nil {
			return nil, p.errf(pos, "empty subscript")
		}
		return &node{kind: nIndex, pos: pos, a: obj, b: parts[0]}, nil
	}
	return &node{kind: nSlice, pos: pos, a: obj, args: parts[:]}, nil
}

// callArgs parses "(a, b, k=v, *rest)".
func (p *parser) callArgs() ([]*node, error) {
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	var out []*node
	return out, p.items(")", func() error {
		var e *node
		var err error
		switch {
		case p.isOp("*"):
			t := p.next()
			if e, err = p.expr(); err == nil {
				e = &node{kind: nSpread, pos: t.pos, a: e}
			}
		case p.peek().kind == tName && p.peekN(1).kind == tOp && p.peekN(1).val == "=":
			e, err = p.named(nKwarg)
		default:
			e, err = p.expr()
		}
		out = append(out, e)
		return err
	})
}

func (p *parser) primary() (*node, error) {
	t := p.next()
	switch t.kind {
	case tInt:
		i, err := strconv.ParseInt(t.val, 10, 64)
		if err != nil {
			f, _ := strconv.ParseFloat(t.val, 64)
			return &node{kind: nLiteral, pos: t.pos, val: Float(f)}, nil
		}
		return &node{kind: nLiteral, pos: t.pos, val: Int(i)}, nil
	case tFloat:
		f, err := strconv.ParseFloat(t.val, 64)
		if err != nil {
			return nil, p.errf(t.pos, "bad number %q", t.val)
		}
		return &node{kind: nLiteral, pos: t.pos, val: Float(f)}, nil
	case tString:
		s := t.val
		for p.peek().kind == tString { // adjacent literals concatenate
			s += p.next().val
		}
		return &node{kind: nLiteral, pos: t.pos, val: String(s)}, nil
	case tName:
		switch t.val {
		case "true", "True":
			return &node{kind: nLiteral, pos: t.pos, val: Bool(true)}, nil
		case "false", "False":
			return &node{kind: nLiteral, pos: t.pos, val: Bool(false)}, nil
		case "none", "None":
			return &node{kind: nLiteral, pos: t.pos, val: None()}, nil
		}
		return &node{kind: nName, pos: t.pos, name: t.val}, nil
	case tOp:
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		switch t.val {
		case "(":
			if p.isOp(")") {
				p.next()
				return &node{kind: nTuple, pos: t.pos}, nil
			}
			e, err := p.exprSequence()
			if err != nil {
				return nil, err
			}
			return e, p.expectOp(")")
		case "[":
			n := &node{kind: nList, pos: t.pos}
			return n, p.items("]", func() error {
				e, err := p.expr()
				n.args = append(n.args, e)
				return err
			})
		case "{":
			n := &node{kind: nDict, pos: t.pos}
			return n, p.items("}", func() error {
				k, err := p.expr()
				if err != nil {
					return err
				}
				if err := p.expectOp(":"); err != nil {
					return err
				}
				v, err := p.expr()
				n.args = append(n.args, k, v)
				return err
			})
		}
	}
	return nil, p.errf(t.pos, "unexpected %s", describe(t))
}
