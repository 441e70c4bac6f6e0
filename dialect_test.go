package llm_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// ollamaGptOss rewrites a gpt-oss file as Ollama's converter writes it
// (ollama pull gpt-oss): architecture gptoss and its keys, no rope
// scaling type, the "default" pre-tokenizer, no chat template, and its
// tensor names; fused puts Q, K and V and their biases in attn_qkv, as
// its conversion of OpenAI's own checkpoint does.
func ollamaGptOss(t *testing.T, file []byte, fused bool) []byte {
	h := parseModel(t, file)
	for i := range h.kvs {
		if rest, ok := strings.CutPrefix(h.kvs[i].Key, "gpt-oss."); ok {
			h.kvs[i].Key = "gptoss." + rest
		}
	}
	h.arch = "gptoss"
	h.set("general.architecture", "gptoss")
	h.del(".rope.scaling.type")
	h.set("tokenizer.ggml.pre", "default")
	h.del("tokenizer.chat_template")
	renames := map[string]string{"attn_output.weight": "attn_out.weight", "attn_output.bias": "attn_out.bias",
		"post_attention_norm.weight": "ffn_norm.weight", "attn_sinks.weight": "attn_sinks"}
	for i := range h.tensors {
		tn := &h.tensors[i]
		if dot := strings.Index(tn.name[4:], "."); strings.HasPrefix(tn.name, "blk.") && dot > 0 {
			p := tn.name[:4+dot+1]
			if to, ok := renames[tn.name[len(p):]]; ok {
				tn.name = p + to
			}
		}
	}
	if fused {
		for il := 0; h.tensor(blk(il, "attn_q.weight")) != nil; il++ {
			for _, kind := range []string{"weight", "bias"} {
				q, k, v := h.tensor(blk(il, "attn_q."+kind)), h.tensor(blk(il, "attn_k."+kind)), h.tensor(blk(il, "attn_v."+kind))
				dims := slices.Clone(q.dims)
				dims[len(dims)-1] += k.dims[len(dims)-1] + v.dims[len(dims)-1]
				qkv := htensor{blk(il, "attn_qkv."+kind), q.typ, dims, slices.Concat(q.data, k.data, v.data)}
				for _, n := range []string{"attn_q.", "attn_k.", "attn_v."} {
					h.drop(blk(il, n+kind))
				}
				h.tensors = append(h.tensors, qkv)
			}
		}
	}
	return h.bytes(t)
}

func blk(il int, name string) string { return "blk." + strconv.Itoa(il) + "." + name }

// TestOllamaGptOss: gpt-oss as Ollama stores it (architecture gptoss, its
// own tensor names, YaRN implied, no template in the file; Q, K and V
// separate or fused) loads as gpt-oss, gives bit for bit the logits and
// tokens of the same weights in llama.cpp's names, and chats with the
// built-in harmony template.
func TestOllamaGptOss(t *testing.T) {
	spec := testutil.TinyGptOss()
	spec.ExpertType = quant.MXFP4
	spec.Context = 1024
	spec.ChatTemplate, spec.ChatTokens = testutil.HarmonyTemplate, testutil.HarmonyTokens
	canon := parseModel(t, modelBytes(t, spec))
	canon.set("tokenizer.ggml.pre", "gpt-4o") // as llama.cpp's converter writes it
	file := canon.bytes(t)
	dir := t.TempDir()
	quiet := llm.WithLogger(slog.New(slog.DiscardHandler))
	ref := load(t, writeTemp(t, dir, "llama.cpp.gguf", file), llm.WithThreads(1), quiet)
	ctx := context.Background()
	const text = "I'm 12345 the quick brown fox's"
	wantIDs, err := ref.Tokenize(text)
	if err != nil {
		t.Fatal(err)
	}
	want := mustEval(t, ctx, session(t, ref).EvalAll, wantIDs)
	for _, fused := range []bool{false, true} {
		name := map[bool]string{false: "separate", true: "fused"}[fused]
		t.Run(name, func(t *testing.T) {
			path := writeTemp(t, dir, name+".gguf", ollamaGptOss(t, file, fused))
			if _, err := llm.Plan(path); err != nil {
				t.Fatal(err)
			}
			m := load(t, path, llm.WithThreads(1), quiet)
			if info := m.Info(); info.Architecture != "gpt-oss" || info.ChatTemplate == "" {
				t.Fatalf("architecture %q, template %d bytes: want gpt-oss and the built-in template", info.Architecture, len(info.ChatTemplate))
			}
			ids, err := m.Tokenize(text)
			if err != nil || !slices.Equal(ids, wantIDs) {
				t.Fatalf("tokens %v (%v), want %v", ids, err, wantIDs)
			}
			got := mustEval(t, ctx, session(t, m).EvalAll, ids)
			vocab := len(want) / len(ids)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("token %d, logit %d: %v, want %v", i/vocab, i%vocab, got[i], want[i])
				}
			}
			s := session(t, m)
			if _, err := s.Chat(ctx, []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, llm.WithReasoningEffort("low"), llm.MaxTokens(4)); err != nil {
				t.Fatal(err)
			}
			if toks := s.Tokens(); !strings.Contains(mustDetok(t, m, toks), "Reasoning: low") {
				t.Errorf("the prompt does not hold the harmony system message")
			}
		})
	}
}

func writeTemp(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustDetok(t *testing.T, m *llm.Model, ids []int32) string {
	t.Helper()
	s, err := m.Detokenize(ids)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
