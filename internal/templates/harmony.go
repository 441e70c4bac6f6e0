package templates

// Harmony is a chat template, this repository's own, for OpenAI's harmony
// format (gpt-oss), used when a gpt-oss file carries no
// tokenizer.chat_template (Ollama keeps its template outside the GGUF).
// It writes what the harmony format specifies: the system message with
// the model identity, knowledge cutoff, today's date, the reasoning
// effort (reasoning_effort, "medium" by default) and the valid channels;
// a developer message with the instructions (a leading system or
// developer message) and the tools as a TypeScript-like namespace of
// functions; past reasoning (thinking) kept only before a call that no
// later answer follows; one call per assistant turn addressed
// to=functions.NAME with its arguments as JSON, and tool results addressed
// back to the assistant; <|return|> after a last assistant turn when there
// is no generation prompt.
const Harmony = `{%- macro ts_type(spec, optional=false) -%}
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
  {{- "## functions\n\nnamespace functions {\n\n" -}}
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
    {{- "\n" -}}
  {%- endfor -%}
  {{- "} // namespace functions" -}}
{%- endmacro -%}
{{- "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: " + strftime_now("%Y-%m-%d") + "\n\n" -}}
{%- if reasoning_effort is not defined %}{% set reasoning_effort = "medium" %}{% endif -%}
{{- "Reasoning: " + reasoning_effort + "\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message." -}}
{%- if tools %}{{ "\nCalls to these tools must go to the commentary channel: 'functions'." }}{% endif -%}
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
