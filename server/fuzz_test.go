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
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body))
			srv.ServeHTTP(rec, req)
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
			if rec.Code == 200 && !stream && !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("invalid JSON response: %s", rec.Body)
			}
		}
	})
}
