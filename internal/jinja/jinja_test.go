package jinja

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func render(t *testing.T, src string, vars map[string]Value) (string, error) {
	t.Helper()
	tmpl, err := Parse(src)
	if err != nil {
		return "", err
	}
	return tmpl.Render(vars, Options{Now: time.Date(2026, 8, 18, 9, 5, 3, 0, time.UTC)})
}

// renderCase is a template and what it must print.
type renderCase struct{ name, src, want string }

func renderCases(t *testing.T, cases []renderCase, vars map[string]Value) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := render(t, c.src, vars)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func mustJSON(t *testing.T, s string) Value {
	t.Helper()
	v, err := FromJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRender(t *testing.T) {
	msgs := `[{"role":"system","content":" Be brief. "},{"role":"user","content":"Hi"},{"role":"assistant","content":"<think>\nhm\n</think>\n\nHello"}]`
	cases := []renderCase{
		{"text", "hello", "hello"},
		{"trailing newline dropped", "a\n", "a"},
		{"crlf", "a\r\nb", "a\nb"},
		{"output", "{{ 'x' + 'y' }}{{ 1 + 2 }}{{ 7 // 2 }}{{ -7 % 3 }}{{ 2 ** 10 }}", "xy3321024"},
		{"float text", "{{ 1.5 }} {{ 2.0 }} {{ 1 / 4 }}", "1.5 2.0 0.25"},
		{"none and bools", "{{ none }} {{ true }} {{ False }}", "None True False"},
		{"undefined prints empty", "[{{ nope }}][{{ nope.x }}][{{ nope[0] }}]", "[][][]"},
		{"concat none", "{{ 'a' + none }}", "a"},
		{"trim dash", "a  {{- 'b' -}}  c", "abc"},
		{"trim_blocks", "{% if true %}\nx\n{% endif %}\ny", "x\ny"},
		{"lstrip_blocks", "a\n    {% if true %}b{% endif %}", "a\nb"},
		{"lstrip keeps text", "a  {% if true %}b{% endif %}", "a  b"},
		{"expr keeps newline", "{{ 'a' }}\nb", "a\nb"},
		{"comment", "a{# c #}b{#- d -#}  c", "abc"},
		{"if elif else", "{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %}", "two"},
		{"for loop vars", "{% for m in messages %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }};{% endfor %}", "10TrueFalse33;21FalseFalse32;32FalseTrue31;"},
		{"for filter and else", "{% for m in messages if m.role == 'user' %}{{ m.content }}{% endfor %}{% for x in [] %}x{% else %}empty{% endfor %}", "Hiempty"},
		{"for dict and items", "{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }},{% endfor %}{% for k in {'x': 1} %}{{ k }}{% endfor %}{% for k, v in {'y': 2} %}{{ k }}{{ v }}{% endfor %}", "a=1,b=2,xy2"},
		{"break continue", "{% for i in range(10) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 4 %}{% break %}{% endif %}{{ i }}{% endfor %}", "023"},
		{"loop scope", "{% set a = 1 %}{% for i in [1] %}{% set a = 2 %}{% endfor %}{{ a }}", "1"},
		{"if scope", "{% if true %}{% set a = 2 %}{% endif %}{{ a }}", "2"},
		{"namespace", "{% set ns = namespace(n=0) %}{% for i in [1,2,3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", "6"},
		{"set block", "{% set s %}x{{ 1 }}{% endset %}[{{ s }}]", "[x1]"},
		{"set tuple", "{% set a, b = 1, 2 %}{{ a }}{{ b }}", "12"},
		{"macro", "{% macro f(a, b='d') %}{{ a }}-{{ b }}{% endmacro %}{{ f(1) }} {{ f(1, b=2) }} {{ f(a=3) }}", "1-d 1-2 3-d"},
		{"call block", "{% macro w() %}[{{ caller() }}]{% endmacro %}{% call w() %}in{% endcall %}", "[in]"},
		{"filter block", "{% filter upper %}abc{% endfilter %}", "ABC"},
		{"slices", "{{ messages[1:]|length }}{{ messages[-1].role }}{{ 'hello'[::-1] }}{{ [1,2,3,4][1:3] }}{{ messages[::-1][0].role }}", "2assistantolleh[2, 3]assistant"},
		{"string methods", "{{ ' a '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ 'a,b'.split(',') }}|{{ 'a b  c'.split() }}|{{ 'ab'.startswith('a') }}{{ 'ab'.endswith(('x','b')) }}|{{ 'aXa'.replace('a','b') }}|{{ 'hi there'.title() }}|{{ 'abc'.upper() }}", "a|a|['a', 'b']|['a', 'b', 'c']|TrueTrue|bXb|Hi There|ABC"},
		{"think split", "{{ messages[2].content.split('</think>')[-1].lstrip('\\n') }}|{{ messages[2].content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') }}", "Hello|hm"},
		{"filters", "{{ messages|length }}{{ ' x '|trim }}{{ [3,1,2]|sort }}{{ [1,2]|join('-') }}{{ none|default('d') }}{{ nope|default('u') }}{{ ''|default('e', true) }}{{ [1,2,3]|first }}{{ [1,2,3]|last }}{{ 'ab'|length }}{{ [1,1,2]|unique|list }}{{ -3|abs }}", "3x[1, 2, 3]1-2due132[1, 2]-3"},
		{"select", "{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|list }}{{ ['a', 'code_interpreter']|reject('equalto', 'code_interpreter')|join(', ') }}{{ [0,1,2]|select|list }}", "['Hi']a[1, 2]"},
		{"tests", "{{ 'a' is string }}{{ 1 is number }}{{ x is defined }}{{ nope is defined }}{{ none is none }}{{ false is false }}{{ 4 is divisibleby 2 }}{{ {} is mapping }}{{ [] is iterable }}{{ 3 is odd }}", "TrueTrueTrueFalseTrueTrueTrueTrueTrueTrue"},
		{"in", "{{ 'a' in 'cat' }}{{ 2 in [1,2] }}{{ 'role' in messages[0] }}{{ 'x' not in messages[0] }}{{ 'x' in nope }}", "TrueTrueTrueTrueFalse"},
		{"ternary", "{{ 'y' if x == 2 else 'n' }}{{ 'y' if x == 3 }}", "y"},
		{"tojson", `{{ {"a": [1, "é\n"], "b": none, "c": true}|tojson }}|{{ {"a": {"b": 1}}|tojson(indent=2) }}|{{ "é"|tojson(ensure_ascii=true) }}`, "{\"a\": [1, \"é\\n\"], \"b\": null, \"c\": true}|{\n  \"a\": {\n    \"b\": 1\n  }\n}|\"\\u00e9\""},
		{"dict access", "{{ messages[0]['role'] }}{{ messages[0].get('nope', 'd') }}{{ messages[0].get('nope') }}{{ {'items': 1}['items'] }}", "systemdNone1"},
		{"strftime", "{{ strftime_now('%d %b %Y %H:%M:%S %A %B %-d %j %p') }}", "18 Aug 2026 09:05:03 Tuesday August 18 230 AM"},
		{"raise in untaken branch", "{% if false %}{{ raise_exception('no') }}{% endif %}ok", "ok"},
		{"list append", "{% set l = [] %}{% for i in range(3) %}{% set _ = l.append(i) %}{% endfor %}{{ l }}", "[0, 1, 2]"},
		{"string repeat", "{{ '-' * 3 }}{{ 'ab' ~ 1 }}", "---ab1"},
		{"indent", "{{ 'a\\nb'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}", "a\n  b|  a\n  b"},
		{"dictsort", "{{ {'b': 1, 'a': 2}|dictsort }}", "[('a', 2), ('b', 1)]"},
		{"generation", "{% generation %}x{% endgeneration %}", "x"},
		{"repr quote", "{{ [\"it's\", 'a'] }}", "[\"it's\", 'a']"},
	}
	vars := map[string]Value{"messages": mustJSON(t, msgs), "x": Int(2)}
	renderCases(t, cases, vars)
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      error
		msg       string
	}{
		{"unclosed tag", "{{ x", ErrSyntax, "not closed"},
		{"unclosed if", "{% if x %}", ErrSyntax, "endif"},
		{"stray end", "{% endfor %}", ErrSyntax, "endfor"},
		{"unknown statement", "{% include 'x' %}", ErrSyntax, "include"},
		{"bad char", "{{ x $ y }}", ErrSyntax, "$"},
		{"raise", "{{ raise_exception('roles must alternate') }}", ErrRaised, "roles must alternate"},
		{"unknown filter", "{{ 'a'|frobnicate }}", ErrRuntime, "frobnicate"},
		{"type error", "{{ 1 - 'a' }}", ErrRuntime, "unsupported"},
		{"call undefined", "{{ nope() }}", ErrRuntime, "nope"},
		{"division by zero", "{{ 1 // 0 }}", ErrRuntime, "zero"},
		{"position", "line1\n{{ 1 - 'a' }}", ErrRuntime, "line 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := render(t, c.src, nil)
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not mention %q", err, c.msg)
			}
		})
	}
}

