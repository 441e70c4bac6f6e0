package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/jsonprefix"
	"github.com/lowmem/llm/internal/testutil"
)

// checkJSON fails the test unless text is the start of a JSON object, and
// a whole one when the generation ended on its own (FinishEnd).
func checkJSON(t *testing.T, text string, finish llm.Finish) {
	t.Helper()
	var m jsonprefix.Machine
	if !m.Write([]byte(text)) {
		t.Fatalf("output %q is not the start of a JSON object", text)
	}
	switch finish {
	case llm.FinishEnd:
		var v map[string]any
		if err := json.Unmarshal([]byte(text), &v); err != nil || !m.Done() {
			t.Fatalf("finished output %q is not a JSON object: %v", text, err)
		}
	case llm.FinishLength:
		if m.Done() {
			t.Fatalf("output %q is a whole object but the generation ran to its length", text)
		}
	default:
		t.Fatalf("finish %q, want end or length", finish)
	}
}

// TestGenerateJSON generates with WithJSON on models of several
// vocabularies (SentencePiece with byte tokens, Llama's, Qwen's), greedy
// and sampled: the output is always the start of a JSON object and a
// whole one when it ends, Logits stay the model's own, and the session
// holds what was generated.
// jsonSeeds is how many seeds the JSON tests generate with: one under the
// race detector, where the grammar's mask over a real vocabulary makes
// each generation slow and the threads' work is the same for every seed.
func jsonSeeds() uint64 {
	if raceEnabled {
		return 1
	}
	return 3
}

func TestGenerateJSON(t *testing.T) {
	ctx := context.Background()
	ended := 0
	for _, file := range []string{"stories260K-f32.gguf", "tiny-llama-q4_k_m.gguf", "tiny-qwen3-q4_k_m.gguf"} {
		m := load(t, testutil.Testdata(t, "models/"+file), llm.WithThreads(2), llm.WithContextSize(256))
		for _, temp := range []float32{0, 1} {
			for seed := range jsonSeeds() {
				s := session(t, m)
				opts := []llm.GenerateOption{llm.WithJSON(), llm.MaxTokens(80), llm.Temperature(temp), llm.Seed(seed), llm.RepeatPenalty(1.1)}
				out, err := s.Generate(ctx, "Once upon a time", opts...)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				u := s.Usage()
				checkJSON(t, out, u.Finish)
				if u.Finish == llm.FinishEnd {
					ended++
				}
				// The prompt in one pass, then a token a pass, as the
				// generation evaluated them: the same kernels, so the same
				// bits on every CPU (a batch's kernels may round otherwise,
				// as AVX2's do), and a penalty left in Logits would show.
				ref := session(t, m)
				toks := s.Tokens()
				want, err := ref.Eval(ctx, toks[:u.PromptTokens])
				for _, tok := range toks[u.PromptTokens:] {
					if err == nil {
						want, err = ref.Eval(ctx, []int32{tok})
					}
				}
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(s.Logits(), want) {
					t.Fatalf("%s: Logits after a JSON generation differ from the model's for the same tokens", file)
				}
				if text, err := m.Detokenize(s.Tokens()); err != nil || !strings.HasSuffix(text, out) {
					t.Fatalf("%s: the session holds %q, which does not end with the output %q", file, text, out)
				}
				s.Close()
				ref.Close()
				if temp == 0 {
					break // one greedy run a model
				}
			}
		}
	}
	if ended == 0 {
		t.Error("no generation completed its object; the end of JSON mode went untested")
	}
}

// TestChatJSON: a chat reply under WithJSON is JSON in Content, also
// after a template whose prompt opens a reasoning block (as DeepSeek-R1's
// does), where the parser would otherwise take the output for thinking.
func TestChatJSON(t *testing.T) {
	thinking := strings.Replace(testutil.HermesTemplate, "{%- if add_generation_prompt %}<|im_start|>assistant\n",
		"{%- if add_generation_prompt %}<|im_start|>assistant\n<think>\n", 1)
	if thinking == testutil.HermesTemplate {
		t.Fatal("the template's generation prompt was not found")
	}
	path := testutil.TempModel(t, testutil.TinyChat())
	for _, opts := range [][]llm.Option{nil, {llm.WithChatTemplate(thinking)}} {
		m := load(t, path, append(opts, llm.WithThreads(1))...)
		s := session(t, m)
		msgs := []llm.Message{{Role: llm.RoleUser, Content: "Reply with a JSON object."}}
		for _, temp := range []float32{0, 1} {
			reply, err := s.Chat(context.Background(), msgs, llm.WithJSON(), llm.MaxTokens(40), llm.Temperature(temp))
			if err != nil {
				t.Fatal(err)
			}
			if reply.Thinking != "" || reply.Content == "" {
				t.Fatalf("reply %+v: want JSON in Content, no thinking", reply)
			}
			checkJSON(t, reply.Content, s.Usage().Finish)
		}
	}
}

