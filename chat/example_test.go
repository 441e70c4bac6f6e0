package chat_test

import (
	"fmt"

	"github.com/lowmem/llm/chat"
)

func ExampleRender() {
	prompt, err := chat.Render(chat.ChatML, []chat.Message{
		{Role: chat.RoleSystem, Content: "You are terse."},
		{Role: chat.RoleUser, Content: "Capital of France?"},
	}, chat.RenderOptions{AddGenerationPrompt: true})
	if err != nil {
		panic(err)
	}
	fmt.Print(prompt)
	// Output:
	// <|im_start|>system
	// You are terse.<|im_end|>
	// <|im_start|>user
	// Capital of France?<|im_end|>
	// <|im_start|>assistant
}

func ExampleParseOutput() {
	f := chat.Format{Tools: chat.ToolsHermes, Thinking: true}
	msg := chat.ParseOutput("<think>\nThe user wants the weather.\n</think>\n\n"+
		`<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`,
		f, chat.ParseOptions{Tools: true, NewID: func() string { return "call_1" }})
	fmt.Println(msg.Thinking)
	fmt.Println(msg.ToolCalls[0].Name, msg.ToolCalls[0].Arguments)
	// Output:
	// The user wants the weather.
	// get_weather {"city":"Paris"}
}
