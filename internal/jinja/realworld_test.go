package jinja

import "testing"

// TestRealWorldConstructs covers constructs found in published chat
// templates (Mistral Small 3.1, Command R7B, Gemma 4, DeepSeek R1 …).
func TestRealWorldConstructs(t *testing.T) {
	vars := map[string]Value{
		"messages": mustJSON(t, `[{"role":"user","content":"a"},{"role":"assistant","content":"b","tool_calls":[{"id":"call_0123456789","type":"function","function":{"name":"f","arguments":{"x":1,"y":"z"}}}]},{"role":"tool","content":"r","tool_call_id":"call_0123456789"},{"role":"tool","content":"s"},{"role":"user","content":"c"}]`),
		"tools":    mustJSON(t, `[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object","properties":{"b":{"type":["string","null"]},"a":{"type":"string","enum":["x","y"]}}},"return":{"type":"string"}}}]`),
	}
	cases := []renderCase{
		{"backslash newline in string", "{{ \"one \\\ntwo\" }}", "one two"},
		{"items with filter and unpacking", `{% for t in tools %}{% set t = t.function %}{% for k, v in t.items() if k != "return" %}{{ k }}{% if not loop.last %},{% endif %}{% endfor %}{% endfor %}`,
			"name,description,parameters"},
		{"dict equality", `{% set users = messages|selectattr("role", "equalto", "user")|list %}{% for m in messages %}{{ m == users[-1] }} {% endfor %}`,
			"False False False False True "},
		{"string slices", `{% set out = messages[1].tool_calls[0].function|tojson %}{{ out[:-1] }}, "id": "{{ messages[1].tool_calls[0].id[-9:] }}"}`,
			`{"name": "f", "arguments": {"x": 1, "y": "z"}, "id": "123456789"}`},
		{"break in nested if", `{% for m in messages[2:] %}{% if m.role == 'tool' %}{{ m.content }}{% else %}{% break %}{% endif %}{% endfor %}`, "rs"},
		{"computed slice", `{% for m in messages %}{% if loop.index0 == 1 %}{{ messages[loop.index0 + 1:]|length }}{% endif %}{% endfor %}`, "3"},
		{"map filter by name", `{{ tools[0].function.parameters.properties.b.type|map('upper')|list }}`, "['STRING', 'NULL']"},
		{"dictsort in for", `{% for k, v in tools[0].function.parameters.properties|dictsort %}{{ k }}{% endfor %}`, "ab"},
		{"recursive macro with kwargs", `{%- macro fmt(a, esc=True) -%}
{%- if a is string -%}{{- '<|"|>' + a + '<|"|>' if esc else a -}}
{%- elif a is mapping -%}{{- '{' -}}{%- for k, v in a|dictsort -%}{{ k }}:{{- fmt(v, esc=esc) -}}{{- ',' if not loop.last -}}{%- endfor -%}{{- '}' -}}
{%- elif a is sequence -%}[{%- for i in a -%}{{- fmt(i, esc=esc) -}}{%- if not loop.last %},{% endif -%}{%- endfor -%}]
{%- else -%}{{- a -}}{%- endif -%}
{%- endmacro -%}
{{ fmt(tools[0].function.parameters) }}|{{ fmt(messages[1].tool_calls[0].function.arguments, esc=false) }}`,
			`{properties:{a:{enum:[<|"|>x<|"|>,<|"|>y<|"|>],type:<|"|>string<|"|>},b:{type:[<|"|>string<|"|>,<|"|>null<|"|>]}},type:<|"|>object<|"|>}|{x:1,y:z}`},
		{"filter binds tighter than not", `{{ not enable_thinking | default(false) }}`, "True"},
		{"conditional expression with index", `{% set v = tools[0].function.parameters.properties.b %}{{ v['type'] if v['type'] is string else v['type'][0] }}`, "string"},
		{"namespace with None", `{% set ns = namespace(prev=None) %}{{ ns.prev is none }}`, "True"},
		{"role lower", `{{ messages[0]['role']|lower == 'user' }}`, "True"},
		{"macro text used in output", `{%- macro idx(id) %}{%- set c = namespace(v=0) %}{%- for m in messages %}{%- if m.tool_calls %}{%- for tc in m.tool_calls %}{%- if tc.id == id -%}{{ c.v }}{%- endif %}{%- set c.v = c.v + 1 %}{%- endfor %}{%- endif %}{%- endfor %}{%- endmacro %}"{{ idx("call_0123456789") }}"`, `"0"`},
		{"string in list literal", `{{ messages[0]['role'] in ['system', 'developer'] }}`, "False"},
		{"not defined idiom", `{% if not tools_in_user_message is defined %}{% set tools_in_user_message = true %}{% endif %}{{ tools_in_user_message }}`, "True"},
		{"add_generation_prompt default", `{% if not add_generation_prompt is defined -%}{%- set add_generation_prompt = false -%}{%- endif -%}{{ add_generation_prompt }}`, "False"},
		{"unicode markers", `{{ '<｜User｜>' + messages[0]['content'] }}`, "<｜User｜>a"},
		{"string membership and split", `{% set c = 'x</think>y' %}{% if '</think>' in c %}{{ c.split('</think>')[-1] }}{% endif %}`, "y"},
		{"tojson of arguments dict", `{{ messages[1].tool_calls[0].function.arguments|tojson }}`, `{"x": 1, "y": "z"}`},
		{"content is none test", `{{ messages[1]['content'] is not none }}`, "True"},
	}
	renderCases(t, cases, vars)
}
