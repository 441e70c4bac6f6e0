package jsonprefix

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ErrSchema is what Compile's errors wrap: a JSON schema that is not
// valid JSON, or that asks for something generation cannot enforce.
var ErrSchema = errors.New("json schema")

// types is a set of JSON value types a schema allows.
type types uint8

const (
	tObject types = 1 << iota
	tArray
	tString
	tNumber  // any number
	tInteger // a number without fraction or exponent
	tBool
	tNull
	tAny = tObject | tArray | tString | tNumber | tInteger | tBool | tNull
)

var typeNames = map[string]types{
	"object": tObject, "array": tArray, "string": tString, "number": tNumber,
	"integer": tInteger, "boolean": tBool, "null": tNull,
}

// start returns the type a value beginning with b has (numbers as tNumber).
func start(b byte) types {
	switch {
	case b == '{':
		return tObject
	case b == '[':
		return tArray
	case b == '"':
		return tString
	case b == '-' || b >= '0' && b <= '9':
		return tNumber
	case b == 't' || b == 'f':
		return tBool
	case b == 'n':
		return tNull
	}
	return 0
}

// MaxProperties and MaxEnum bound an object's properties and a string
// enumeration in a schema, which a generation follows as bit sets.
const (
	MaxProperties = 64
	MaxEnum       = 64
)

// node is one compiled schema: the types a value may have and, for each,
// what constrains it. The branches of anyOf/oneOf are nodes of their own,
// told apart by the first byte of the value.
type node struct {
	types    types
	branches []*node // anyOf / oneOf: each allows types no other does

	props    []prop   // object: the properties named, by name
	names    []string // object: the same names, for matching keys
	required uint64   // object: bit i, props[i] must be present
	extra    bool     // object: other properties allowed (with any value)

	items    *node // array: each item
	minItems int
	maxItems int // -1: no bound

	enum []string // string: the values allowed; nil for any string

	// A discriminated union of objects (anyOf/oneOf branches told apart by
	// one property's constant string): the object's first key must be
	// that property, and its value, a string that selects, chooses which
	// of variants the rest of the object follows.
	variants []*node
	selects  bool
}

type prop struct {
	name string
	n    *node
}

// anyValue is the schema of an unconstrained value.
var anyValue = &node{types: tAny, extra: true, maxItems: -1}

func init() { anyValue.items = anyValue }

// pick returns the node (n or one of its branches) that allows a value of
// type t, or nil.
func (n *node) pick(t types) *node {
	if n.branches == nil {
		if n.types&t != 0 {
			return n
		}
		return nil
	}
	for _, b := range n.branches {
		if b.types&t != 0 {
			return b
		}
	}
	return nil
}

// Schema is a compiled JSON schema: what SchemaMachine and NewSchemaFilter
// hold the output to. It is immutable and may be shared.
type Schema struct {
	root *node
	// Framed: a text before the object and one after it (a tool call's
	// markers), each apart from the object by at most a run of whitespace.
	prefix, suffix string
}

// Framed returns s with the object between prefix and suffix, such as a
// chat format's tool-call markers: the output is prefix, at most a run of
// whitespace, the object, at most a run of whitespace, suffix. Either may
// be empty.
func (s *Schema) Framed(prefix, suffix string) *Schema {
	f := *s
	f.prefix, f.suffix = prefix, suffix
	return &f
}

// Frame reports the texts around the object (see Framed).
func (s *Schema) Frame() (prefix, suffix string) { return s.prefix, s.suffix }

// ignored are the keywords that describe rather than constrain.
var ignored = map[string]bool{
	"title": true, "description": true, "$schema": true, "$id": true, "$comment": true,
	"default": true, "examples": true, "readOnly": true, "writeOnly": true, "deprecated": true,
	"$defs": true, "definitions": true, "strict": true,
}

// Compile reads a JSON schema (draft 2020-12 or 7 style) and keeps the
// part that generation can enforce byte by byte:
//   - type (one name or a list): object, array, string, number, integer,
//     boolean, null;
//   - properties, required, additionalProperties (true or false: a
//     schema for the other properties is not supported);
//   - items (one schema), minItems, maxItems;
//   - enum of strings (and null), const string;
//   - anyOf and oneOf, when their branches begin with different
//     characters (say an object or null), as optional fields are written,
//     or are objects told apart by one property's constant string (a
//     discriminated union: the output writes that property first);
//   - $ref to "#", "#/$defs/NAME" or "#/definitions/NAME", recursion
//     included.
//
// Annotations (title, description, default, examples …) are ignored.
// Any other keyword — pattern, minimum, minLength, format, allOf … — is an
// error that names it and where it stands, rather than a constraint
// silently dropped. An object without additionalProperties allows other
// properties, as JSON Schema says; OpenAI's strict mode sets it false.
func Compile(schema []byte) (*Schema, error) { return compile(schema, false) }

