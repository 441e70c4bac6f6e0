package chat

import (
	"encoding/json"
	"strings"
	"unicode"
)

// OpenAI's harmony format (gpt-oss). A conversation is a run of messages
// <|start|>ROLE HEADER<|message|>BODY<|end|>, where the header names the
// channel (<|channel|>analysis, commentary or final), may address the
// message to a recipient (to=functions.NAME, in the role part or after the
// channel) and may constrain its body (<|constrain|>json, or a bare json).
// The prompt ends with <|start|>assistant, so the model's output starts
// at a header; it ends at <|return|> (after the final answer) or <|call|>
// (after a tool call), which end generation and so are not in the text.
const (
	harmonyStart     = "<|start|>"
	harmonyChannel   = "<|channel|>"
	harmonyMessage   = "<|message|>"
	harmonyEnd       = "<|end|>"
	harmonyConstrain = "<|constrain|>"
	harmonyCall      = "<|call|>"
	harmonyReturn    = "<|return|>"
)

// harmonyMarkers are the markers a harmony reply is parsed by, which a
// session must keep in the text (llama.cpp's preserved tokens for gpt-oss).
var harmonyMarkers = []string{harmonyChannel, harmonyConstrain, harmonyMessage, harmonyStart, harmonyEnd}

// harmonyStops end a message's body: <|end|>, the two end-of-generation
// markers (should a caller pass them on), and a new message.
var harmonyStops = []string{harmonyEnd, harmonyCall, harmonyReturn, harmonyStart}

// harmonyMaxHeader bounds a header: text that has not reached <|message|>
// by then is not a header, and is shown as content.
const harmonyMaxHeader = 256

// What a harmony message's body is, by its header.
type harmonyKind uint8

const (
	harmonyContent  harmonyKind = iota // final, or commentary to no one (a preamble)
	harmonyThinking                    // analysis
	harmonyToolCall                    // to=functions.NAME, with tools offered
	harmonyDrop                        // to another recipient (a built-in tool), or a call with no tools offered
)

// harmonyHeader reads a header (the text between <|start|> and
// <|message|>, or the first message's, which follows the prompt's
// <|start|>assistant): its channel is the last <|channel|>'s (gpt-oss
// sometimes writes a stray <|channel|>commentary first), its recipient
// what follows "to=". It returns ok false for text that cannot start a
// header.
func harmonyHeader(h string) (channel, recipient string, ok bool) {
	h, _ = harmonyRole(h)
	if !strings.HasPrefix(h, harmonyChannel) && !strings.HasPrefix(h, "to=") {
		return "", "", false
	}
	word := func(s string) string {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if i := strings.IndexFunc(s, func(r rune) bool { return r == '<' || unicode.IsSpace(r) }); i >= 0 {
			return s[:i]
		}
		return s
	}
	if i := strings.LastIndex(h, harmonyChannel); i >= 0 {
		channel = word(h[i+len(harmonyChannel):])
	}
	if i := strings.LastIndex(h, "to="); i >= 0 {
		recipient = word(h[i+len("to="):])
	}
	return channel, recipient, true
}

// harmonyRole skips what may open a header, <|start|> and the role
// assistant, and the whitespace around them (a SentencePiece vocabulary
// shows a space after a marker); partial says h ends inside one of them.
func harmonyRole(h string) (rest string, partial bool) {
	rest = strings.TrimLeftFunc(h, unicode.IsSpace)
	for _, p := range []string{harmonyStart, RoleAssistant} {
		switch {
		case strings.HasPrefix(rest, p):
			rest = strings.TrimLeftFunc(rest[len(p):], unicode.IsSpace)
		case strings.HasPrefix(p, rest):
			return "", true
		}
	}
	return rest, false
}

// harmonyHeaderStart reports whether s may still grow into a header.
func harmonyHeaderStart(s string) bool {
	rest, partial := harmonyRole(s)
	if partial {
		return true
	}
	for _, p := range []string{harmonyChannel, "to="} {
		if strings.HasPrefix(rest, p) || strings.HasPrefix(p, rest) {
			return true
		}
	}
	return false
}

