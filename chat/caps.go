package chat

import (
	"time"

	"github.com/lowmem/llm/internal/jinja"
)

// probeLimits keep capability probing cheap even for a hostile template.
var probeLimits = jinja.Limits{MaxSteps: 200_000, MaxBytes: 8 << 20, MaxOutput: 1 << 20, MaxDepth: 32}

// probeCaps renders probe conversations and records which parts of them
// the template read, following llama.cpp (common/jinja/caps.cpp): a template
// "supports the system role" when it reads the system message's content, and
// so on. Render errors during probing only mean "not supported".
func probeCaps(t *jinja.Template) Caps {
	caps := Caps{SystemRole: true, StringContent: true, Tools: true, ToolCalls: true, ParallelToolCalls: true}

	run := func(messages, tools jinja.Value) (msgs, tls jinja.Value, ok bool) {
		msgs, tls = jinja.Track(messages), jinja.Track(tools)
		vars := map[string]jinja.Value{
			"messages":              msgs,
			"tools":                 tls,
			"bos_token":             jinja.String(""),
			"eos_token":             jinja.String(""),
			"add_generation_prompt": jinja.Bool(true),
		}
		_, err := t.Render(vars, jinja.Options{Limits: probeLimits, Now: time.Unix(0, 0).UTC()})
		return msgs, tls, err == nil
	}

	// Typed content: is content indexed or filtered like a list?
	msgs, _, ok := run(jinja.List(msg("user", "content")), jinja.List())
	content := msgs.Index(0).Get("content")
	if content.Accessed(jinja.OpIndexed) || content.Accessed(jinja.OpSelectattr) {
		caps.TypedContent = true
	}
	if !ok {
		caps.StringContent = false
	}

	// System role: is the system message's content read?
	msgs, _, _ = run(jinja.List(msg("system", "System message"), msg("user", "User message")), jinja.List())
	if !msgs.Index(0).Get("content").Used() {
		caps.SystemRole = false
	}

	// Tools and tool calls, arguments as an object.
	msgs, tools, ok := run(toolConversation(1, true), probeTools())
	if ok {
		if !tools.Index(0).Get("function").Get("name").Used() {
			caps.Tools = false
		}
		calls := msgs.Index(1).Get("tool_calls")
		if !calls.Used() {
			caps.ToolCalls = false
		} else if calls.Index(0).Get("function").Get("arguments").Get("arg").Used() {
			caps.ObjectArguments = true
		}
	}
	if !caps.ObjectArguments && (ok && caps.ToolCalls || !ok) {
		// Arguments as a JSON string.
		msgs, tools, ok := run(toolConversation(1, false), probeTools())
		if !ok {
			caps.Tools, caps.ToolCalls = false, false
		} else {
			caps.Tools = tools.Index(0).Get("function").Get("name").Used()
			caps.ToolCalls = msgs.Index(1).Get("tool_calls").Used()
		}
	}

	// Parallel tool calls: is the second call read?
	msgs, _, ok = run(toolConversation(2, caps.ObjectArguments), probeTools())
	if !ok || !msgs.Index(1).Get("tool_calls").Index(1).Get("function").Used() {
		caps.ParallelToolCalls = false
	}

	// Reasoning of past assistant turns.
	asst := msg("assistant", "Assistant message")
	asst.Set("reasoning_content", jinja.String("Reasoning content"))
	msgs, _, _ = run(jinja.List(msg("user", "User message"), asst, msg("user", "User message")), jinja.List())
	caps.Reasoning = msgs.Index(1).Get("reasoning_content").Used()
	return caps
}

func msg(role, content string) jinja.Value {
	d := jinja.NewDict()
	d.Set("role", jinja.String(role))
	d.Set("content", jinja.String(content))
	return d
}

func toolConversation(calls int, objectArgs bool) jinja.Value {
	list := make([]jinja.Value, calls)
	for i := range list {
		var args jinja.Value
		if objectArgs {
			args = jinja.NewDict()
			args.Set("arg", jinja.String("value"))
		} else {
			args = jinja.String(`{"arg": "value"}`)
		}
		fn := jinja.NewDict()
		fn.Set("name", jinja.String("tool1"))
		fn.Set("arguments", args)
		c := jinja.NewDict()
		c.Set("id", jinja.String([]string{"call00001", "call00002"}[i%2]))
		c.Set("type", jinja.String("function"))
		c.Set("function", fn)
		list[i] = c
	}
	asst := msg("assistant", "")
	asst.Set("tool_calls", jinja.List(list...))
	tool := msg("tool", "Tool response")
	tool.Set("tool_call_id", jinja.String("call00001"))
	return jinja.List(
		msg("user", "User message"),
		asst,
		tool,
		msg("assistant", "The tool response was 'tool response'"),
		msg("user", "User message"),
	)
}

func probeTools() jinja.Value {
	v, _ := jinja.FromJSON([]byte(`[{"name": "tool", "type": "function", "function": {"name": "tool1",
		"description": "Tool description", "parameters": {"type": "object", "properties": {"arg":
		{"type": "string", "description": "Arg description"}}, "required": ["arg"]}}}]`))
	return v
}
