package chat

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"regexp"
	"strings"
	"unicode"
)

// Markers in model output.
const (
	thinkOpen     = "<think>"
	thinkClose    = "</think>"
	hermesOpen    = "<tool_call>"
	hermesClose   = "</tool_call>"
	mistralCalls  = "[TOOL_CALLS]"
	mistralArgs   = "[ARGS]"
	mistralSystem = "[SYSTEM_PROMPT]"
	mistralCallID = "[CALL_ID]"
	// Magistral's and Ministral 3's reasoning block
	mistralThinkOpen  = "[THINK]"
	mistralThinkClose = "[/THINK]"
	llamaPythonTag    = "<|python_tag|>"
)

// ParseOptions configure a Parser.
type ParseOptions struct {
	// ThinkingOpen says the prompt already opened the reasoning block (it
	// ended with <think> or the format's opener), so output starts as
	// reasoning. See PromptOpensThinking.
	ThinkingOpen bool
	// Tools says tools were offered; only then is output scanned for tool
	// calls (otherwise it is all content, as in llama.cpp).
	Tools bool
	// NewID makes tool call IDs for formats that carry none. Nil makes
	// random "call_…" IDs.
	NewID func() string
	// Defs are the tools offered, whose parameters' schema types decide
	// how the values of a call in the XML form (Qwen 3.5's) are read: a
	// string parameter's value stays a string.
	Defs []Tool
}

// PromptOpensThinking reports whether a rendered prompt leaves a reasoning
// block open (<think>, Seed-OSS's <seed:think>, Gemma 4's
// <|channel>thought, Command R7B's <|START_THINKING|>, Apertus'
// <|inner_prefix|> or Magistral's [THINK]), so that the model's output
// begins inside its reasoning.
func PromptOpensThinking(prompt string) bool {
	for _, f := range [...]Format{{}, {Tools: ToolsSeed}, {Tools: ToolsGemma4}, {Tools: ToolsCommandR}, {Tools: ToolsApertus}, {Tools: ToolsMistral, MistralThink: true}} {
		openMark, closeMark := f.thinkMarks()
		open := strings.LastIndex(prompt, openMark)
		if open >= 0 && open > strings.LastIndex(prompt, closeMark) &&
			strings.TrimSpace(prompt[open+len(openMark):]) == "" {
			return true
		}
	}
	return false
}

// Delta is a piece of parsed output: new content, new reasoning text, or a
// complete tool call.
type Delta struct {
	Content  string
	Thinking string
	ToolCall *ToolCall
}

// ParseOutput parses a complete model reply into a message.
func ParseOutput(output string, f Format, opts ParseOptions) Message {
	p := NewParser(f, opts)
	p.Push(output)
	p.Finish()
	return p.Message()
}

type parseMode uint8

const (
	modeContent parseMode = iota
	modeThinking
	modeCall // inside a call's markers (<tool_call>, <|tool_call>, <seed:tool_call>)
	modeRest // the rest of the output is tool calls (Mistral, python tag, Granite, Firefunction v2)
	modeLlamaJSON
	modeHarmonyHeader // harmony: before a message's <|message|>
	modeHarmonyBody   // harmony: a message's body, of kind hKind
	modeRaw           // the rest of the output is content as it is
)

// Parser splits streamed model output into content, reasoning and tool
// calls. Push text as it is generated; each call returns what can be shown
// now, holding back text that may be the start of a marker. Finish flushes
// the rest. A Parser is not safe for concurrent use.
type Parser struct {
	f          Format
	opts       ParseOptions
	mode       parseMode
	pending    string // text not yet classified
	started    bool   // content or reasoning has been emitted
	afterThink bool   // right after </think>: drop leading whitespace
	wsHold     string // whitespace held back at the end of reasoning/content
	msg        Message
	markers    []string
	callFrom   parseMode   // what a call's markers stand in: content, or Kimi K2's reasoning
	hKind      harmonyKind // what the harmony message being read is
	hName      string      // its tool's name, for a call
	hBody      string      // a call's body so far
}