// CompileLoose is Compile for a schema the output should follow where it
// can, such as a tool's parameters (which the model also reads in its
// prompt): a part of the schema below the top that Compile would refuse
// allows any value there instead. The top must still allow an object.
func CompileLoose(schema []byte) (*Schema, error) { return compile(schema, true) }

func compile(schema []byte, loose bool) (*Schema, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: not valid JSON: %v", ErrSchema, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: extra data after the schema", ErrSchema)
	}
	c := compiler{doc: doc, refs: map[string]*node{}, loose: loose}
	root, err := c.node(doc, "#")
	if err != nil {
		return nil, err
	}
	if root.pick(tObject) == nil {
		return nil, fmt.Errorf("%w: the schema must allow an object at the top (JSON output is one object)", ErrSchema)
	}
	return &Schema{root: root}, nil
}

type compiler struct {
	doc   any
	refs  map[string]*node // nodes of the $refs met, filled or being filled
	steps int              // schemas compiled, bounded against hostile input
	loose bool             // CompileLoose: a refused part below the top allows any value
}

// settle is what compiling the schema at at into n came to: in a loose
// compile, a refused part below the top becomes a node that allows any
// value (n too, which references may share already).
func (c *compiler) settle(n *node, at string, err error) (*node, error) {
	if err == nil || !c.loose || at == "#" || c.steps > maxSchemas {
		return n, err
	}
	if n != nil {
		*n = *anyValue
		return n, nil
	}
	return anyValue, nil
}

// maxSchemas bounds the schema objects one Compile reads.
const maxSchemas = 10000

func (c *compiler) errorf(at, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrSchema, at, fmt.Sprintf(format, args...))
}

// node compiles the schema v found at the JSON pointer at.
func (c *compiler) node(v any, at string) (*node, error) {
	if c.steps++; c.steps > maxSchemas {
		return nil, c.errorf(at, "more than %d schemas", maxSchemas)
	}
	switch v := v.(type) {
	case bool:
		if !v {
			return c.settle(nil, at, c.errorf(at, "the schema false allows nothing"))
		}
		return anyValue, nil
	case map[string]any:
		if ref, ok := v["$ref"]; ok {
			n, err := c.ref(v, ref, at)
			return c.settle(n, at, err)
		}
		n := &node{}
		return c.settle(n, at, c.fill(n, v, at))
	}
	return c.settle(nil, at, c.errorf(at, "a schema must be an object or a boolean"))
}

// ref compiles {"$ref": …}: the node of the schema it points to, shared by
// every reference, so that recursive schemas compile to a cycle.
func (c *compiler) ref(v map[string]any, ref any, at string) (*node, error) {
	for k := range v {
		if k != "$ref" && !ignored[k] {
			return nil, c.errorf(at, "keywords beside $ref (%q) are not supported", k)
		}
	}
	s, ok := ref.(string)
	if !ok {
		return nil, c.errorf(at, "$ref must be a string")
	}
	if n, ok := c.refs[s]; ok {
		if n == nil {
			return nil, c.errorf(at, "$ref %q refers to itself through references only", s)
		}
		return n, nil
	}
	target, err := c.resolve(s, at)
	if err != nil {
		return nil, err
	}
	obj, isObj := target.(map[string]any)
	if !isObj || obj["$ref"] != nil {
		// A boolean schema or a reference to a reference: no node to
		// share yet; nil marks the chain against loops.
		c.refs[s] = nil
		n, err := c.node(target, s)
		if err != nil {
			return nil, err
		}
		c.refs[s] = n
		return n, nil
	}
	n := &node{}
	c.refs[s] = n
	return n, c.fill(n, obj, s)
}

// resolve finds the schema a local $ref names.
func (c *compiler) resolve(ref, at string) (any, error) {
	if ref == "#" {
		return c.doc, nil
	}
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, c.errorf(at, "$ref %q: only references inside the schema (#/…) are supported", ref)
	}
	cur := c.doc
	for _, tok := range strings.Split(rest, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, c.errorf(at, "$ref %q does not lead to a schema", ref)
		}
		if cur, ok = obj[tok]; !ok {
			return nil, c.errorf(at, "$ref %q: no %q", ref, tok)
		}
	}
	return cur, nil
}

