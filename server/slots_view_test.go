package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// getSlots is GET /slots' status, body and slots.
func getSlots(t *testing.T, url string) (int, string, []map[string]any) {
	t.Helper()
	resp, body := get(t, url+"/slots")
	var slots []map[string]any
	if resp.StatusCode == 200 {
		if err := json.Unmarshal([]byte(body), &slots); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, body, slots
}

// TestModelSlotsView: GET /slots answers each slot as llama-server does
// by default: id, n_ctx, speculative and is_processing, and, once the
// slot ran a task, that task's id_task, its params (the request's
// sampling settings by llama-server's names) and next_token (whether it
// generates on, whether its text held a new line, the tokens left of
// n_predict and those generated) — while it generates, held mid-way, and
// after. No prompt or generated text: llama-server shows them only under
// LLAMA_SERVER_SLOTS_DEBUG.
func TestModelSlotsView(t *testing.T) {
	hb := &holdBackend{release: make(chan struct{}), at: 2, logprobs: true}
	m, _, hs := startModel(t, 2, func(b Backend) Backend { hb.Backend = b; return hb })
	nCtx := m.Info().Context
	idle := func(id int) string {
		return fmt.Sprintf(`{"id":%d,"n_ctx":%d,"speculative":false,"is_processing":false}`, id, nCtx)
	}
	const params = `{"seed":42,"temperature":0,"top_k":5,"top_p":0.9,"min_p":0.05,"repeat_last_n":32,"repeat_penalty":1,
		"presence_penalty":0,"frequency_penalty":0,"max_tokens":8,"n_predict":8,"stream":true,"n_probs":0,"ignore_eos":false}`
	ran := func(processing bool, next string) string {
		return fmt.Sprintf(`{"id":0,"n_ctx":%d,"speculative":false,"is_processing":%t,"id_task":0,"params":%s,"next_token":[%s]}`,
			nCtx, processing, params, next)
	}
	// next_token after n tokens, whose text is that of the held session's
	// first pieces.
	nextToken := func(more bool, n, pieces int) string {
		hb.mu.Lock()
		text := strings.Join(hb.texts[:pieces], "")
		hb.mu.Unlock()
		return fmt.Sprintf(`{"has_next_token":%t,"has_new_line":%t,"n_remain":%d,"n_decoded":%d}`,
			more, strings.Contains(text, "\n"), 8-n, n)
	}
	var last nativeAnswer // the stream's last chunk

	// The answer's headers come with its first text, which may be past
	// the held token.
	answer := make(chan *http.Response, 1)
	for _, tc := range []struct {
		name string
		do   func(t *testing.T)
		want func() string
	}{
		{"idle, never used", func(*testing.T) {}, func() string { return "[" + idle(0) + "," + idle(1) + "]" }},
		{"busy mid-generation", func(t *testing.T) {
			go func() {
				resp, err := http.Post(hs.URL+"/completion", "application/json", strings.NewReader(`{"prompt":"the dog","id_slot":0,
					"n_predict":8,"temperature":0,"top_k":5,"top_p":0.9,"seed":42,"repeat_last_n":32,"stream":true}`))
				if err != nil {
					t.Error(err)
				}
				answer <- resp
			}()
			waitFor(t, func() bool { return hb.yields.Load() == 3 }) // held at the third token
		}, func() string { return "[" + ran(true, nextToken(true, 2, 2)) + "," + idle(1) + "]" }},
		{"idle after it", func(t *testing.T) {
			close(hb.release)
			resp := <-answer
			if resp == nil {
				t.FailNow()
			}
			defer resp.Body.Close()
			stream := bufio.NewScanner(resp.Body)
			for !last.Stop && stream.Scan() {
				if data, ok := strings.CutPrefix(stream.Text(), "data: "); ok {
					if err := json.Unmarshal([]byte(data), &last); err != nil {
						t.Fatalf("chunk %s: %v", data, err)
					}
				}
			}
			if !last.Stop {
				t.Fatalf("the stream ended without its last chunk: %v", stream.Err())
			}
		}, func() string {
			return "[" + ran(false, nextToken(false, last.TokensPredicted, int(hb.yields.Load()))) + "," + idle(1) + "]"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.do(t)
			var want []map[string]any
			if err := json.Unmarshal([]byte(tc.want()), &want); err != nil {
				t.Fatal(err)
			}
			// A slot is released just after its answer is sent.
			var got []map[string]any
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				if _, _, got = getSlots(t, hs.URL); reflect.DeepEqual(got, want) || time.Now().After(deadline) {
					break
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("/slots:\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// TestModelSlotsContext: a slot's n_ctx is its session's context (here
// made smaller than the model's default by FromModel's session option,
// which ModelInfo.ContextLength — what /props and the prompt check read —
// reports too), as llama-server reports each slot's own;
// WithSlotsEndpoint(false) answers 501 as llama-server's --no-slots does.
func TestModelSlotsContext(t *testing.T) {
	m := loadModel(t, testutil.TempModel(t, testutil.TinyChat()), llm.WithSessions(1))
	const nCtx = 256
	if m.Info().Context == nCtx {
		t.Fatalf("the model's default context is %d already", nCtx)
	}
	for _, tc := range []struct {
		opts   []Option
		status int
	}{
		{nil, 200},
		{[]Option{WithSlotsEndpoint(false)}, 501},
	} {
		b, err := FromModel(m, "tiny-chat", llm.WithContextSize(nCtx))
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Info().ContextLength; got != nCtx {
			t.Errorf("ModelInfo.ContextLength %d, want the sessions' %d (what /props and the prompt check read)", got, nCtx)
		}
		srv, err := New(b, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		status, body, slots := getSlots(t, hs.URL)
		switch {
		case status != tc.status:
			t.Errorf("/slots with %d options: %d %s, want %d", len(tc.opts), status, body, tc.status)
		case status == 200 && (len(slots) != 1 || slots[0]["n_ctx"] != float64(nCtx)):
			t.Errorf("/slots: %s, want one slot of n_ctx %d", body, nCtx)
		case status == 501 && !strings.Contains(body, `"type":"not_supported_error"`):
			t.Errorf("/slots disabled: %s, want llama-server's not_supported_error", body)
		}
		hs.Close()
		srv.Close()
	}
}