// NewParser returns a parser for output in format f.
func NewParser(f Format, opts ParseOptions) *Parser {
	p := &Parser{f: f, opts: opts, msg: Message{Role: RoleAssistant}}
	if f.Tools == ToolsHarmony {
		p.mode = modeHarmonyHeader
		return p
	}
	if f.Thinking {
		open, _ := f.thinkMarks()
		p.markers = append(p.markers, open)
		if opts.ThinkingOpen {
			p.mode = modeThinking
		}
	}
	if f.Tools == ToolsGLM {
		// GLM writes a line break before its reasoning or answer (after
		// the prompt's <think></think> when thinking is off): whitespace
		// the output begins with is not content, as llama.cpp drops it.
		p.afterThink = true
	}
	if f.Tools == ToolsGemma4 {
		// A <channel|> that closes no reasoning block (Gemma 4 may end its
		// answer with one) is dropped, as llama.cpp stops its content there.
		p.markers = append(p.markers, gemma4ThinkClose)
	}
	p.markers = append(p.markers, f.dropped()...)
	if opts.Tools {
		switch f.Tools {
		case ToolsHermes, ToolsGemma4, ToolsSeed, ToolsGLM, ToolsCommandR, ToolsNemotron, ToolsApertus, ToolsLFM2, ToolsDeepSeek, ToolsKimi, ToolsMiniMax:
			open, _ := f.callMarks()
			p.markers = append(p.markers, open)
		case ToolsMistral, ToolsGranite, ToolsLlama3, ToolsFirefunction:
			p.markers = append(p.markers, f.restMark())
		}
	}
	return p
}

// Message returns everything parsed so far as an assistant message.
func (p *Parser) Message() Message { return p.msg }

// Push adds generated text and returns the deltas it completes.
func (p *Parser) Push(text string) []Delta {
	p.pending += text
	var out []Delta
	for {
		progressed := false
		switch p.mode {
		case modeContent:
			progressed = p.stepContent(&out)
		case modeThinking:
			progressed = p.stepThinking(&out)
		case modeCall:
			progressed = p.stepCall(&out)
		case modeHarmonyHeader:
			progressed = p.stepHarmonyHeader(&out)
		case modeHarmonyBody:
			progressed = p.stepHarmonyBody(&out)
		case modeRaw:
			hold := partialRune(p.pending)
			p.emitContent(&out, p.pending[:len(p.pending)-hold], false)
			p.pending = p.pending[len(p.pending)-hold:]
			return out
		case modeRest, modeLlamaJSON:
			return out // everything waits for Finish
		}
		if !progressed {
			return out
		}
	}
}

// Finish ends the output and returns the last deltas.
func (p *Parser) Finish() []Delta {
	var out []Delta
	switch p.mode {
	case modeContent, modeRaw:
		p.emitContent(&out, p.pending, true)
	case modeHarmonyHeader:
		// An unfinished header says nothing; text that is none is content.
		if _, _, ok := harmonyHeader(p.pending); !ok {
			p.emitContent(&out, p.pending, true)
		}
	case modeHarmonyBody:
		switch p.hKind {
		case harmonyContent:
			p.emitContent(&out, p.pending, true)
		case harmonyThinking:
			p.emitThinking(&out, p.pending, true)
		case harmonyToolCall:
			p.emitHarmony(&out, p.pending, true)
		}
	case modeThinking:
		p.emitThinking(&out, p.pending, true)
	case modeCall:
		if calls, ok := p.parseCalls(p.pending, false); ok {
			p.emitCalls(&out, calls)
		} else {
			open, _ := p.f.callMarks()
			p.emitUnparsed(&out, open+p.pending, true)
		}
	case modeRest:
		if calls, ok := p.parseRest(p.pending); ok {
			p.emitCalls(&out, calls)
		} else {
			p.emitContent(&out, p.f.restMark()+p.pending, true)
		}
	case modeLlamaJSON:
		if calls, ok := p.parseLlamaJSON(p.pending); ok {
			p.emitCalls(&out, calls)
		} else {
			p.emitContent(&out, p.pending, true)
		}
	}
	p.pending = ""
	p.wsHold = ""
	return out
}

// restMark is the marker after which the rest of the output is format
// f's calls: Mistral's [TOOL_CALLS], Granite's <|tool_call|>, Llama 3's
// <|python_tag|> or Firefunction v2's " functools[" (whose "[" opens
// the list); "" for the other formats.
func (f Format) restMark() string {
	switch f.Tools {
	case ToolsMistral:
		return mistralCalls
	case ToolsGranite:
		return graniteCall
	case ToolsLlama3:
		return llamaPythonTag
	case ToolsFirefunction:
		return firefunctionCalls
	}
	return ""
}

