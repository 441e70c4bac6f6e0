// Package templates holds the chat templates this library brings itself,
// for models whose files carry none: Jinja source in the dialect
// tokenizer.chat_template holds, rendered by package chat like a file's.
//
// Example: the harmony template a gpt-oss model without one chats with.
//
//	tmpl, err := chat.Parse(templates.Harmony)
package templates
