package server

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzChatRequest: any body to /v1/chat/completions gets 200 with a chat
// completion or a 4xx with OpenAI's error JSON; nothing panics.
func FuzzChatRequest(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"stop":["x"],"max_tokens":3}`,
		`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"1","content":"r"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`,
		`{"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
		`{"messages":[{"role":"user","content":"x"}],"temperature":1e400}`,
		`{"messages":[{"role":"user","content":"x"}],"chat_template_kwargs":{"enable_thinking":false}}`,
		`{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"a":{"enum":["x"]}}}}}}`,
		`{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object","schema":{"$ref":"#/$defs/a","$defs":{"a":{"type":"object"}}}}}`,
		`{"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":3}`,
	} {
		f.Add(s)
	}
	fuzzGeneration(f, "/v1/chat/completions")
}

// FuzzAnthropicRequest: any body to /v1/messages gets 200 with a
// message (or its events) or a 4xx with an error JSON; nothing panics.
func FuzzAnthropicRequest(f *testing.F) {
	for _, s := range []string{
		`{"max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`,
		`{"max_tokens":8,"system":[{"type":"text","text":"s"}],"stop_sequences":["x"],"top_k":3,"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}`,
		`{"max_tokens":8,"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"},"messages":[{"role":"user","content":"w"},{"role":"assistant","content":[{"type":"tool_use","id":"1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"1","content":"r"}]}]}`,
		`{"max_tokens":8,"thinking":{"type":"enabled","budget_tokens":100},"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"redacted_thinking","data":"x"}]},{"role":"user","content":"b"}]}`,
		`{"max_tokens":8,"tool_choice":{"type":"tool","name":"f"},"tools":[{"name":"f"}],"messages":[{"role":"user","content":"x"}]}`,
		`{"max_tokens":8,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64"}}]}]}`,
	} {
		f.Add(s)
	}
	fuzzGeneration(f, "/v1/messages")
}

// fuzzGeneration fuzzes bodies to a generation endpoint at path, each
// whole and streamed, against a backend that answers with text and a tool
// call.
func fuzzGeneration(f *testing.F, path string) {
	b := newFake(func(p string) []string {
		return []string{"ok ", "<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>"}
	})
	srv, err := New(b, WithQueue(0))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, stream := range []bool{false, true} {
			if stream {
				body = strings.Replace(body, "{", `{"stream":true,`, 1)
			}
			rec := fuzzPost(t, srv, path, body)
			if rec.Code == 200 && !stream && !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("invalid JSON response: %s", rec.Body)
			}
		}
	})
}

// FuzzResponsesRequest: any body to /v1/responses gets 200 with a
// response (or its events) or a 4xx with OpenAI's error JSON; nothing
// panics.
func FuzzResponsesRequest(f *testing.F) {
	for _, s := range []string{
		`{"input":"hi"}`,
		`{"input":"hi","instructions":"be brief","max_output_tokens":2,"text":{"format":{"type":"json_object"}}}`,
		`{"input":[{"role":"user","content":"w"},{"type":"function_call","call_id":"1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"1","output":"r"}],"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}]}`,
		`{"input":[{"type":"reasoning","summary":[{"type":"summary_text","text":"t"}]},{"role":"assistant","content":[{"type":"output_text","text":"a"}]},{"role":"user","content":[{"type":"input_text","text":"b"}]}]}`,
		`{"input":"x","tool_choice":{"type":"function","name":"f"},"tools":[{"type":"function","name":"f"}]}`,
		`{"input":"x","text":{"format":{"type":"json_schema","name":"a","schema":{"type":"object"}}},"reasoning":{"effort":"minimal"}}`,
		`{"input":[{"role":"user","content":[{"type":"input_image","image_url":"x"}]}]}`,
		`{"input":"x","previous_response_id":"resp_1"}`,
	} {
		f.Add(s)
	}
	fuzzGeneration(f, "/v1/responses")
}

// fuzzPost posts body to path and fails unless the reply is a 200 or a
// 400 or 413 with OpenAI's error JSON.
func fuzzPost(t *testing.T, srv *Server, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
	switch {
	case rec.Code == 200:
	case rec.Code == 400 || rec.Code == 413:
		var e struct {
			Error *apiError `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Message == "" {
			t.Fatalf("status %d without error JSON: %s", rec.Code, rec.Body)
		}
	default:
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	return rec
}

// FuzzEmbeddingsRequest: any body to /v1/embeddings gets 200 with a list
// of as many vectors as inputs, or a 4xx with OpenAI's error JSON;
// nothing panics.
func FuzzEmbeddingsRequest(f *testing.F) {
	for _, s := range []string{
		`{"input":"hello","model":"m"}`,
		`{"input":["a","b"],"encoding_format":"base64","dimensions":4}`,
		`{"input":[1,2,3],"encoding_format":"float","user":"u"}`,
		`{"input":[[1,2],[255]],"dimensions":8}`,
		`{"input":[[],[1]]}`,
		`{"input":[300]}`,
		`{"input":"x","dimensions":0}`,
		`{"input":["a",null,[1]]}`,
		`{"input":[-1e40]}`,
	} {
		f.Add(s)
	}
	srv, err := New(newFake(words("x")), WithQueue(0), WithMaxBodyBytes(64<<10))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		rec := fuzzPost(t, srv, "/v1/embeddings", body)
		if rec.Code != 200 {
			return
		}
		var got struct {
			Data []struct {
				Index     int             `json:"index"`
				Embedding json.RawMessage `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.Data) == 0 {
			t.Fatalf("response %s: %v", rec.Body, err)
		}
		for i, d := range got.Data {
			if d.Index != i || len(d.Embedding) == 0 {
				t.Fatalf("data[%d] of %s", i, rec.Body)
			}
		}
	})
}