// stepContent consumes pending content up to the next marker.
func (p *Parser) stepContent(out *[]Delta) bool {
	if p.opts.Tools && p.f.Tools == ToolsLlama3 && !p.started && p.msg.Content == "" {
		// Llama 3.x answers with a bare JSON object when it calls a tool.
		trimmed := strings.TrimLeftFunc(p.pending, unicode.IsSpace)
		if trimmed == "" {
			return false
		}
		if trimmed[0] == '{' {
			p.mode = modeLlamaJSON
			return false
		}
	}
	i, marker := p.findMarker(p.pending)
	if i < 0 {
		// Hold back a suffix that may become a marker.
		hold := max(p.partialMarker(p.pending), partialRune(p.pending))
		p.emitContent(out, p.pending[:len(p.pending)-hold], false)
		p.pending = p.pending[len(p.pending)-hold:]
		return false
	}
	p.emitContent(out, p.pending[:i], false)
	p.pending = p.pending[i+len(marker):]
	thinkOpen, _ := p.f.thinkMarks()
	callOpen, _ := p.f.callMarks()
	switch marker {
	case thinkOpen:
		p.mode = modeThinking
		p.wsHold = ""
	case callOpen:
		p.mode, p.callFrom = modeCall, modeContent
	case p.f.restMark():
		p.mode = modeRest
	}
	return true
}

func (p *Parser) stepThinking(out *[]Delta) bool {
	_, thinkClose := p.f.thinkMarks()
	i, marker := strings.Index(p.pending, thinkClose), thinkClose
	callOpen := p.callsInThinking()
	if j := strings.Index(p.pending, callOpen); callOpen != "" && j >= 0 && (i < 0 || j < i) {
		i, marker = j, callOpen
	}
	if i < 0 {
		hold := max(partialSuffix(p.pending, thinkClose), partialSuffix(p.pending, callOpen), partialRune(p.pending))
		p.emitThinking(out, p.pending[:len(p.pending)-hold], false)
		p.pending = p.pending[len(p.pending)-hold:]
		return false
	}
	p.emitThinking(out, p.pending[:i], true)
	p.pending = p.pending[i+len(marker):]
	if marker == callOpen {
		p.mode, p.callFrom = modeCall, modeThinking
		return true
	}
	p.mode = modeContent
	p.afterThink = true
	return true
}

// callsInThinking is the text that opens calls inside the reasoning
// block, "" where calls stand outside it alone: Kimi K2 Thinking calls
// tools as it reasons, and llama.cpp reads those calls (its
// allow_toolcall_in_think), the reasoning going on after them.
func (p *Parser) callsInThinking() string {
	if p.f.Tools != ToolsKimi || !p.opts.Tools {
		return ""
	}
	open, _ := p.f.callMarks()
	return open
}

// emitUnparsed emits the text of calls that do not parse as what they
// stand in: content, or reasoning.
func (p *Parser) emitUnparsed(out *[]Delta, s string, final bool) {
	if p.callFrom == modeThinking {
		p.emitThinking(out, s, final)
		return
	}
	p.emitContent(out, s, final)
}

func (p *Parser) stepCall(out *[]Delta) bool {
	open, close := p.f.callMarks()
	var i int
	switch p.f.Tools {
	case ToolsGemma4: // a <tool_call|> in a string is text
		i = indexOutside(p.pending, close, gemma4Quote, gemma4Quote)
	case ToolsGLM: // a </tool_call> in a value is text
		i = indexOutside(p.pending, close, glmValueOpen, glmValueClose)
	default:
		i = strings.Index(p.pending, close)
	}
	if i < 0 {
		return false
	}
	body := p.pending[:i]
	p.pending = p.pending[i+len(close):]
	if calls, ok := p.parseCalls(body, true); ok {
		p.emitCalls(out, calls)
	} else {
		p.emitUnparsed(out, open+body+close, false)
	}
	p.mode = p.callFrom
	p.afterThink = true // whitespace between calls is not content
	return true
}

// indexOutside is the index of the first close in s that stands outside
// every span from open to shut, -1 while there is none (a span not shut
// yet may still hold it).
func indexOutside(s, close, open, shut string) int {
	at := 0
	for {
		end := strings.Index(s[at:], close)
		o := strings.Index(s[at:], open)
		if end < 0 {
			return -1
		}
		if o < 0 || end < o {
			return at + end
		}
		n := strings.Index(s[at+o+len(open):], shut)
		if n < 0 {
			return -1
		}
		at += o + len(open) + n + len(shut)
	}
}