// stepHarmonyHeader waits for a header's <|message|> and chooses what the
// body is; text that cannot be a header is content to the end.
func (p *Parser) stepHarmonyHeader(out *[]Delta) bool {
	i := strings.Index(p.pending, harmonyMessage)
	if i < 0 {
		if len(p.pending) > harmonyMaxHeader || !harmonyHeaderStart(p.pending) {
			p.mode = modeRaw
			return true
		}
		return false
	}
	channel, recipient, ok := harmonyHeader(p.pending[:i])
	if !ok || i > harmonyMaxHeader {
		p.mode = modeRaw
		return true
	}
	p.pending = p.pending[i+len(harmonyMessage):]
	p.mode, p.hKind, p.hName = modeHarmonyBody, harmonyContent, ""
	switch {
	case recipient != "" && recipient != RoleAssistant:
		p.hKind = harmonyDrop
		if name, ok := strings.CutPrefix(recipient, "functions."); ok && p.opts.Tools && name != "" {
			p.hKind, p.hName = harmonyToolCall, name
		}
	case channel == "analysis":
		p.hKind = harmonyThinking
	}
	return true
}

// stepHarmonyBody passes a body on up to its end (a call's whole, when it
// is complete), holding back what may be the start of a marker.
func (p *Parser) stepHarmonyBody(out *[]Delta) bool {
	end, stop := -1, ""
	for _, m := range harmonyStops {
		if j := strings.Index(p.pending, m); j >= 0 && (end < 0 || j < end) {
			end, stop = j, m
		}
	}
	if end < 0 {
		if p.hKind == harmonyContent || p.hKind == harmonyThinking {
			hold := partialRune(p.pending)
			for _, m := range harmonyStops {
				hold = max(hold, partialSuffix(p.pending, m))
			}
			p.emitHarmony(out, p.pending[:len(p.pending)-hold], false)
			p.pending = p.pending[len(p.pending)-hold:]
		}
		return false
	}
	p.emitHarmony(out, p.pending[:end], true)
	p.pending = p.pending[end:]
	if stop != harmonyStart { // a new message keeps its <|start|> for the header
		p.pending = p.pending[len(stop):]
	}
	p.mode = modeHarmonyHeader
	return true
}

// emitHarmony passes on a piece of the current message's body; done says
// it is the end of the message, whose trailing whitespace is dropped.
func (p *Parser) emitHarmony(out *[]Delta, s string, done bool) {
	switch p.hKind {
	case harmonyContent:
		p.emitContent(out, s, false)
	case harmonyThinking:
		p.emitThinking(out, s, false)
	case harmonyToolCall:
		p.hBody += s
		if !done {
			return
		}
		body := strings.TrimSpace(p.hBody)
		p.hBody = ""
		if json.Valid([]byte(body)) {
			p.emitCall(out, ToolCall{Name: p.hName, Arguments: normalizeArgs(json.RawMessage(body))})
		} else {
			p.emitContent(out, body, false)
		}
	}
	if done {
		p.wsHold = ""
	}
}

// harmonyMessages adjusts messages for a harmony template as llama.cpp
// does: the template reads an assistant turn's reasoning as "thinking",
// and with tool calls as the analysis before the call, in place of the
// content.
func harmonyMessages(msgs []Message) []Message {
	for i, m := range msgs {
		if m.Role == RoleAssistant && m.Thinking != "" && len(m.ToolCalls) > 0 {
			msgs[i].Content = ""
		}
	}
	return msgs
}

// harmonyContinue makes a prompt rendered without a generation prompt end
// where the model continues, as llama.cpp does: the template closes a last
// assistant turn with <|return|>, which only ends a training example; at
// inference the turn ends with <|end|>.
func harmonyContinue(prompt string) string {
	if i := strings.LastIndex(prompt, harmonyReturn); i >= 0 {
		return prompt[:i] + harmonyEnd + prompt[i+len(harmonyReturn):]
	}
	return prompt
}
