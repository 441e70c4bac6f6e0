package server

import (
	"strings"

	"github.com/lowmem/llm/chat"
)

// blockKind is what a run of a reply's text is.
type blockKind uint8

const (
	noBlock        blockKind = iota
	reasoningBlock           // the model's reasoning (chat.Delta.Thinking)
	answerBlock              // its answer (chat.Delta.Content)
)

// blockSink is what the Responses and Messages APIs do at each step of a
// reply: open a block, add text to it, close it with its whole text, or
// add a tool call (a block of its own). A false from textDelta or toolCall
// means the client is gone.
type blockSink interface {
	openBlock(kind blockKind)
	textDelta(kind blockKind, text string) bool
	closeBlock(kind blockKind, text string)
	toolCall(tc *chat.ToolCall) bool
}

// segmenter cuts a parsed reply's deltas into blocks for a sink: a run of
// reasoning, a run of answer text, each tool call alone.
type segmenter struct {
	sink   blockSink
	kind   blockKind // of the open block
	text   strings.Builder
	blocks int // opened so far, tool calls included
}

// push passes ds to the sink, opening and closing blocks as the kind of
// text changes.
func (g *segmenter) push(ds []chat.Delta) bool {
	for _, d := range ds {
		ok := true
		switch {
		case d.ToolCall != nil:
			g.close()
			g.blocks++
			ok = g.sink.toolCall(d.ToolCall)
		case d.Thinking != "":
			ok = g.add(reasoningBlock, d.Thinking)
		case d.Content != "":
			ok = g.add(answerBlock, d.Content)
		}
		if !ok {
			return false
		}
	}
	return true
}

func (g *segmenter) add(kind blockKind, text string) bool {
	if g.kind != kind {
		g.close()
		g.open(kind)
	}
	g.text.WriteString(text)
	return g.sink.textDelta(kind, text)
}

func (g *segmenter) open(kind blockKind) {
	g.kind = kind
	g.blocks++
	g.sink.openBlock(kind)
}

// finish closes the open block; a reply that made none gets an empty
// answer block, as a chat completion answers "".
func (g *segmenter) finish() {
	if g.blocks == 0 {
		g.open(answerBlock)
	}
	g.close()
}

func (g *segmenter) close() {
	if g.kind == noBlock {
		return
	}
	g.sink.closeBlock(g.kind, g.text.String())
	g.kind = noBlock
	g.text.Reset()
}