// emitContent emits content, dropping whitespace right after </think> or a
// tool call and holding back trailing whitespace until more text shows
// whether it ends the message.
func (p *Parser) emitContent(out *[]Delta, s string, final bool) {
	if p.afterThink {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if s == "" {
			return
		}
		p.afterThink = false
	}
	s = p.wsHold + s
	p.wsHold = ""
	if !final {
		trimmed := strings.TrimRightFunc(s, unicode.IsSpace)
		p.wsHold = s[len(trimmed):]
		s = trimmed
	} else if len(p.msg.ToolCalls) > 0 {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	if s == "" {
		return
	}
	p.started = true
	p.msg.Content += s
	*out = append(*out, Delta{Content: s})
}

func (p *Parser) emitThinking(out *[]Delta, s string, final bool) {
	if p.msg.Thinking == "" {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	s = p.wsHold + s
	p.wsHold = ""
	trimmed := strings.TrimRightFunc(s, unicode.IsSpace)
	if !final {
		p.wsHold = s[len(trimmed):]
	}
	s = trimmed
	if s == "" {
		return
	}
	p.started = true
	p.msg.Thinking += s
	*out = append(*out, Delta{Thinking: s})
}

func (p *Parser) emitCalls(out *[]Delta, calls []ToolCall) {
	for _, c := range calls {
		p.emitCall(out, c)
	}
}

func (p *Parser) emitCall(out *[]Delta, c ToolCall) {
	if c.ID == "" {
		if p.opts.NewID != nil {
			c.ID = p.opts.NewID()
		} else {
			c.ID = randomID()
		}
	}
	p.wsHold = ""
	p.msg.ToolCalls = append(p.msg.ToolCalls, c)
	call := c
	*out = append(*out, Delta{ToolCall: &call})
}

func (p *Parser) findMarker(s string) (int, string) {
	best, which := -1, ""
	for _, m := range p.markers {
		if i := strings.Index(s, m); i >= 0 && (best < 0 || i < best) {
			best, which = i, m
		}
	}
	return best, which
}

func (p *Parser) partialMarker(s string) int {
	hold := 0
	for _, m := range p.markers {
		hold = max(hold, partialSuffix(s, m))
	}
	return hold
}

// partialSuffix returns the length of the longest suffix of s that is a
// proper prefix of marker.
func partialSuffix(s, marker string) int {
	for n := min(len(s), len(marker)-1); n > 0; n-- {
		if strings.HasSuffix(s, marker[:n]) {
			return n
		}
	}
	return 0
}

// partialRune returns the length of an incomplete UTF-8 sequence at the end
// of s, which must wait for its remaining bytes.
func partialRune(s string) int {
	for n := 1; n <= 3 && n <= len(s); n++ {
		c := s[len(s)-n]
		if c < 0x80 {
			return 0
		}
		if c >= 0xC0 { // a leading byte: complete only if its length fits
			need := 2
			if c >= 0xF0 {
				need = 4
			} else if c >= 0xE0 {
				need = 3
			}
			if need > n {
				return n
			}
			return 0
		}
	}
	return 0
}

// callJSON is a tool call as models write it.
type callJSON struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
	ID         string          `json:"id"`
	Function   *callJSON       `json:"function"`
	ToolName   string          `json:"tool_name"`    // Command R7B's name
	ToolCallID string          `json:"tool_call_id"` // and ID
}

func (c *callJSON) toolCall() (ToolCall, bool) {
	if c.Function != nil && c.Name == "" {
		inner := *c.Function
		if inner.ID == "" {
			inner.ID = c.ID
		}
		return inner.toolCall()
	}
	if c.Name == "" {
		return ToolCall{}, false
	}
	args := c.Arguments
	if len(args) == 0 {
		args = c.Parameters
	}
	return ToolCall{ID: c.ID, Name: c.Name, Arguments: normalizeArgs(args)}, true
}

// normalizeArgs returns compact JSON for an arguments object; a JSON string
// holding JSON is unwrapped.
func normalizeArgs(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil && json.Valid([]byte(s)) {
			raw = []byte(s)
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}

// parseCalls reads what stands between the format's call markers, closed
// says whether the close marker was found: the list of calls of a format
// that lists them (only closed, as llama.cpp takes a list cut short for
// no call), else one call (parseCall).
func (p *Parser) parseCalls(body string, closed bool) ([]ToolCall, bool) {
	if p.f.listsCalls() {
		if !closed {
			return nil, false
		}
		if p.f.Tools == ToolsMiniMax { // its values typed by the tools' schemas
			return minimaxTags.calls(body, p.opts.Defs)
		}
		return p.f.parseCallList(body)
	}
	c, ok := p.parseCall(body)
	return []ToolCall{c}, ok
}

// parseCall reads the body of one call in the format's syntax: Gemma 4's
// notation, Seed-OSS's XML form, GLM's pairs, or Hermes' JSON object or
// XML form.
func (p *Parser) parseCall(body string) (ToolCall, bool) {
	switch p.f.Tools {
	case ToolsGemma4:
		return parseGemma4Call(body)
	case ToolsSeed:
		return parseXMLCall(body, p.opts.Defs)
	case ToolsGLM:
		return parseGLMCall(body, p.opts.Defs)
	}
	if c, ok := parseXMLCall(body, p.opts.Defs); ok {
		return c, true
	}
	var c callJSON
	body = strings.TrimSpace(body)
	body = strings.TrimPrefix(strings.TrimSuffix(body, "```"), "```json")
	if json.Unmarshal([]byte(strings.TrimSpace(body)), &c) != nil {
		return ToolCall{}, false
	}
	return c.toolCall()
}

// parseRest parses what follows [TOOL_CALLS], <|python_tag|>,
// Granite's <|tool_call|> or Firefunction v2's " functools[".
func (p *Parser) parseRest(s string) ([]ToolCall, bool) {
	s = strings.TrimSpace(s)
	switch p.f.Tools {
	case ToolsLlama3:
		if calls, ok := p.parseLlamaJSON(s); ok {
			return calls, true
		}
		return parseBuiltinCall(s)
	case ToolsGranite:
		return p.f.parseCallList(s)
	case ToolsFirefunction:
		return p.f.parseCallList("[" + s)
	}
	// Mistral: a JSON array, or name[ARGS]{…} (newer templates), possibly
	// repeated with [TOOL_CALLS] between calls.
	if strings.HasPrefix(s, "{") {
		s = "[" + s + "]"
	}
	if strings.HasPrefix(s, "[") {
		return p.f.parseCallList(s)
	}
	var calls []ToolCall
	for _, part := range strings.Split(s, mistralCalls) {
		name, args, ok := strings.Cut(strings.TrimSpace(part), mistralArgs)
		if !ok || strings.TrimSpace(name) == "" || !json.Valid([]byte(args)) {
			return nil, false
		}
		calls = append(calls, ToolCall{Name: strings.TrimSpace(name), Arguments: normalizeArgs(json.RawMessage(args))})
	}
	return calls, len(calls) > 0
}

// parseLlamaJSON parses Llama 3.x tool calls: one JSON object, or several
// separated by ";".
func (p *Parser) parseLlamaJSON(s string) ([]ToolCall, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	var calls []ToolCall
	for {
		var c callJSON
		if err := dec.Decode(&c); err != nil {
			return nil, false
		}
		if len(c.Parameters) == 0 && len(c.Arguments) == 0 && c.Function == nil {
			return nil, false // not a call, just JSON the user asked for
		}
		tc, ok := c.toolCall()
		if !ok {
			return nil, false
		}
		calls = append(calls, tc)
		rest := strings.TrimSpace(s[dec.InputOffset():])
		if rest == "" {
			return calls, true
		}
		if !strings.HasPrefix(rest, ";") {
			return nil, false
		}
		s = strings.TrimPrefix(rest, ";")
		dec = json.NewDecoder(strings.NewReader(s))
	}
}

var builtinCallRe = regexp.MustCompile(`^([\w-]+)\.call\((.*)\)\s*$`)
var builtinArgRe = regexp.MustCompile(`\s*(\w+)\s*=\s*("(?:[^"\\]|\\.)*")\s*,?`)

// parseBuiltinCall parses Llama 3.1's built-in tool syntax:
// brave_search.call(query="…").
func parseBuiltinCall(s string) ([]ToolCall, bool) {
	m := builtinCallRe.FindStringSubmatch(s)
	if m == nil {
		return nil, false
	}
	args := map[string]string{}
	rest := m[2]
	for strings.TrimSpace(rest) != "" {
		am := builtinArgRe.FindStringSubmatchIndex(rest)
		if am == nil || am[0] != 0 {
			return nil, false
		}
		var v string
		if json.Unmarshal([]byte(rest[am[4]:am[5]]), &v) != nil {
			return nil, false
		}
		args[rest[am[2]:am[3]]] = v
		rest = rest[am[1]:]
	}
	b, _ := json.Marshal(args)
	return []ToolCall{{Name: m[1], Arguments: string(b)}}, true
}

const idChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func randomID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = idChars[int(b[i])%len(idChars)]
	}
	return "call_" + string(b[:])
}