// recipe is a schema in OpenAI's strict style, with an enum, an integer,
// a bounded array and an optional field.
const recipe = `{"type": "object", "properties": {
	"dish": {"type": "string"},
	"serves": {"type": "integer"},
	"course": {"enum": ["starter", "main", "dessert"]},
	"steps": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
	"vegan": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}},
	"required": ["dish", "serves", "course", "steps", "vegan"], "additionalProperties": false}`

// recipeValid checks an object against recipe by hand.
func recipeValid(text string) bool {
	var r struct {
		Dish   *string  `json:"dish"`
		Serves *int64   `json:"serves"`
		Course *string  `json:"course"`
		Steps  []string `json:"steps"`
		Vegan  *bool    `json:"vegan"`
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if dec.Decode(&r) != nil || r.Dish == nil || r.Serves == nil || r.Course == nil || len(r.Steps) < 1 || len(r.Steps) > 3 {
		return false
	}
	var raw map[string]json.RawMessage
	return json.Unmarshal([]byte(text), &raw) == nil && len(raw) == 5 &&
		slices.Contains([]string{"starter", "main", "dessert"}, *r.Course)
}

// choice is a schema whose objects are short by construction: every
// key and value is an enum, a boolean or null, so with whitespace runs
// bounded a generation must end within a few hundred tokens.
const choice = `{"type": "object", "properties": {
	"course": {"enum": ["starter", "main", "dessert"]},
	"vegan": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
	"tags": {"type": "array", "items": {"enum": ["hot", "cold"]}, "maxItems": 2}},
	"required": ["course", "vegan"], "additionalProperties": false}`

// choiceValid checks an object against choice by hand.
func choiceValid(text string) bool {
	var c struct {
		Course *string  `json:"course"`
		Vegan  *bool    `json:"vegan"`
		Tags   []string `json:"tags"`
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if dec.Decode(&c) != nil || c.Course == nil || !slices.Contains([]string{"starter", "main", "dessert"}, *c.Course) || len(c.Tags) > 2 {
		return false
	}
	for _, tag := range c.Tags {
		if tag != "hot" && tag != "cold" {
			return false
		}
	}
	var raw map[string]json.RawMessage
	return json.Unmarshal([]byte(text), &raw) == nil && raw["vegan"] != nil && string(raw["tags"]) != "null"
}

// TestGenerateJSONSchema: under WithJSONSchema the output always stays a
// prefix the schema allows, and when it ends it satisfies the schema;
// with choice, every generation ends.
func TestGenerateJSONSchema(t *testing.T) {
	ctx := context.Background()
	schemas := []struct {
		text  string
		valid func(string) bool
		ends  bool // every generation must end within its tokens
		max   int
	}{{recipe, recipeValid, false, 120}, {choice, choiceValid, true, 600}}
	for _, file := range []string{"stories260K-f32.gguf", "tiny-llama-q4_k_m.gguf", "tiny-qwen3-q4_k_m.gguf"} {
		m := load(t, testutil.Testdata(t, "models/"+file), llm.WithThreads(2), llm.WithContextSize(1024))
		s := session(t, m)
		for _, sc := range schemas {
			schema, err := jsonprefix.Compile([]byte(sc.text))
			if err != nil {
				t.Fatal(err)
			}
			for seed := range jsonSeeds() {
				s.Reset()
				out, err := s.Generate(ctx, "A recipe:", llm.WithJSONSchema(json.RawMessage(sc.text)), llm.MaxTokens(sc.max),
					llm.Temperature(float32(min(seed, 1))), llm.Seed(seed))
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				sm := jsonprefix.NewSchemaMachine(schema)
				if !sm.Write([]byte(out)) {
					t.Fatalf("%s: output %q is not the start of an object the schema allows", file, out)
				}
				t.Logf("%s: %d tokens, %s", file, s.Usage().GeneratedTokens, s.Usage().Finish)
				switch u := s.Usage(); {
				case u.Finish == llm.FinishEnd:
					if !sm.Done() || !sc.valid(out) {
						t.Fatalf("%s: finished output %q does not satisfy the schema", file, out)
					}
				case sc.ends || u.Finish != llm.FinishLength || sm.Done():
					t.Fatalf("%s: finish %q with output %q", file, u.Finish, out)
				}
			}
		}
	}
}

// TestJSONSchemaErrors: a schema the library cannot enforce fails the
// call with ErrInvalidOption naming the keyword, before any token.
func TestJSONSchemaErrors(t *testing.T) {
	m := loadStories(t)
	s := session(t, m)
	for _, tc := range []struct{ schema, says string }{
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"x"}}}`, `keyword "pattern"`},
		{`{"type":"array"}`, "must allow an object"},
		{`{"type":`, "not valid JSON"},
	} {
		out, err := s.Generate(context.Background(), "Once", llm.WithJSONSchema(json.RawMessage(tc.schema)))
		if !errors.Is(err, llm.ErrInvalidOption) || !strings.Contains(err.Error(), tc.says) || out != "" || s.Usage().GeneratedTokens != 0 {
			t.Errorf("schema %s: %q, %v; want ErrInvalidOption saying %q and nothing generated", tc.schema, out, err, tc.says)
		}
	}
}
