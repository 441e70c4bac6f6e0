package openaitest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/responses"
	"github.com/openai/openai-go/shared"
)

var weatherFunction = responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
	Name: "get_weather", Strict: openai.Bool(false),
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"location": map[string]any{"type": "string"}}},
}}

// TestResponses: openai-go's Responses API — a string input answered
// whole, instructions as a system message, max_output_tokens cutting the
// reply short (status incomplete), and a function call made, answered with
// a function_call_output item and answered in turn.
func TestResponses(t *testing.T) {
	client := newClient(t)
	ctx := context.Background()
	resp, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "tiny", Instructions: openai.String("Be nice."),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "Hello, world!" || resp.Status != "completed" || resp.Model != "tiny" || resp.Usage.OutputTokens != 4 ||
		resp.Usage.TotalTokens != resp.Usage.InputTokens+4 || !strings.HasPrefix(resp.ID, "resp_") {
		t.Errorf("response %s", resp.RawJSON())
	}

	resp, err = client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "tiny", MaxOutputTokens: openai.Int(2),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "Hello, " || resp.Status != "incomplete" || resp.IncompleteDetails.Reason != "max_output_tokens" {
		t.Errorf("cut short: %s", resp.RawJSON())
	}

	ask := responses.ResponseInputItemParamOfMessage("What is the weather in Paris?", responses.EasyInputMessageRoleUser)
	resp, err = client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "tiny", Tools: []responses.ToolUnionParam{weatherFunction},
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{ask}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) != 1 || resp.Output[0].Type != "function_call" {
		t.Fatalf("want one function call: %s", resp.RawJSON())
	}
	call := resp.Output[0].AsFunctionCall()
	if call.Name != "get_weather" || call.Arguments != `{"location":"Paris"}` || call.CallID == "" {
		t.Fatalf("call %s", call.RawJSON())
	}
	resp, err = client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "tiny", Tools: []responses.ToolUnionParam{weatherFunction},
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{ask,
			responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name),
			responses.ResponseInputItemParamOfFunctionCallOutput(call.CallID, `{"sky": "sunny"}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "It is sunny in Paris." {
		t.Errorf("after the tool result: %s", resp.RawJSON())
	}

	var apiErr *openai.Error
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{Model: "tiny", PreviousResponseID: openai.String(resp.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "previous_response_id" {
		t.Errorf("previous_response_id: %v", err)
	}
}

// TestResponsesStreaming: the streamed events as openai-go reads them —
// created, the message's item and part, text deltas that add up to the
// text, its done events, then completed with the whole response; a
// function call as its item and arguments events.
func TestResponsesStreaming(t *testing.T) {
	client := newClient(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		input string
		tools []responses.ToolUnionParam
		want  []string // event types in order, deltas collapsed
	}{
		{"text", "Hi", nil, []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}},
		{"call", "What is the weather in Paris?", []responses.ToolUnionParam{weatherFunction}, []string{"response.created", "response.in_progress",
			"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done",
			"response.output_item.done", "response.completed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "tiny", Tools: tc.tools,
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(tc.input)}})
			var types []string
			var text string
			var final responses.Response
			seq := int64(0)
			for stream.Next() {
				ev := stream.Current()
				if ev.SequenceNumber != seq {
					t.Errorf("event %s has sequence number %d, want %d", ev.Type, ev.SequenceNumber, seq)
				}
				seq++
				if n := len(types); n == 0 || types[n-1] != ev.Type {
					types = append(types, ev.Type)
				}
				switch ev.Type {
				case "response.output_text.delta":
					text += ev.Delta.OfString
				case "response.completed":
					final = ev.Response
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if strings.Join(types, " ") != strings.Join(tc.want, " ") {
				t.Errorf("events %v, want %v", types, tc.want)
			}
			if text != final.OutputText() || final.Status != "completed" || len(final.Output) != 1 {
				t.Errorf("deltas %q, final %s", text, final.RawJSON())
			}
		})
	}
}

// TestResponsesReasoning: a harmony (gpt-oss) model's analysis comes as a
// reasoning item before the message, and reasoning.effort reaches its
// template.
func TestResponsesReasoning(t *testing.T) {
	client, b := harmonyClient(t)
	resp, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: "gpt-oss", Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortHigh},
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Output) != 2 || resp.Output[0].Type != "reasoning" || resp.OutputText() != "Hello!" ||
		!strings.Contains(resp.Output[0].RawJSON(), `"text":"A greeting."`) {
		t.Errorf("output %s", resp.RawJSON())
	}
	if len(b.prompts) != 1 || !strings.Contains(b.prompts[0], "Reasoning: high\n") {
		t.Errorf("prompts %q", b.prompts)
	}
}