// TestHostile: templates that would hang, exhaust memory or overflow the
// stack end with ErrLimit, quickly.
func TestHostile(t *testing.T) {
	cases := []struct{ name, src string }{
		{"huge range", "{% for i in range(100000000000) %}x{% endfor %}"},
		{"endless nested loops", "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"},
		{"string doubling", "{% set ns = namespace(s='x') %}{% for i in range(200) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}"},
		{"string repeat", "{{ 'x' * 100000000000 }}"},
		{"recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"},
		{"mutual recursion", "{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}"},
		{"list growth", "{% set l = [1] %}{% for i in range(40) %}{% set l = l + l %}{% endfor %}{{ l|length }}"},
		{"append while looping", "{% set l = [1] %}{% for i in range(1000000) %}{% set _ = l.extend(l) %}{% endfor %}"},
		{"deep nesting", "{{ " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + " }}"},
		{"deep blocks", strings.Repeat("{% if true %}", 10000) + strings.Repeat("{% endif %}", 10000)},
		{"output flood", "{% for i in range(4000000) %}{{ 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' }}{% endfor %}"},
		{"self-containing list printed", "{% set l = [1] %}{% set _ = l.append(l) %}{% set _ = l.append(l) %}{{ l }}"},
		{"self-containing list as JSON", "{% set l = [1] %}{% set _ = l.append(l) %}{% set _ = l.append(l) %}{{ l|tojson }}"},
		{"self-containing lists compared", "{% set l = [1] %}{% set m = [1] %}{% for x in [l, l, m, m] %}{% set _ = x.append(x) %}{% endfor %}{% for i in range(100000) %}{{ l == m }}{% endfor %}"},
		{"self-containing list joined", "{% set l = [1] %}{% set _ = l.append(l) %}{% set _ = l.append(l) %}{{ [l, l]|join(',') }}"},
		{"self-containing string filter", "{% set l = [1] %}{% set _ = l.append(l) %}{% set _ = l.append(l) %}{{ 'x' ~ l|string }}"},
		{"replace blowup", "{% set ns = namespace(s='ab') %}{% for i in range(100) %}{% set ns.s = ns.s.replace('a', ns.s) %}{% endfor %}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmpl, err := Parse(c.src)
			if err != nil {
				if errors.Is(err, ErrLimit) {
					return
				}
				t.Fatalf("parse: %v", err)
			}
			_, err = tmpl.Render(nil, Options{Limits: Limits{MaxSteps: 300_000, MaxBytes: 8 << 20}})
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("error %v, want ErrLimit", err)
			}
		})
	}
}

func TestTrack(t *testing.T) {
	msgs := Track(mustJSON(t, `[{"role":"system","content":"S"},{"role":"user","content":"U"}]`))
	tmpl, err := Parse("{% if messages[0]['role'] == 'system' %}{{ raise_exception('no system') }}{% endif %}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmpl.Render(map[string]Value{"messages": msgs}, Options{}); !errors.Is(err, ErrRaised) {
		t.Fatal(err)
	}
	if !msgs.Index(0).Get("role").Used() || msgs.Index(0).Get("content").Used() {
		t.Errorf("role used %v (want true), content used %v (want false)",
			msgs.Index(0).Get("role").Used(), msgs.Index(0).Get("content").Used())
	}
}
