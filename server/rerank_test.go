package server

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// TestRerankEndpoint: /v1/rerank (and llama-server's other names for it)
// on FromModel's Backend of a reranker gives llm.Model.Rerank's scores,
// most relevant first, cut to top_n, with the documents when asked and the
// tokens evaluated; a model that is not a reranker, and a Backend whose
// sessions cannot rerank, answer 501; a malformed request 400.
func TestRerankEndpoint(t *testing.T) {
	spec := testutil.TinyBert()
	spec.WeightType, spec.Pooling, spec.RankLabels = quant.F32, 4, []string{"relevance"}
	m := loadModel(t, testutil.TempModel(t, spec))
	_, hs := serveModel(t, m, "reranker", 1, nil)
	docs := []string{"the dog", "a quick fox jumps over", "brown", "the lazy dog sleeps"}
	want, err := m.Rerank(context.Background(), "the quick brown fox", docs)
	if err != nil {
		t.Fatal(err)
	}
	order := []int{0, 1, 2, 3}
	slices.SortStableFunc(order, func(a, b int) int {
		if want[a] > want[b] {
			return -1
		} else if want[a] < want[b] {
			return 1
		}
		return 0
	})
	type reply struct {
		Model   string
		Results []struct {
			Index          int
			RelevanceScore float32 `json:"relevance_score"`
			Document       *struct{ Text string }
		}
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	for _, path := range []string{"/v1/rerank", "/rerank", "/v1/reranking", "/reranking"} {
		resp, body := post(t, hs.URL+path, `{"model":"reranker","query":"the quick brown fox","documents":["the dog","a quick fox jumps over","brown","the lazy dog sleeps"],"top_n":3,"return_documents":true}`)
		var got reply
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil || len(got.Results) != 3 || got.Usage.PromptTokens == 0 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		for i, r := range got.Results {
			if r.Index != order[i] || r.RelevanceScore != want[order[i]] || r.Document == nil || r.Document.Text != docs[order[i]] {
				t.Errorf("%s: result %d %+v, want document %d scored %v", path, i, r, order[i], want[order[i]])
			}
		}
	}
	resp, body := post(t, hs.URL+"/v1/rerank", `{"query":"q","texts":["a","b"]}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"results":[{`) || strings.Contains(string(body), `"document"`) {
		t.Errorf("texts, no documents returned: %d %s", resp.StatusCode, body)
	}

	for _, tc := range []struct{ body, param string }{
		{`{"documents":["a"]}`, "query"},
		{`{"query":"q","documents":[]}`, "documents"},
		{`{"query":"q","documents":["a"],"top_n":0}`, "top_n"},
	} {
		resp, body := post(t, hs.URL+"/v1/rerank", tc.body)
		if resp.StatusCode != 400 || !strings.Contains(string(body), `"param":"`+tc.param+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", tc.body, resp.StatusCode, body, tc.param)
		}
	}

	_, _, plain := startModel(t, 1, nil) // a generative model: no head
	if resp, body := post(t, plain.URL+"/v1/rerank", `{"query":"q","documents":["a"]}`); resp.StatusCode != 501 || !strings.Contains(string(body), "not a reranker") {
		t.Errorf("a model that is not a reranker: %d %s", resp.StatusCode, body)
	}
	_, fake := start(t, newFake(words("hi")))
	if resp, body := post(t, fake.URL+"/v1/rerank", `{"query":"q","documents":["a"]}`); resp.StatusCode != 501 {
		t.Errorf("a backend that cannot rerank: %d %s", resp.StatusCode, body)
	}
}