// fill compiles the keywords of the schema object v into n.
func (c *compiler) fill(n *node, v map[string]any, at string) error {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys) // errors name the same keyword every time
	for _, k := range keys {
		switch k {
		case "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
			"enum", "const", "anyOf", "oneOf":
		default:
			if !ignored[k] {
				return c.errorf(at, "keyword %q is not supported", k)
			}
		}
	}
	if alt, ok := v["anyOf"]; ok {
		return c.union(n, v, alt, at+"/anyOf")
	}
	if alt, ok := v["oneOf"]; ok {
		return c.union(n, v, alt, at+"/oneOf")
	}
	n.maxItems = -1
	if err := c.types(n, v, at); err != nil {
		return err
	}
	if n.types&tObject != 0 {
		if err := c.object(n, v, at); err != nil {
			return err
		}
	}
	if n.types&tArray != 0 {
		if err := c.array(n, v, at); err != nil {
			return err
		}
	}
	return nil
}

// types sets the types n allows: from "type", else from enum or const,
// else what its other keywords speak of, else any.
func (c *compiler) types(n *node, v map[string]any, at string) error {
	switch t := v["type"].(type) {
	case nil:
		if _, ok := v["type"]; ok {
			return c.errorf(at, "type must be a name or a list of names")
		}
	case string:
		if n.types = typeNames[t]; n.types == 0 {
			return c.errorf(at, "unknown type %q", t)
		}
	case []any:
		for _, e := range t {
			s, _ := e.(string)
			if typeNames[s] == 0 {
				return c.errorf(at, "unknown type %v", e)
			}
			n.types |= typeNames[s]
		}
	default:
		return c.errorf(at, "type must be a name or a list of names")
	}
	if n.types&tNumber != 0 {
		n.types |= tInteger
	}
	var values []any
	if e, ok := v["enum"]; ok {
		list, ok := e.([]any)
		if !ok || len(list) == 0 {
			return c.errorf(at, "enum must be a non-empty list")
		}
		values = list
	}
	if k, ok := v["const"]; ok {
		if values != nil {
			return c.errorf(at, "enum and const together are not supported")
		}
		values = []any{k}
	}
	if values != nil {
		var allowed types
		n.enum = []string{}
		for _, e := range values {
			switch e := e.(type) {
			case nil:
				allowed |= tNull
			case string:
				if strings.ContainsAny(e, "\"\\") || strings.ContainsFunc(e, func(r rune) bool { return r < 0x20 }) {
					return c.errorf(at, "enum value %q needs escapes, which are not supported", e)
				}
				allowed |= tString
				n.enum = append(n.enum, e)
			default:
				return c.errorf(at, "enum value %v: only strings and null are supported", e)
			}
		}
		if len(n.enum) > MaxEnum {
			return c.errorf(at, "enum of %d strings; at most %d are supported", len(n.enum), MaxEnum)
		}
		if n.types == 0 {
			n.types = tAny
		}
		if n.types &= allowed; n.types == 0 {
			return c.errorf(at, "no value of the enum has the schema's type")
		}
		return nil
	}
	if n.types == 0 {
		n.types = tAny
		_, props := v["properties"]
		_, req := v["required"]
		_, add := v["additionalProperties"]
		_, items := v["items"]
		_, minI := v["minItems"]
		_, maxI := v["maxItems"]
		switch obj, arr := props || req || add, items || minI || maxI; {
		case obj && !arr:
			n.types = tObject
		case arr && !obj:
			n.types = tArray
		}
	}
	return nil
}

func (c *compiler) object(n *node, v map[string]any, at string) error {
	n.extra = true
	switch a := v["additionalProperties"].(type) {
	case nil:
		if _, ok := v["additionalProperties"]; ok {
			return c.errorf(at, "additionalProperties must be true or false")
		}
	case bool:
		n.extra = a
	case map[string]any:
		if len(a) > 0 {
			return c.errorf(at+"/additionalProperties", "a schema for additional properties is not supported (only true or false)")
		}
	default:
		return c.errorf(at, "additionalProperties must be true or false")
	}
	if p, ok := v["properties"]; ok {
		props, ok := p.(map[string]any)
		if !ok {
			return c.errorf(at, "properties must be an object")
		}
		if len(props) > MaxProperties {
			return c.errorf(at, "%d properties; at most %d are supported", len(props), MaxProperties)
		}
		names := make([]string, 0, len(props))
		for name := range props {
			if strings.ContainsAny(name, "\"\\") || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) {
				return c.errorf(at, "property name %q needs escapes, which are not supported", name)
			}
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			pn, err := c.node(props[name], at+"/properties/"+name)
			if err != nil {
				return err
			}
			n.props = append(n.props, prop{name, pn})
			n.names = append(n.names, name)
		}
	}
	if r, ok := v["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return c.errorf(at, "required must be a list of names")
		}
		for _, e := range list {
			name, _ := e.(string)
			i := slices.IndexFunc(n.props, func(p prop) bool { return p.name == name })
			if i < 0 {
				return c.errorf(at, "required property %v is not in properties", e)
			}
			n.required |= 1 << i
		}
	}
	return nil
}

