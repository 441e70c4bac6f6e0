package testutil

// Gemma4Template is this repository's own template in Gemma 4's format,
// with the Jinja features and conversation shape of Google's (macros
// taking keyword arguments and calling themselves, namespaces, dictsort,
// type tests, string methods, tool results read from the model turn's
// tool_responses). Google's own template (llama.cpp's
// models/templates/gemma4.jinja) was rendered by hand against llama.cpp's
// rules and not kept here (third-party text).
const Gemma4Template = `{%- macro arg(v, escape_keys=True) -%}
{%- if v is string -%}{{ '<|"|>' + v + '<|"|>' }}
{%- elif v is boolean -%}{{ 'true' if v else 'false' }}
{%- elif v is mapping -%}{{ '{' }}{%- set ns = namespace(first=true) -%}
{%- for k, x in v | dictsort -%}{%- if not ns.first %},{% endif -%}{%- set ns.first = false -%}
{%- if escape_keys -%}{{ '<|"|>' + k + '<|"|>' }}{%- else -%}{{ k }}{%- endif -%}:{{ arg(x, escape_keys=escape_keys) }}
{%- endfor -%}{{ '}' }}
{%- elif v is sequence -%}[{%- for x in v -%}{{ arg(x, escape_keys=escape_keys) }}{%- if not loop.last %},{% endif -%}{%- endfor -%}]
{%- else -%}{{ v }}{%- endif -%}
{%- endmacro -%}
{%- set ns = namespace(prev=None) -%}
{%- set loop_messages = messages -%}
{{ bos_token }}
{%- if enable_thinking or tools or messages[0]['role'] == 'system' -%}
{{- '<|turn>system\n' -}}
{%- if enable_thinking -%}{{- '<|think|>' -}}{%- endif -%}
{%- if messages[0]['role'] == 'system' -%}{{- messages[0]['content'] | trim -}}{%- set loop_messages = messages[1:] -%}{%- endif -%}
{%- for tool in tools or [] -%}{{- '<|tool>declaration:' + tool['function']['name'] + arg(tool['function']['parameters']['properties'] | default({})) + '<tool|>' -}}{%- endfor -%}
{{- '<turn|>\n' -}}
{%- endif -%}
{%- for message in loop_messages -%}
{%- set ns.prev = None -%}
{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
{{- '<|turn>' + role + '\n' -}}
{%- for call in message['tool_calls'] or [] -%}
{{- '<|tool_call>call:' + call['function']['name'] + '{' -}}
{%- for k, x in call['function']['arguments'] | dictsort -%}{{ k }}:{{ arg(x, escape_keys=False) }}{%- if not loop.last %},{% endif -%}{%- endfor -%}
{{- '}<tool_call|>' -}}
{%- endfor -%}
{%- for r in message['tool_responses'] or [] -%}
{{- '<|tool_response>response:' + r['name'] + ('{' if r['response'] is mapping else '{value:') -}}
{%- if r['response'] is mapping -%}{%- for k, x in r['response'] | dictsort -%}{{ k }}:{{ arg(x, escape_keys=False) }}{%- if not loop.last %},{% endif -%}{%- endfor -%}
{%- else -%}{{ arg(r['response'], escape_keys=False) }}{%- endif -%}
{{- '}<tool_response|>' -}}{%- set ns.prev = 'tool_response' -%}
{%- endfor -%}
{%- if message['content'] is string -%}{{- message['content'].split('<|channel>')[0] | trim -}}{%- endif -%}
{%- if not (message['tool_responses'] and not message['content']) -%}{{- '<turn|>\n' -}}{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{%- if ns.prev != 'tool_response' -%}{{- '<|turn>model\n' -}}{%- endif -%}
{%- if not enable_thinking | default(false) -%}{{- '<|channel>thought\n<channel|>' -}}{%- endif -%}
{%- endif -%}
{#- '<|tool_call>call:' -#}`

// XMLCallTemplate is a small chat template in the format of Qwen 3.5
// (ChatML turns, tools offered in the system turn, tool calls in the XML
// form <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n…,
// tool results as <tool_response>).
const XMLCallTemplate = chatMLHead + `{% for tc in m.tool_calls %}<tool_call>
<function={{ tc.function.name }}>
{% for k, v in tc.function.arguments | items %}<parameter={{ k }}>
{{ v if v is string else v | tojson }}
</parameter>
{% endfor %}</function>
</tool_call>{% endfor %}` + chatMLTail

// MiniMaxTemplate is this repository's own small template in MiniMax-M2's
// format: ]~!b[ and ]~b]ROLE turns ended by [e~[, tools offered in the
// system turn, calls as <minimax:tool_call> and an <invoke name="NAME">
// of <parameter name="KEY">VALUE</parameter> lines, results as
// <response> blocks of a tool turn.
const MiniMaxTemplate = `]~!b[]~b]system
{%- if tools %}
# Tools
<tools>
{% for t in tools %}<tool>{{ t | tojson }}</tool>
{% endfor %}</tools>
{%- endif %}[e~[
{% for m in messages %}
{%- if m.role == 'assistant' %}]~b]ai
{{ m.content }}{% if m.tool_calls %}
<minimax:tool_call>
{% for tc in m.tool_calls %}<invoke name="{{ tc.function.name }}">
{% for k, v in tc.function.arguments | items %}<parameter name="{{ k }}">{{ v if v is string else v | tojson }}</parameter>
{% endfor %}</invoke>
{% endfor %}</minimax:tool_call>{% endif %}[e~[
{% elif m.role == 'tool' %}]~b]tool
<response>{{ m.content }}</response>[e~[
{% else %}]~b]{{ m.role }}
{{ m.content }}[e~[
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}]~b]ai
{% endif %}`

// TinyMiniMaxChat is TinyChat with MiniMaxTemplate.
func TinyMiniMaxChat() ModelSpec {
	s := TinyChat()
	s.ChatTemplate = MiniMaxTemplate
	return s
}

// TinyXMLChat is TinyChat with XMLCallTemplate.
func TinyXMLChat() ModelSpec {
	s := TinyChat()
	s.ChatTemplate = XMLCallTemplate
	return s
}

// TinyGemma4Chat is TinyLlama (context 1024) with Gemma4Template and
// Gemma 4's markers as control tokens.
func TinyGemma4Chat() ModelSpec {
	s := TinyChat()
	s.ChatTemplate = Gemma4Template
	s.ChatTokens = []string{"<|turn>", "<turn|>", "<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", `<|"|>`}
	return s
}
