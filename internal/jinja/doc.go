// Package jinja renders the Jinja subset that real chat templates use, the way
// llama.cpp's own Jinja engine (common/jinja) renders it, with hard bounds.
//
// Chat templates come from model files, which are input like any other: a
// template may loop forever, build a string of terabytes or recurse without
// end. Every render here is bounded (Limits: evaluation steps, bytes built,
// output bytes, call depth and nesting), and going past a bound returns an
// error wrapping ErrLimit instead of hanging, exhausting memory or
// overflowing the stack.
//
// Supported: {{ }}, {% %} and {# #} with "-" whitespace control and the
// lstrip_blocks/trim_blocks behaviour chat templates are written for; if /
// elif / else, for (with loop.*, an inline if filter and else), set (also of
// namespace attributes, tuples and blocks), macro, call, filter blocks, break,
// continue, generation (ignored); the operators and literals of Jinja; the
// filters, tests, string/list/dict methods and globals (namespace, range,
// raise_exception, strftime_now, tojson) that templates on Hugging Face use.
//
// Template values may record which parts of the input a render read
// (Value.Used), which is how a caller probes what a template supports, as
// llama.cpp does to decide whether a template knows the system role.
//
// Example:
//
//	t, err := jinja.Parse("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}")
//	if err != nil { ... }
//	out, err := t.Render(map[string]jinja.Value{"messages": msgs}, jinja.Options{})
package jinja