func (c *compiler) array(n *node, v map[string]any, at string) error {
	n.items = anyValue
	if it, ok := v["items"]; ok {
		if _, isList := it.([]any); isList {
			return c.errorf(at, "items as a list (tuples) is not supported")
		}
		in, err := c.node(it, at+"/items")
		if err != nil {
			return err
		}
		n.items = in
	}
	count := func(key string, def int) (int, error) {
		x, ok := v[key]
		if !ok {
			return def, nil
		}
		num, _ := x.(json.Number)
		i, err := num.Int64()
		if err != nil || i < 0 || i > math.MaxInt32 {
			return 0, c.errorf(at, "%s must be a whole number from 0 to %d", key, math.MaxInt32)
		}
		return int(i), nil
	}
	var err error
	if n.minItems, err = count("minItems", 0); err != nil {
		return err
	}
	if n.maxItems, err = count("maxItems", -1); err != nil {
		return err
	}
	if n.maxItems >= 0 && n.maxItems < n.minItems {
		return c.errorf(at, "maxItems %d is below minItems %d", n.maxItems, n.minItems)
	}
	return nil
}

// union compiles anyOf/oneOf: branches that a value's first byte tells
// apart (integer and number both begin with a digit or '-').
func (c *compiler) union(n *node, v map[string]any, alt any, at string) error {
	for k := range v {
		if k != "anyOf" && k != "oneOf" && !ignored[k] {
			return c.errorf(at, "keywords beside anyOf/oneOf (%q) are not supported", k)
		}
	}
	if _, both := v["oneOf"]; both && v["anyOf"] != nil {
		return c.errorf(at, "anyOf and oneOf together are not supported")
	}
	list, ok := alt.([]any)
	if !ok || len(list) == 0 {
		return c.errorf(at, "must be a non-empty list of schemas")
	}
	var leaves, objects []*node
	for i, s := range list {
		b, err := c.node(s, fmt.Sprintf("%s/%d", at, i))
		if err != nil {
			return err
		}
		if b.types == 0 {
			return c.errorf(at, "a reference to a schema being read, directly in anyOf/oneOf, is not supported")
		}
		inner := b.branches // a union in a union: its branches
		if inner == nil {
			inner = []*node{b}
		}
		for _, leaf := range inner {
			if leaf.types == tObject && leaf.variants == nil {
				objects = append(objects, leaf)
			} else {
				leaves = append(leaves, leaf)
			}
		}
	}
	if len(objects) > 1 {
		d := discriminated(objects)
		if d == nil {
			return c.errorf(at, "object branches must share a property whose value is one constant string in each, told apart by it (a discriminator)")
		}
		objects = []*node{d}
	}
	for _, leaf := range append(leaves, objects...) {
		starts := leaf.types
		if starts&tInteger != 0 {
			starts |= tNumber
		}
		if n.types&starts != 0 {
			return c.errorf(at, "branches that begin alike (two of the same type) are not supported")
		}
		n.types |= starts
		n.branches = append(n.branches, leaf)
	}
	return nil
}

// discriminated joins object schemas that each fix one and the same
// property to a different constant string (pydantic's discriminated
// unions, a tool call's name) into one node whose first key is that
// property; nil when they have no such property.
func discriminated(objects []*node) *node {
	for _, p := range objects[0].props {
		values := make([]string, 0, len(objects))
		for _, o := range objects {
			i := slices.Index(o.names, p.name)
			if i < 0 {
				break
			}
			v := o.props[i].n
			if v.branches != nil || v.types != tString || len(v.enum) != 1 || slices.Contains(values, v.enum[0]) {
				break
			}
			values = append(values, v.enum[0])
		}
		if len(values) == len(objects) && len(values) <= MaxEnum {
			sel := &node{types: tString, enum: values, selects: true, maxItems: -1}
			return &node{types: tObject, props: []prop{{p.name, sel}}, names: []string{p.name},
				required: 1, variants: objects, maxItems: -1}
		}
	}
	return nil
}
