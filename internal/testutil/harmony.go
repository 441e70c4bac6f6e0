package testutil

// HarmonyTemplate is a chat template of this repository's own in OpenAI's
// harmony format (gpt-oss): a system message with the date and the
// reasoning effort (reasoning_effort, "medium" by default), a developer
// message with the instructions and the tools as a TypeScript-like
// namespace (a recursive macro with a default argument), past reasoning
// read from thinking and kept only before a call no later answer
// follows (a namespace set in a loop over a slice), one call per
// assistant turn addressed to=functions.NAME with its arguments as JSON,
// tool results addressed back to the assistant, and <|return|> after a
// last assistant turn when there is no generation prompt. It uses the
// Jinja features gpt-oss's own template does, and its markers.
const HarmonyTemplate = `{#- A harmony-format template for tests. -#}
{%- macro ts_type(spec, optional=false) -%}
  {%- if spec.type is defined and spec.type is iterable and spec.type is not string and spec.type is not mapping -%}
    {{- spec.type | join(" | ") -}}
  {%- elif spec.type == "array" -%}
    {%- if 'items' in spec -%}{{- ts_type(spec['items']) + "[]" -}}{%- else -%}any[]{%- endif -%}
  {%- elif spec.type == "string" and spec.enum -%}
    {{- '"' + spec.enum | join('" | "') + '"' -}}
  {%- elif spec.type in ["integer", "number"] -%}number
  {%- elif spec.type in ["string", "boolean"] -%}{{- spec.type -}}
  {%- elif spec.type == "object" and spec.properties -%}
    {{- "{" -}}
    {%- for key, sub in spec.properties.items() -%}
      {{- key -}}{%- if key not in (spec.required or []) -%}?{%- endif -%}: {{ ts_type(sub) -}}
      {%- if not loop.last -%}, {% endif -%}
    {%- endfor -%}
    {{- "}" -}}
  {%- else -%}any
  {%- endif -%}
{%- endmacro -%}
{%- macro functions_namespace(tools) -%}
  {{- "namespace functions {\n" -}}
  {%- for t in tools -%}
    {%- set fn = t.function -%}
    {%- if fn.description %}{{ "// " + fn.description + "\n" }}{% endif -%}
    {{- "type " + fn.name + " = " -}}
    {%- if fn.parameters and fn.parameters.properties -%}
      {{- "(_: {\n" -}}
      {%- for key, spec in fn.parameters.properties.items() -%}
        {%- if spec.description %}{{ "// " + spec.description + "\n" }}{% endif -%}
        {{- key -}}{%- if key not in (fn.parameters.required or []) -%}?{%- endif -%}
        {{- ": " + ts_type(spec) -}}
        {%- if spec.default is defined %}{{ ", // default: " + spec.default | tojson }}{% endif -%}
        {{- ",\n" -}}
      {%- endfor -%}
      {{- "}) => any;\n" -}}
    {%- else -%}
      {{- "() => any;\n" -}}
    {%- endif -%}
  {%- endfor -%}
  {{- "} // namespace functions" -}}
{%- endmacro -%}
{{- "<|start|>system<|message|>Test assistant.\nToday: " + strftime_now("%Y-%m-%d") + "\n\n" -}}
{%- if reasoning_effort is not defined %}{% set reasoning_effort = "medium" %}{% endif -%}
{{- "Reasoning: " + reasoning_effort + "\n\n# Channels: analysis, commentary, final." -}}
{%- if tools %}{{ "\nTool calls go to the commentary channel." }}{% endif -%}
{{- "<|end|>" -}}
{%- if messages and messages[0].role in ["system", "developer"] -%}
  {%- set instructions = messages[0].content -%}
  {%- set rest = messages[1:] -%}
{%- else -%}
  {%- set instructions = "" -%}
  {%- set rest = messages -%}
{%- endif -%}
{%- if instructions or tools -%}
  {{- "<|start|>developer<|message|>" -}}
  {%- if instructions %}{{ "# Instructions\n\n" + instructions }}{% if tools %}{{ "\n\n" }}{% endif %}{% endif -%}
  {%- if tools %}{{ "# Tools\n\n" + functions_namespace(tools) }}{% endif -%}
  {{- "<|end|>" -}}
{%- endif -%}
{%- set state = namespace(tool=none) -%}
{%- for m in rest -%}
  {%- if m.role == "assistant" -%}
    {%- if "thinking" in m and "<|channel|>" in m.thinking -%}
      {{- raise_exception("thinking must not hold channel markers") -}}
    {%- endif -%}
    {%- if "tool_calls" in m -%}
      {%- set later = namespace(answer=false) -%}
      {%- for n in rest[loop.index:] -%}
        {%- if n.role == "assistant" and "tool_calls" not in n %}{% set later.answer = true %}{% endif -%}
      {%- endfor -%}
      {%- set call = m.tool_calls[0] -%}
      {%- if call.function %}{% set call = call.function %}{% endif -%}
      {%- if not later.answer and (m.thinking or m.content) -%}
        {{- "<|start|>assistant<|channel|>analysis<|message|>" + (m.thinking or m.content) + "<|end|>" -}}
      {%- endif -%}
      {{- "<|start|>assistant to=functions." + call.name + "<|channel|>commentary json<|message|>" + call.arguments | tojson + "<|call|>" -}}
      {%- set state.tool = call.name -%}
    {%- elif loop.last and not add_generation_prompt -%}
      {%- if m.thinking %}{{ "<|start|>assistant<|channel|>analysis<|message|>" + m.thinking + "<|end|>" }}{% endif -%}
      {{- "<|start|>assistant<|channel|>final<|message|>" + m.content + "<|return|>" -}}
    {%- else -%}
      {{- "<|start|>assistant<|channel|>final<|message|>" + m.content + "<|end|>" -}}
      {%- set state.tool = none -%}
    {%- endif -%}
  {%- elif m.role == "tool" -%}
    {%- if state.tool is none %}{{ raise_exception("a tool result needs a call before it") }}{% endif -%}
    {{- "<|start|>functions." + state.tool + " to=assistant<|channel|>commentary<|message|>" + m.content | tojson + "<|end|>" -}}
  {%- elif m.role == "user" -%}
    {{- "<|start|>user<|message|>" + m.content + "<|end|>" -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<|start|>assistant{% endif -%}`

// HarmonyTokens are the harmony format's markers as gpt-oss's vocabulary
// holds them: control tokens, of which llama.cpp makes <|return|> and
// <|call|> end generation and keeps <|end|> and the channel markers in
// the text (ModelSpec.ChatTokens).
var HarmonyTokens = []string{"<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>"}

// TinyHarmony is TinyLlama (context 1024) with HarmonyTemplate and its
// markers as control tokens: a model whose chat is in gpt-oss's format.
func TinyHarmony() ModelSpec {
	s := TinyLlama()
	s.Context = 1024
	s.ChatTemplate = HarmonyTemplate
	s.ChatTokens = HarmonyTokens
	return s
}
