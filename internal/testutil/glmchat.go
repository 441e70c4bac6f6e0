package testutil

// GLMTemplate is this repository's own template in GLM-4.5's chat format
// (GLM-4.6's too), written from the format's description: [gMASK]<sop>,
// the tools offered in a <|system|> turn, <|user|> turns (with /nothink
// when enable_thinking is false), <|assistant|> turns whose reasoning is
// kept after the last user turn and otherwise left an empty
// <think></think>, calls laid out a part a line as
// <tool_call>NAME, <arg_key>K</arg_key> and <arg_value>V</arg_value> (a
// string as it is, other values as JSON), results as <tool_response>
// blocks of one <|observation|> turn however many follow a call, and a
// generation prompt that closes an empty reasoning block when thinking is
// off. Zhipu's own template (llama.cpp's models/templates/GLM-4.6.jinja)
// was read for the format and not kept here (third-party text).
const GLMTemplate = `[gMASK]<sop>
{%- if tools -%}
<|system|>
# Tools

You can call these functions, each described in JSON between <tools> and </tools>:
<tools>
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}</tools>

To call one, write:
<tool_call>{function-name}
<arg_key>{key}</arg_key>
<arg_value>{value}</arg_value>
...
</tool_call>
{%- endif -%}
{%- set ns = namespace(last_user=-1) -%}
{%- for m in messages -%}{%- if m.role == 'user' -%}{%- set ns.last_user = loop.index0 -%}{%- endif -%}{%- endfor -%}
{%- for m in messages -%}
{%- if m.role == 'system' -%}
<|system|>
{{ m.content }}
{%- elif m.role == 'user' -%}
<|user|>
{{ m.content }}{{ '/nothink' if enable_thinking is defined and not enable_thinking and not m.content.endswith('/nothink') else '' }}
{%- elif m.role == 'assistant' -%}
<|assistant|>
{%- if loop.index0 > ns.last_user and m.reasoning_content -%}
{{ '\n<think>' + m.reasoning_content.strip() + '</think>' }}
{%- else -%}
{{ '\n<think></think>' }}
{%- endif -%}
{%- if m.content and m.content.strip() -%}{{ '\n' + m.content.strip() }}{%- endif -%}
{%- for tc in m.tool_calls or [] -%}
{{ '\n<tool_call>' + tc.function.name + '\n' }}
{%- for k, v in tc.function.arguments.items() -%}
{{ '<arg_key>' + k + '</arg_key>\n<arg_value>' }}{{ v if v is string else v | tojson }}{{ '</arg_value>\n' }}
{%- endfor -%}
{{ '</tool_call>' }}
{%- endfor -%}
{%- elif m.role == 'tool' -%}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' -%}{{ '<|observation|>' }}{%- endif -%}
{{ '\n<tool_response>\n' + m.content + '\n</tool_response>' }}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}<|assistant|>{{ '\n<think></think>' if enable_thinking is defined and not enable_thinking else '' }}{%- endif -%}`

// GLMTokens are GLM-4.5's turn, reasoning and call markers, which its
// vocabulary holds as control tokens (ModelSpec.ChatTokens).
var GLMTokens = []string{"[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>",
	"<think>", "</think>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"}

// TinyGLMChat is TinyLlama (context 1024) with GLMTemplate and GLMTokens.
func TinyGLMChat() ModelSpec {
	s := TinyChat()
	s.ChatTemplate = GLMTemplate
	s.ChatTokens = GLMTokens
	return s
}
