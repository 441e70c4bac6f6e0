package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
)

// TestLlamaServerTokenize: /tokenize answers as llama-server does — special
// tokens parsed and none added by default, add_special and parse_special
// switching each, pieces as text — and /detokenize gives the pieces back
// in turn, refusing an id outside the vocabulary; both on FromModel's
// Backend, which is a Vocabulary.
func TestLlamaServerTokenize(t *testing.T) {
	m, hs, special := startDog(t)
	const text = dogText
	plain, err := m.Tokenize(text)
	if err != nil {
		t.Fatal(err)
	}
	info := m.Info()
	if !info.AddBOS || special[0] != m.BOS() {
		t.Fatalf("TinyChat adds BOS %v, tokens %v: the test needs one added", info.AddBOS, special)
	}
	for _, tc := range []struct {
		body string
		want []int32
	}{
		{`{"content":"` + text + `"}`, special[1:]},
		{`{"content":"` + text + `","add_special":true}`, special},
		{`{"content":"` + text + `","add_special":true,"parse_special":false}`, plain},
		{`{"content":""}`, []int32{}},
	} {
		resp, body := post(t, hs.URL+"/tokenize", tc.body)
		var got struct{ Tokens []int32 }
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || !slices.Equal(got.Tokens, tc.want) {
			t.Errorf("%s: %d %s, want tokens %v", tc.body, resp.StatusCode, body, tc.want)
		}
	}

	resp, body := post(t, hs.URL+"/tokenize", `{"content":"`+text+`","with_pieces":true}`)
	var pieces struct {
		Tokens []struct {
			ID    int32
			Piece json.RawMessage
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &pieces) != nil || len(pieces.Tokens) != len(special)-1 {
		t.Fatalf("with_pieces: %d %s", resp.StatusCode, body)
	}
	var joined strings.Builder
	for i, p := range pieces.Tokens {
		var s string
		if p.ID != special[i+1] || json.Unmarshal(p.Piece, &s) != nil || s != m.TokenText(p.ID) {
			t.Errorf("piece %d: %d %s, want %d %q", i, p.ID, p.Piece, special[i+1], m.TokenText(special[i+1]))
		}
		joined.WriteString(s)
	}
	if !strings.HasPrefix(joined.String(), "<|im_start|>") {
		t.Errorf("pieces %q: want the control token's own text first", joined.String())
	}

	ids, _ := json.Marshal(special[1:])
	resp, body = post(t, hs.URL+"/detokenize", `{"tokens":`+string(ids)+`}`)
	var detok struct{ Content string }
	if resp.StatusCode != 200 || json.Unmarshal(body, &detok) != nil || detok.Content != joined.String() {
		t.Errorf("detokenize: %d %s, want %q", resp.StatusCode, body, joined.String())
	}

	for _, tc := range []struct{ path, body, param string }{
		{"/tokenize", `{}`, "content"},
		{"/tokenize", `{"content":3}`, "content"},
		{"/detokenize", `{"tokens":[1,100000]}`, "tokens"},
		{"/detokenize", `{"tokens":[-1]}`, "tokens"},
	} {
		resp, body := post(t, hs.URL+tc.path, tc.body)
		if resp.StatusCode != 400 || !strings.Contains(string(body), `"param":"`+tc.param+`"`) {
			t.Errorf("%s %s: %d %s, want 400 naming %s", tc.path, tc.body, resp.StatusCode, body, tc.param)
		}
	}
}

// TestLlamaServerTemplateAndProps: /apply-template renders a chat request's
// messages as the chat endpoint would, without generating; /props gives
// the context, the slots and the template.
func TestLlamaServerTemplateAndProps(t *testing.T) {
	m, _, hs := startModel(t, 2, nil)
	info := m.Info()
	msgs := []llm.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "the dog"}}
	want, err := llm.RenderChat(info.ChatTemplate, msgs, llm.RenderOptions{AddGenerationPrompt: true,
		BOSToken: info.BOSText, EOSToken: info.EOSText, StripBOS: info.AddBOS, StripEOS: info.AddEOS})
	if err != nil {
		t.Fatal(err)
	}
	resp, body := post(t, hs.URL+"/apply-template", `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"the dog"}]}`)
	var got struct{ Prompt string }
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || got.Prompt != want {
		t.Errorf("apply-template: %d %s, want prompt %q", resp.StatusCode, body, want)
	}
	if resp, body := post(t, hs.URL+"/apply-template", `{"messages":[]}`); resp.StatusCode != 400 {
		t.Errorf("apply-template without messages: %d %s, want 400", resp.StatusCode, body)
	}

	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
		Slots    int    `json:"total_slots"`
		Template string `json:"chat_template"`
		BOS      string `json:"bos_token"`
	}
	if resp, body := getBytes(t, hs.URL+"/props"); resp.StatusCode != 200 || json.Unmarshal(body, &props) != nil {
		t.Fatalf("props: %d %s", resp.StatusCode, body)
	}
	if props.Settings.NCtx != info.Context || props.Slots != 2 || props.Template != info.ChatTemplate || props.BOS != info.BOSText {
		t.Errorf("props %+v, want n_ctx %d, 2 slots, the template and BOS %q", props, info.Context, info.BOSText)
	}
}

// TestLlamaServerNoVocabulary: a Backend that is not a Vocabulary answers
// /tokenize and /detokenize with 501.
func TestLlamaServerNoVocabulary(t *testing.T) {
	_, hs := start(t, newFake(words("hi")))
	for _, path := range []string{"/tokenize", "/detokenize"} {
		resp, body := post(t, hs.URL+path, `{"content":"hi","tokens":[1]}`)
		if resp.StatusCode != 501 {
			t.Errorf("%s: %d %s, want 501", path, resp.StatusCode, body)
		}
	}
}