// FuzzOllamaRequest: any body to Ollama's generation and embedding routes
// gets 200 with NDJSON lines (one when not streamed), each a JSON object,
// or a 400 or 413 with Ollama's error JSON; nothing panics.
func FuzzOllamaRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":false,"options":{"temperature":0,"num_predict":2,"stop":["k"],"top_k":-1,"seed":-1}}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},{"role":"tool","content":"r","tool_name":"f"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`,
		`{"messages":[{"role":"user","content":"x"}],"format":{"type":"object","properties":{"a":{"enum":["x"]}}},"think":false}`,
		`{"messages":[{"role":"user","content":"x"}],"format":"json","think":"high","logprobs":true,"top_logprobs":3}`,
		`{"prompt":"x","system":"s","options":{"num_ctx":1e400}}`,
		`{"prompt":"x","raw":true,"images":["aGk="],"context":[1]}`,
		`{"input":["a","b"],"truncate":false,"dimensions":4}`,
		`{"input":"a","options":{"mirostat":2}}`,
		`{"prompt":"hello","keep_alive":"5m"}`,
	} {
		f.Add(s)
	}
	b := newFake(func(p string) []string {
		return []string{"ok ", "<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>"}
	})
	srv, err := New(b, WithQueue(0), WithMaxBodyBytes(64<<10))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/api/chat", "/api/generate", "/api/embed", "/api/embeddings", "/api/show"} {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
			switch rec.Code {
			case 200:
				out := rec.Body.Bytes()
				if len(out) == 0 || out[len(out)-1] != '\n' {
					t.Fatalf("%s: reply %q does not end a line", path, out)
				}
				for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
					var v map[string]any
					if err := json.Unmarshal([]byte(line), &v); err != nil {
						t.Fatalf("%s: line %q: %v", path, line, err)
					}
				}
			case 400, 413:
				var e struct {
					Error *string `json:"error"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || *e.Error == "" {
					t.Fatalf("%s: status %d without Ollama's error JSON: %s", path, rec.Code, rec.Body)
				}
			default:
				t.Fatalf("%s: status %d: %s", path, rec.Code, rec.Body)
			}
		}
	})
}

// FuzzNativeRequest: any body to llama-server's native /completion,
// /infill and /embedding gets 200 (JSON, or SSE chunks each a JSON object)
// or a 4xx/501 with llama-server's error JSON; nothing panics or hangs.
func FuzzNativeRequest(f *testing.F) {
	for _, s := range []string{
		`{"prompt":"hi","n_predict":3}`,
		`{"prompt":[1,2,"x",3],"n_probs":2,"return_tokens":true,"stop":["k",""]}`,
		`{"prompt":["a",[1,2],{"prompt_string":"b"}],"temperature":0,"top_k":-1,"min_p":0.5}`,
		`{"prompt":{"prompt_string":"a","multimodal_data":["x"]}}`,
		`{"prompt":[300,-1],"json_schema":{"type":"object"},"grammar":""}`,
		`{"prompt":"x","n_predict":0,"cache_prompt":false,"seed":-1,"repeat_last_n":-1}`,
		`{"input_prefix":"a","input_suffix":"b","input_extra":[{"filename":"f","text":"t"},{"text":"u"}],"prompt":"p"}`,
		`{"input_prefix":["a",1],"input_suffix":[2,"b"],"input_extra":[{"text":1}]}`,
		`{"content":["a",[1,2]],"embd_normalize":-1}`,
		`{"input":[[],"x"]}`,
		`{"prompt":"x","logprobs":3,"n":1,"max_tokens":2}`,
		`{"input_prefix":"a","input_suffix":"b","n_indent":4,"t_max_predict_ms":1,"response_fields":["content","timings/x/y",""],"samplers":["top_k"]}`,
	} {
		f.Add(s)
	}
	b := vocabFake{newFake(words("ok then"))}
	srv, err := New(b, WithQueue(0), WithMaxBodyBytes(64<<10))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/completion", "/infill", "/embedding"} {
			for _, stream := range []bool{false, true} {
				if stream {
					body = strings.Replace(body, "{", `{"stream":true,`, 1)
				}
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
				out := rec.Body.Bytes()
				switch {
				case rec.Code == 200 && rec.Header().Get("Content-Type") == "text/event-stream":
					for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n\n") {
						if !strings.HasPrefix(line, "data: ") || !json.Valid([]byte(strings.TrimPrefix(line, "data: "))) {
							t.Fatalf("%s: event %q", path, line)
						}
					}
				case rec.Code == 200:
					if !json.Valid(out) {
						t.Fatalf("%s: invalid JSON %s", path, out)
					}
				case rec.Code == 400 || rec.Code == 413 || rec.Code == 501:
					var e nativeErr
					if err := json.Unmarshal(out, &e); err != nil || e.Error == nil || e.Error.Code != rec.Code || e.Error.Message == "" {
						t.Fatalf("%s: status %d without llama-server's error JSON: %s", path, rec.Code, out)
					}
				default:
					t.Fatalf("%s: status %d: %s", path, rec.Code, out)
				}
			}
		}
	})
}
