// Package callgrammar holds generated text to one tool call in a syntax
// that is not JSON: the XML form that Qwen 3.5/3.6, Qwen3-Coder and
// Seed-OSS write,
//
//	<tool_call>
//	<function=NAME>
//	<parameter=KEY>
//	VALUE
//	</parameter>
//	</function>
//	</tool_call>
//
// (Seed-OSS's markers are <seed:tool_call> and </seed:tool_call>, and its
// values stand right after <parameter=KEY> and before </parameter>, without
// the newlines), and Gemma 4's notation,
//
//	<|tool_call>call:NAME{KEY:VALUE,KEY:VALUE}<tool_call|>
//
// whose strings stand between two <|"|>, and GLM-4.5's
//
//	<tool_call>NAME
//	<arg_key>KEY</arg_key>
//	<arg_value>VALUE</arg_value>
//	</tool_call>
//
// (GLM-4.7 writes the parts back to back, without the line breaks), and
// MiniMax-M2's, laid out as llama.cpp's grammar lays it out,
//
//	<minimax:tool_call>
//	<invoke name="NAME">
//	<parameter name="KEY">VALUE</parameter>
//	</invoke>
//	</minimax:tool_call>
//
// whose values are held as the XML form's. The
// name is one of the tools', each key one of that tool's parameters, at
// most once, and the call cannot close before its required parameters are
// given. A value follows its parameter's schema where a grammar of bytes
// can: a number's or integer's is a JSON number, a boolean's true or
// false, an enum's one of its strings. In the XML form and GLM's an
// object's is JSON that the schema allows (jsonprefix), and any other
// value (a string, an array, a parameter with no type or several) is free
// text that ends at the first </parameter> (</arg_value>); in Gemma 4's a
// string is <|"|>text<|"|>, and any other value is one of
// its notation (a string, number, literal, {…} or […], nested at most
// MaxDepth deep), by its syntax alone.
//
// A Machine recognizes the prefixes of such a call a byte at a time; a
// Filter is its sampler.Allower over a vocabulary, as jsonprefix.Filter
// is JSON's. It is what llm.WithToolChoice runs on for these templates:
//
//	g, err := callgrammar.Compile(callgrammar.Layout{Syntax: callgrammar.XML,
//		Open: "<tool_call>", Close: "</tool_call>", Newlines: true}, tools)
//	f := callgrammar.NewFilter(vocab, g) // vocab: the text each token adds
//	for !f.Done() {
//		id := sampler.SampleAllowed(logits, history, f)
//		f.Accept(id)
//		...
//	}
package callgrammar
