package llm_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// hmodel is a GGUF file taken apart for editing: its metadata and its
// tensors, rewritten with gguf.Writer. The files it makes are valid GGUF;
// what is hostile is what they say.
type hmodel struct {
	arch    string
	kvs     []gguf.KV
	tensors []htensor
}

type htensor struct {
	name string
	typ  quant.Type
	dims []int64
	data []byte
}

func parseModel(tb testing.TB, file []byte) *hmodel {
	tb.Helper()
	g, err := gguf.Read(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		tb.Fatal(err)
	}
	h := &hmodel{arch: g.Arch(), kvs: append([]gguf.KV(nil), g.KV...)}
	for _, ti := range g.Tensors {
		h.tensors = append(h.tensors, htensor{ti.Name, ti.Type, ti.Dims, file[ti.Offset : ti.Offset+ti.Size]})
	}
	return h
}

// key expands ".x" to "<arch>.x".
func (h *hmodel) key(k string) string {
	if strings.HasPrefix(k, ".") {
		return h.arch + k
	}
	return k
}

func (h *hmodel) set(k string, v any) {
	k = h.key(k)
	for i := range h.kvs {
		if h.kvs[i].Key == k {
			h.kvs[i].Value = v
			return
		}
	}
	h.kvs = append(h.kvs, gguf.KV{Key: k, Value: v})
}

func (h *hmodel) del(k string) {
	k = h.key(k)
	for i := range h.kvs {
		if h.kvs[i].Key == k {
			h.kvs = append(h.kvs[:i], h.kvs[i+1:]...)
			return
		}
	}
}

func (h *hmodel) get(k string) any {
	k = h.key(k)
	for _, kv := range h.kvs {
		if kv.Key == k {
			return kv.Value
		}
	}
	return nil
}

func (h *hmodel) tensor(name string) *htensor {
	for i := range h.tensors {
		if h.tensors[i].name == name {
			return &h.tensors[i]
		}
	}
	return nil
}

func (h *hmodel) drop(name string) {
	for i := range h.tensors {
		if h.tensors[i].name == name {
			h.tensors = append(h.tensors[:i], h.tensors[i+1:]...)
			return
		}
	}
}

// put replaces (or adds) a tensor with generated data of the given type and
// ggml dims.
func (h *hmodel) put(name string, typ quant.Type, dims ...int64) {
	t := htensor{name, typ, dims, genData(name, typ, dims)}
	if old := h.tensor(name); old != nil {
		*old = t
		return
	}
	h.tensors = append(h.tensors, t)
}

// genData is small random values of type t, or random bytes for a type
// quant cannot encode.
func genData(name string, t quant.Type, dims []int64) []byte {
	size, err := gguf.TensorBytes(t, dims)
	if err != nil {
		panic(fmt.Sprintf("tensor %q: %v", name, err))
	}
	hs := fnv.New64a()
	hs.Write([]byte(name))
	rng := rand.New(rand.NewPCG(7, hs.Sum64()))
	out := make([]byte, size)
	row, _ := t.RowBytes(dims[0])
	vals := make([]float32, dims[0])
	for off := int64(0); off < size; off += row {
		for i := range vals {
			vals[i] = float32(0.1 * rng.NormFloat64())
		}
		if quant.QuantizeRow(t, out[off:off+row], vals) != nil {
			for i := off; i < off+row; i++ {
				out[i] = byte(rng.Uint32())
			}
		}
	}
	return out
}

func (h *hmodel) bytes(tb testing.TB) []byte {
	tb.Helper()
	w := gguf.NewWriter()
	for _, kv := range h.kvs {
		w.AddKV(kv.Key, kv.Value)
	}
	for _, t := range h.tensors {
		if err := w.AddTensor(t.name, t.typ, t.dims, t.data); err != nil {
			tb.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func modelBytes(tb testing.TB, s testutil.ModelSpec) []byte {
	tb.Helper()
	b, err := testutil.ModelBytes(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// gpt2Vocab replaces the tokenizer by a byte-level BPE one of n tokens:
// GPT-2's 256 byte symbols, then two-symbol tokens, with the given merges.
func gpt2Vocab(h *hmodel, n int, merges []string) {
	var syms []string
	for b := range 256 {
		switch {
		case b >= '!' && b <= '~', b >= 0xA1 && b <= 0xAC, b >= 0xAE:
			syms = append(syms, string(rune(b)))
		default:
			syms = append(syms, string(rune(256+len(syms)-countPrintable(b))))
		}
	}
	toks := append([]string(nil), syms...)
	for i := 0; len(toks) < n; i++ {
		toks = append(toks, syms['a'+i%26]+syms['a'+i/26%26])
	}
	toks = toks[:n]
	types := make([]int32, n)
	for i := range types {
		types[i] = 1
	}
	h.set("tokenizer.ggml.model", "gpt2")
	h.set("tokenizer.ggml.pre", "gpt-2")
	h.set("tokenizer.ggml.tokens", toks)
	h.set("tokenizer.ggml.token_type", types)
	h.set("tokenizer.ggml.merges", merges)
	h.del("tokenizer.ggml.scores")
	h.set("tokenizer.ggml.bos_token_id", uint32(0))
	h.set("tokenizer.ggml.eos_token_id", uint32(1))
	h.del("tokenizer.ggml.unknown_token_id")
}

// countPrintable is how many bytes below b map to themselves in GPT-2's
// byte alphabet, so that the others get consecutive code points from 256.
func countPrintable(b int) int {
	n := 0
	for c := 0; c < b; c++ {
		if c >= '!' && c <= '~' || c >= 0xA1 && c <= 0xAC || c >= 0xAE {
			n++
		}
	}
	return n
}

// nanData is n float32 NaNs.
func nanData(n int64) []byte {
	b := make([]byte, 4*n)
	for i := int64(0); i < n; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], 0x7fc00000)
	}
	return b
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// oneTokenVocab shrinks the vocabulary to "<unk>" alone, which has no BOS
// for addBOS to prepend.
func oneTokenVocab(addBOS bool) func(*hmodel) {
	return func(h *hmodel) {
		h.put("token_embd.weight", quant.Q8_0, 64, 1)
		h.put("output.weight", quant.Q8_0, 64, 1)
		h.set("tokenizer.ggml.tokens", []string{"<unk>"})
		h.set(".vocab_size", uint32(1))
		h.set("tokenizer.ggml.scores", []float32{0})
		h.set("tokenizer.ggml.token_type", []int32{2})
		h.set("tokenizer.ggml.add_bos_token", addBOS)
	}
}

// unigram is spec with XLM-RoBERTa's kind of vocabulary (testutil.UGMVocab).
func unigram(spec testutil.ModelSpec) testutil.ModelSpec {
	spec.Unigram = true
	return spec
}

type hostileCase struct {
	name string
	spec testutil.ModelSpec // zero: TinyLlama
	edit func(h *hmodel)
	// want is the sentinel the error of Load wraps; nil means the model
	// may load, and must then run.
	want    error
	mention []string // substrings of the error
	// plan says llm.Plan fails the same way: the problem is visible in
	// the header (metadata and tensor descriptors, not the tokenizer).
	plan bool
}

func hostileCases() []hostileCase {
	setU := func(k string, v uint32) func(*hmodel) { return func(h *hmodel) { h.set(k, v) } }
	setF := func(k string, v float32) func(*hmodel) { return func(h *hmodel) { h.set(k, v) } }
	drop := func(name string) func(*hmodel) { return func(h *hmodel) { h.drop(name) } }
	del := func(k string) func(*hmodel) { return func(h *hmodel) { h.del(k) } }
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	bad, arch, typ := llm.ErrBadModel, llm.ErrUnsupportedArch, llm.ErrUnsupportedType
	// missing and misshapen are spec's file without tensor, or with it
	// F32 of dims: ErrBadModel naming it, from the plan too.
	missing := func(name string, spec testutil.ModelSpec, tensor string) hostileCase {
		return hostileCase{name: name, spec: spec, edit: drop(tensor), want: bad, mention: []string{tensor}, plan: true}
	}
	misshapen := func(name string, spec testutil.ModelSpec, tensor string, dims ...int64) hostileCase {
		edit := func(h *hmodel) { h.put(tensor, quant.F32, dims...) }
		return hostileCase{name: name, spec: spec, edit: edit, want: bad, mention: []string{tensor}, plan: true}
	}
	return []hostileCase{
		{name: "head_count 0", edit: setU(".attention.head_count", 0), want: bad, mention: []string{"attention.head_count"}, plan: true},
		{name: "head_count_kv 0", edit: setU(".attention.head_count_kv", 0), want: bad, mention: []string{"attention.head_count_kv"}, plan: true},
		{name: "head_count_kv not dividing", edit: setU(".attention.head_count_kv", 3), want: bad, mention: []string{"attention.head_count_kv"}, plan: true},
		{name: "head_count_kv above head_count", edit: setU(".attention.head_count_kv", 8), want: bad, mention: []string{"attention.head_count_kv"}, plan: true},
		{name: "head_count_kv huge", edit: setU(".attention.head_count_kv", 1<<31), want: bad, mention: []string{"attention.head_count_kv"}, plan: true},
		{name: "embedding_length not divisible by head_count", edit: func(h *hmodel) {
			h.set(".attention.head_count", uint32(6))
			h.set(".attention.head_count_kv", uint32(6))
		}, want: bad, mention: []string{"embedding_length", "attention.head_count"}, plan: true},
		{name: "embedding_length huge", edit: setU(".embedding_length", 1<<30), want: bad, mention: []string{"embedding_length"}, plan: true},
		{name: "key_length 0", edit: setU(".attention.key_length", 0), want: bad, mention: []string{"attention.key_length"}, plan: true},
		{name: "key_length huge", edit: setU(".attention.key_length", 1<<20), want: bad, mention: []string{"attention.key_length"}, plan: true},
		{name: "value_length huge", edit: setU(".attention.value_length", 1<<20), want: bad, mention: []string{"attention.value_length"}, plan: true},
		{name: "key_length disagrees with tensors", edit: setU(".attention.key_length", 32), want: bad, mention: []string{"attn_q.weight"}, plan: true},
		{name: "head dims overflow", edit: func(h *hmodel) {
			h.set(".attention.head_count", uint32(1<<20))
			h.set(".attention.head_count_kv", uint32(1<<20))
			h.set(".attention.key_length", uint32(1<<12))
		}, want: bad, mention: []string{"attention.head_count"}, plan: true},
		{name: "rope.dimension_count odd", edit: setU(".rope.dimension_count", 15), want: bad, mention: []string{"rope.dimension_count"}, plan: true},
		{name: "rope.dimension_count above head dim", edit: setU(".rope.dimension_count", 32), want: bad, mention: []string{"rope.dimension_count"}, plan: true},
		{name: "rope.dimension_count 0", edit: setU(".rope.dimension_count", 0), want: bad, mention: []string{"rope.dimension_count"}, plan: true},
		{name: "block_count 0", edit: setU(".block_count", 0), want: bad, mention: []string{"block_count"}, plan: true},
		{name: "block_count huge", edit: setU(".block_count", 1<<20), want: bad, mention: []string{"block_count"}, plan: true},
		{name: "block_count one too many", edit: setU(".block_count", 3), want: bad, mention: []string{"block_count"}, plan: true},
		{name: "feed_forward_length mismatch", edit: setU(".feed_forward_length", 256), want: bad, mention: []string{"ffn_gate.weight"}, plan: true},
		{name: "feed_forward_length missing", edit: del(".feed_forward_length"), want: bad, mention: []string{"feed_forward_length"}, plan: true},
		{name: "context_length 0", edit: setU(".context_length", 0), want: bad, mention: []string{"context_length"}, plan: true},
		{name: "context_length 1<<40", edit: func(h *hmodel) { h.set(".context_length", uint64(1)<<40) }, want: bad, mention: []string{"context_length"}, plan: true},
		{name: "context_length negative", edit: func(h *hmodel) { h.set(".context_length", int32(-5)) }, want: bad, mention: []string{"context_length"}, plan: true},
		{name: "context_length string", edit: func(h *hmodel) { h.set(".context_length", "4096") }, want: bad, mention: []string{"context_length"}, plan: true},
		{name: "vocab of 1 token", edit: oneTokenVocab(false)}, // there is no BOS to add
		// llama.cpp refuses add_bos_token without a BOS in the vocabulary.
		{name: "vocab of 1 token adding BOS", edit: oneTokenVocab(true), want: bad, mention: []string{"tokenizer.ggml.add_bos_token", "tokenizer.ggml.bos_token_id"}},
		{name: "token_embd narrower than embedding_length", edit: func(h *hmodel) {
			h.put("token_embd.weight", quant.Q8_0, 32, 320)
		}, want: bad, mention: []string{"token_embd.weight"}, plan: true},
		{name: "token_embd 1-D", edit: func(h *hmodel) { h.put("token_embd.weight", quant.F32, 64*320) }, want: bad, mention: []string{"token_embd.weight"}, plan: true},
		{name: "token_embd 3-D", edit: func(h *hmodel) { h.put("token_embd.weight", quant.F32, 64, 320, 1) }, want: bad, mention: []string{"token_embd.weight"}, plan: true},
		{name: "token_embd missing", edit: drop("token_embd.weight"), want: bad, mention: []string{"token_embd.weight"}, plan: true},
		{name: "output rows differ from vocab", edit: func(h *hmodel) { h.put("output.weight", quant.Q8_0, 64, 300) }, want: bad, mention: []string{"output.weight"}, plan: true},
		{name: "tokenizer larger than token_embd", edit: func(h *hmodel) {
			h.put("token_embd.weight", quant.Q8_0, 64, 300)
			h.put("output.weight", quant.Q8_0, 64, 300)
			h.set(".vocab_size", uint32(300))
		}, want: bad, mention: []string{"tokenizer.ggml.tokens", "token_embd.weight"}, plan: true},
		// llama.cpp sizes token_embd by the vocabulary: a row without a
		// token (which the sampler could pick and nothing could print) is
		// refused as firmly as a token without a row.
		{name: "tokenizer smaller than token_embd", edit: func(h *hmodel) {
			h.set("tokenizer.ggml.tokens", h.get("tokenizer.ggml.tokens").([]string)[:300])
			h.set("tokenizer.ggml.scores", h.get("tokenizer.ggml.scores").([]float32)[:300])
			h.set("tokenizer.ggml.token_type", h.get("tokenizer.ggml.token_type").([]int32)[:300])
		}, want: bad, mention: []string{"tokenizer.ggml.tokens", "300", "token_embd.weight", "320"}, plan: true},
		{name: "vocab_size disagrees with token_embd", edit: setU(".vocab_size", 319),
			want: bad, mention: []string{"vocab_size", "token_embd.weight"}, plan: true},
		{name: "vocab_size agrees", edit: setU(".vocab_size", 320)},
		{name: "vocab_size not a number", edit: func(h *hmodel) { h.set(".vocab_size", "320") },
			want: bad, mention: []string{"vocab_size"}, plan: true},
		{name: "TQ1_0 tensor", spec: func() testutil.ModelSpec { s := testutil.TinyLlama(); s.FFN = 256; return s }(),
			edit: func(h *hmodel) { h.put("blk.1.ffn_down.weight", quant.TQ1_0, 256, 64) },
			want: typ, mention: []string{"blk.1.ffn_down.weight", "TQ1_0"}, plan: true},
		{name: "TQ1_0 model", spec: testutil.ModelSpec{Vocab: 320, Embd: 256, Layers: 1, Heads: 4, FFN: 256, Context: 128, WeightType: quant.TQ1_0, OutputType: quant.Q8_0},
			want: typ, mention: []string{"TQ1_0"}, plan: true},
		// gpt-oss's expert type with the exponent byte the OCP format
		// calls NaN in every block: ggml computes with it (2^127), and so
		// does the model here, overflowing but never failing.
		{name: "MXFP4 experts with exponents 0xFF", spec: func() testutil.ModelSpec {
			s := testutil.TinyQwen3MoE()
			s.ExpertType = quant.MXFP4
			return s
		}(), edit: func(h *hmodel) {
			for i := range h.tensors {
				if t := &h.tensors[i]; t.typ == quant.MXFP4 {
					for k := 0; k < len(t.data); k += quant.MXFP4.BlockBytes() {
						t.data[k] = 0xFF
					}
				}
			}
		}},
		// lfm2moe: its gating function, its leading dense layers and the
		// tensors each kind of layer must have; a selection bias of NaNs
		// chooses experts all the same (NaN last), as it never fails.
		{name: "lfm2moe gating 9", spec: testutil.TinyLFM2MoE(), edit: setU(".expert_gating_func", 9),
			want: arch, mention: []string{"lfm2moe.expert_gating_func = 9"}, plan: true},
		{name: "lfm2moe dense lead past the blocks", spec: testutil.TinyLFM2MoE(), edit: setU(".leading_dense_block_count", 5),
			want: bad, mention: []string{"leading_dense_block_count"}, plan: true},
		missing("lfm2moe dense layer without ffn_gate", testutil.TinyLFM2MoE(), "blk.0.ffn_gate.weight"),
		{name: "lfm2moe dense lead covering an expert layer", spec: testutil.TinyLFM2MoE(), edit: setU(".leading_dense_block_count", 2),
			want: bad, mention: []string{"blk.1.ffn_gate_inp.weight", "leading_dense_block_count = 2"}, plan: true},
		misshapen("lfm2moe router in a dense layer", testutil.TinyLFM2MoE(), "blk.0.ffn_gate_inp.weight", 64, 8),
		missing("lfm2moe without a selection bias", testutil.TinyLFM2MoE(), "blk.3.exp_probs_b.bias"),
		{name: "lfm2moe selection bias of NaNs", spec: testutil.TinyLFM2MoE(), edit: func(h *hmodel) {
			t := h.tensor("blk.1.exp_probs_b.bias")
			for k := 0; k < len(t.data); k += 4 {
				binary.LittleEndian.PutUint32(t.data[k:], math.Float32bits(float32(math.NaN())))
			}
		}},
		// gemma3n: its AltUp, per-layer, shared-KV and sparsity keys, and
		// the tensors only it has; the shared_kv_layers float32 of early
		// conversions is taken when it holds a count.
		{name: "gemma3n per-layer width wrong", spec: testutil.TinyGemma3n(), edit: setU(".embedding_length_per_layer_input", 16),
			want: bad, mention: []string{"per_layer_token_embd.weight", "embedding_length_per_layer_input = 16"}, plan: true},
		// llama.cpp's text model leaves the vision and audio towers'
		// tensors alone (its converter writes them to another file).
		{name: "gemma3n with vision and audio tensors", spec: testutil.TinyGemma3n(), edit: func(h *hmodel) {
			h.put("v.patch_embd.weight", quant.F16, 64, 64)
			h.put("a.blk.0.attn_q.weight", quant.F16, 64, 64)
			h.put("mm.input_projection.weight", quant.F32, 64, 64)
		}},
		{name: "gemma3n altup inputs 0", spec: testutil.TinyGemma3n(), edit: setU(".altup.num_inputs", 0),
			want: bad, mention: []string{"gemma3n.altup.num_inputs = 0"}, plan: true},
		{name: "gemma3n altup inputs 1", spec: testutil.TinyGemma3n(), edit: setU(".altup.num_inputs", 1),
			want: bad, mention: []string{"gemma3n.altup.num_inputs = 1"}, plan: true},
		{name: "gemma3n altup inputs disagree with altup_proj", spec: testutil.TinyGemma3n(), edit: setU(".altup.num_inputs", 3),
			want: bad, mention: []string{"altup_proj.weight"}, plan: true},
		{name: "gemma3n active stream out of range", spec: testutil.TinyGemma3n(), edit: setU(".altup.active_idx", 4),
			want: bad, mention: []string{"gemma3n.altup.active_idx = 4"}, plan: true},
		{name: "gemma3n shared KV beyond the layers", spec: testutil.TinyGemma3n(), edit: setU(".attention.shared_kv_layers", 9),
			want: bad, mention: []string{"gemma3n.attention.shared_kv_layers = 9"}, plan: true},
		{name: "gemma3n shared KV of the wrong kind", spec: testutil.TinyGemma3n(), edit: setU(".attention.shared_kv_layers", 1),
			want: bad, mention: []string{"gemma3n.attention.shared_kv_layers = 1", "windowed"}, plan: true},
		{name: "gemma3n shared KV as float32", spec: testutil.TinyGemma3n(), edit: func(h *hmodel) { h.set(".attention.shared_kv_layers", float32(2)) }},
		{name: "gemma3n shared KV fractional", spec: testutil.TinyGemma3n(), edit: func(h *hmodel) { h.set(".attention.shared_kv_layers", float32(1.5)) },
			want: bad, mention: []string{"shared_kv_layers"}, plan: true},
		{name: "gemma3n sparsity scales of another length", spec: testutil.TinyGemma3n(), edit: func(h *hmodel) { h.set(".activation_sparsity_scale", []float32{1, 2}) },
			want: bad, mention: []string{"activation_sparsity_scale"}, plan: true},
		{name: "gemma3n without a window", spec: testutil.TinyGemma3n(), edit: del(".attention.sliding_window"),
			want: bad, mention: []string{"gemma3n.attention.sliding_window"}, plan: true},
		missing("gemma3n without laurel_l", testutil.TinyGemma3n(), "blk.2.laurel_l.weight"),
		missing("gemma3n without the first laurel_l", testutil.TinyGemma3n(), "blk.0.laurel_l.weight"),
		missing("gemma3n without per_layer_token_embd", testutil.TinyGemma3n(), "per_layer_token_embd.weight"),
		missing("gemma3n without altup_unembd_proj", testutil.TinyGemma3n(), "altup_unembd_proj.weight"),
		missing("gemma3n without a router", testutil.TinyGemma3n(), "blk.3.altup_router.weight"),
		missing("gemma3n without a shared layer's attn_k", testutil.TinyGemma3n(), "blk.3.attn_k.weight"),
		// gemma4: its head sizes, layer kinds, per-layer counts and
		// tensors; layer_output_scale and attn_v are optional.
		{name: "gemma4 without key_length_swa", spec: testutil.TinyGemma4(), edit: del(".attention.key_length_swa"),
			want: bad, mention: []string{"gemma4.attention.key_length_swa"}, plan: true},
		{name: "gemma4 value_length_swa differs", spec: testutil.TinyGemma4(), edit: setU(".attention.value_length_swa", 64),
			want: bad, mention: []string{"gemma4.attention.value_length_swa = 64"}, plan: true},
		{name: "gemma4 without a layer pattern", spec: testutil.TinyGemma4(), edit: del(".attention.sliding_window_pattern"),
			want: bad, mention: []string{"gemma4.attention.sliding_window_pattern"}, plan: true},
		{name: "gemma4 layer pattern a single value", spec: testutil.TinyGemma4(), edit: setU(".attention.sliding_window_pattern", 5),
			want: bad, mention: []string{"gemma4.attention.sliding_window_pattern"}, plan: true},
		{name: "gemma4 without per-layer input width", spec: testutil.TinyGemma4(), edit: del(".embedding_length_per_layer_input"),
			want: bad, mention: []string{"gemma4.embedding_length_per_layer_input"}, plan: true},
		{name: "gemma4 KV heads not dividing", spec: testutil.TinyGemma4(), edit: func(h *hmodel) { h.set(".attention.head_count_kv", []int32{2, 2, 3, 2, 1}) },
			want: bad, mention: []string{"gemma4.attention.head_count_kv"}, plan: true},
		{name: "gemma4 query heads per layer", spec: testutil.TinyGemma4(), edit: func(h *hmodel) { h.set(".attention.head_count", []int32{4, 4, 2, 4, 4}) },
			want: llm.ErrUnsupportedArch, mention: []string{"gemma4.attention.head_count"}},
		{name: "gemma4 rotating more than the windowed head", spec: testutil.TinyGemma4(), edit: setU(".rope.dimension_count_swa", 48),
			want: bad, mention: []string{"gemma4.rope.dimension_count_swa = 48"}, plan: true},
		{name: "gemma4 without rope_freqs", spec: testutil.TinyGemma4(), edit: drop("rope_freqs.weight"),
			want: bad, mention: []string{"rope_freqs.weight"}, plan: true},
		{name: "gemma4 without per_layer_token_embd", spec: testutil.TinyGemma4(), edit: drop("per_layer_token_embd.weight"),
			want: bad, mention: []string{"per_layer_token_embd.weight"}, plan: true},
		{name: "gemma4 without a global layer's attn_q", spec: testutil.TinyGemma4(), edit: drop("blk.2.attn_q.weight"),
			want: bad, mention: []string{"blk.2.attn_q.weight"}, plan: true},
		{name: "gemma4 without an owning layer's attn_k", spec: testutil.TinyGemma4(), edit: drop("blk.1.attn_k.weight"),
			want: bad, mention: []string{"blk.1.attn_k.weight"}, plan: true},
		{name: "gemma4 without inp_gate", spec: testutil.TinyGemma4(), edit: drop("blk.4.inp_gate.weight"),
			want: bad, mention: []string{"blk.4.inp_gate.weight"}, plan: true},
		{name: "gemma4 without layer_output_scale", spec: testutil.TinyGemma4(), edit: drop("blk.3.layer_output_scale.weight")},
		// gemma4's experts (26B-A4B): the counts, the width, each tensor
		// of an expert block; a router in a dense model.
		{name: "gemma4 expert_count without expert_used_count", spec: testutil.TinyGemma4(), edit: setU(".expert_count", 8),
			want: bad, mention: []string{"gemma4.expert_used_count"}, plan: true},
		{name: "gemma4 expert_used_count without experts", spec: testutil.TinyGemma4(), edit: setU(".expert_used_count", 2),
			want: bad, mention: []string{"gemma4.expert_used_count", "gemma4.expert_count"}, plan: true},
		{name: "gemma4 without expert_feed_forward_length", spec: testutil.TinyGemma4MoE(), edit: del(".expert_feed_forward_length"),
			want: bad, mention: []string{"gemma4.expert_feed_forward_length"}, plan: true},
		{name: "gemma4 more experts used than there are", spec: testutil.TinyGemma4MoE(), edit: setU(".expert_used_count", 9),
			want: bad, mention: []string{"gemma4.expert_used_count = 9"}, plan: true},
		{name: "gemma4 router in a dense model", spec: testutil.TinyGemma4MoE(), edit: func(h *hmodel) {
			h.set(".expert_count", uint32(0))
			h.set(".expert_used_count", uint32(0))
		}, want: bad, mention: []string{"blk.0.ffn_gate_inp.weight", "expert_count = 0"}, plan: true},
		missing("gemma4 without a router", testutil.TinyGemma4MoE(), "blk.3.ffn_gate_inp.weight"),
		missing("gemma4 without the router's scale", testutil.TinyGemma4MoE(), "blk.1.ffn_gate_inp.scale"),
		missing("gemma4 without pre_ffw_norm_2", testutil.TinyGemma4MoE(), "blk.2.pre_ffw_norm_2.weight"),
		missing("gemma4 without post_ffw_norm_1", testutil.TinyGemma4MoE(), "blk.0.post_ffw_norm_1.weight"),
		missing("gemma4 without post_ffw_norm_2", testutil.TinyGemma4MoE(), "blk.3.post_ffw_norm_2.weight"),
		missing("gemma4 without ffn_down_exps", testutil.TinyGemma4MoE(), "blk.1.ffn_down_exps.weight"),
		{name: "gemma4 without the experts' gate and up", spec: testutil.TinyGemma4MoE(), edit: drop("blk.2.ffn_gate_up_exps.weight"),
			want: bad, mention: []string{"blk.2.ffn_gate_exps.weight"}, plan: true},
		missing("gemma4 without the dense feed-forward beside the experts", testutil.TinyGemma4MoE(), "blk.0.ffn_gate.weight"),
		misshapen("gemma4 fused experts of another width", testutil.TinyGemma4MoE(), "blk.0.ffn_gate_up_exps.weight", 64, 48, 8),
		misshapen("gemma4 expert output scales of another count", testutil.TinyGemma4MoE(), "blk.0.ffn_down_exps.scale", 4),
		{name: "gemma4 without expert output scales", spec: testutil.TinyGemma4MoE(), edit: func(h *hmodel) {
			for l := range 4 {
				h.drop(fmt.Sprintf("blk.%d.ffn_down_exps.scale", l))
			}
		}},
		// deepseek2: every size of the latent attention checked against
		// the others and the tensors, the expert counts, the groups.
		{name: "deepseek2 kv_lora_rank 0", spec: testutil.TinyDeepSeek2(), edit: setU(".attention.kv_lora_rank", 0),
			want: bad, mention: []string{"deepseek2.attention.kv_lora_rank = 0"}, plan: true},
		{name: "deepseek2 kv_lora_rank missing", spec: testutil.TinyDeepSeek2(), edit: del(".attention.kv_lora_rank"),
			want: bad, mention: []string{"deepseek2.attention.kv_lora_rank"}, plan: true},
		{name: "deepseek2 kv_lora_rank disagreeing with key_length", spec: testutil.TinyDeepSeek2(), edit: setU(".attention.kv_lora_rank", 32),
			want: bad, mention: []string{"deepseek2.attention.key_length = 80"}, plan: true},
		{name: "deepseek2 rope dims past key_length_mla", spec: testutil.TinyDeepSeek2(), edit: setU(".rope.dimension_count", 48),
			want: bad, mention: []string{"deepseek2.rope.dimension_count = 48", "key_length_mla"}, plan: true},
		{name: "deepseek2 value_length not the latent", spec: testutil.TinyDeepSeek2(), edit: setU(".attention.value_length", 32),
			want: bad, mention: []string{"deepseek2.attention.value_length = 32"}, plan: true},
		{name: "deepseek2 two KV heads", spec: testutil.TinyDeepSeek2(), edit: setU(".attention.head_count_kv", 2),
			want: bad, mention: []string{"deepseek2.attention.head_count_kv = 2"}, plan: true},
		{name: "deepseek2 key_length_mla without value_length_mla", spec: testutil.TinyDeepSeek2(), edit: del(".attention.key_length_mla"),
			want: bad, mention: []string{"deepseek2.attention.key_length_mla"}, plan: true},
		missing("deepseek2 older form without attn_kv_b", testutil.TinyDeepSeek2KVB(), "blk.2.attn_kv_b.weight"),
		{name: "minicpm3 q_lora_rank missing", spec: testutil.TinyMiniCPM3(), edit: del(".attention.q_lora_rank"),
			want: bad, mention: []string{"minicpm3.attention.q_lora_rank"}, plan: true},
		{name: "minicpm3 q_lora_rank 0", spec: testutil.TinyMiniCPM3(), edit: setU(".attention.q_lora_rank", 0),
			want: bad, mention: []string{"minicpm3.attention.q_lora_rank = 0"}, plan: true},
		{name: "minicpm3 fewer KV heads than heads", spec: testutil.TinyMiniCPM3(), edit: setU(".attention.head_count_kv", 2),
			want: bad, mention: []string{"minicpm3.attention.head_count_kv = 2"}, plan: true},
		missing("minicpm3 without attn_kv_b", testutil.TinyMiniCPM3(), "blk.1.attn_kv_b.weight"),
		missing("minicpm3 without attn_q_a_norm", testutil.TinyMiniCPM3(), "blk.0.attn_q_a_norm.weight"),
		misshapen("minicpm3 attn_kv_a_mqa of the wrong shape", testutil.TinyMiniCPM3(), "blk.0.attn_kv_a_mqa.weight", 64, 64),
		{name: "minicpm3 rope_factors_short of the wrong length", spec: testutil.TinyMiniCPM3(), edit: func(h *hmodel) { h.put("rope_factors_short.weight", quant.F32, 16) },
			want: bad, mention: []string{"rope_factors_short.weight"}},
		{name: "deepseek2 older form with one KV head", spec: testutil.TinyDeepSeek2KVB(), edit: setU(".attention.head_count_kv", 1),
			want: bad, mention: []string{"deepseek2.attention.head_count_kv = 1"}, plan: true},
		{name: "deepseek2 older form with split tensors", spec: testutil.TinyDeepSeek2(), edit: func(h *hmodel) {
			h.del(".attention.key_length_mla")
			h.del(".attention.value_length_mla")
		}, want: bad, plan: true},
		missing("deepseek2 attn_k_b missing", testutil.TinyDeepSeek2(), "blk.1.attn_k_b.weight"),
		misshapen("deepseek2 attn_v_b of the wrong shape", testutil.TinyDeepSeek2(), "blk.0.attn_v_b.weight", 64, 32, 2),
		{name: "deepseek2 q_lora_rank without attn_q_a", spec: testutil.TinyDeepSeek2(), edit: setU(".attention.q_lora_rank", 32),
			want: bad, mention: []string{"blk.0.attn_q_a.weight"}, plan: true},
		missing("deepseek2 attn_q_a_norm missing", testutil.TinyDeepSeek3(), "blk.2.attn_q_a_norm.weight"),
		{name: "deepseek2 more experts used than there are", spec: testutil.TinyDeepSeek2(), edit: setU(".expert_used_count", 9),
			want: bad, mention: []string{"deepseek2.expert_used_count = 9"}, plan: true},
		{name: "deepseek2 expert_shared_count missing", spec: testutil.TinyDeepSeek2(), edit: del(".expert_shared_count"),
			want: bad, mention: []string{"deepseek2.expert_shared_count"}, plan: true},
		{name: "deepseek2 shared expert of the wrong width", spec: testutil.TinyDeepSeek2(), edit: setU(".expert_shared_count", 3),
			want: bad, mention: []string{"ffn_gate_shexp.weight"}, plan: true},
		{name: "deepseek2 groups not dividing the experts", spec: testutil.TinyDeepSeek3(), edit: setU(".expert_group_count", 3),
			want: bad, mention: []string{"deepseek2.expert_group_count = 3 does not divide"}, plan: true},
		{name: "deepseek2 every group used", spec: testutil.TinyDeepSeek3(), edit: setU(".expert_group_used_count", 4),
			want: bad, mention: []string{"deepseek2.expert_group_used_count = 4"}, plan: true},
		{name: "deepseek2 groups too few for the experts used", spec: testutil.TinyDeepSeek3(), edit: func(h *hmodel) {
			h.set(".expert_group_used_count", uint32(1))
			h.set(".expert_used_count", uint32(3))
		}, want: bad, mention: []string{"deepseek2.expert_used_count = 3"}, plan: true},
		{name: "deepseek2 negative expert scale", spec: testutil.TinyDeepSeek2(), edit: setF(".expert_weights_scale", -1),
			want: bad, mention: []string{"deepseek2.expert_weights_scale"}, plan: true},
		{name: "deepseek2 dense lead past the blocks", spec: testutil.TinyDeepSeek2(), edit: setU(".leading_dense_block_count", 4),
			want: bad, mention: []string{"deepseek2.leading_dense_block_count"}, plan: true},
		{name: "deepseek2 temperature scale", spec: testutil.TinyDeepSeek2(), edit: setF(".attention.temperature_scale", 0.1),
			want: arch, mention: []string{"deepseek2.attention.temperature_scale"}, plan: true},
		{name: "norm of type I32", edit: func(h *hmodel) { h.put("blk.0.attn_norm.weight", quant.I32, 64) }, want: typ, mention: []string{"blk.0.attn_norm.weight"}, plan: true},
		{name: "output_norm missing", edit: drop("output_norm.weight"), want: bad, mention: []string{"output_norm.weight"}, plan: true},
		{name: "ffn_down missing", edit: drop("blk.1.ffn_down.weight"), want: bad, mention: []string{"blk.1.ffn_down.weight"}, plan: true},
		{name: "attn_q 3-D", edit: func(h *hmodel) { h.put("blk.0.attn_q.weight", quant.F32, 64, 32, 2) }, want: bad, mention: []string{"blk.0.attn_q.weight"}, plan: true},
		{name: "head_count per-layer array", edit: func(h *hmodel) { h.set(".attention.head_count", []uint32{4, 2}) },
			want: arch, mention: []string{"attention.head_count"}, plan: true},
		{name: "head_count_kv per-layer array", edit: func(h *hmodel) { h.set(".attention.head_count_kv", []int32{2, 1}) },
			want: arch, mention: []string{"attention.head_count_kv"}, plan: true},
		{name: "head_count uniform per-layer array", edit: func(h *hmodel) { h.set(".attention.head_count", []uint32{4, 4}) }},
		{name: "head_count array of wrong length", edit: func(h *hmodel) { h.set(".attention.head_count", []uint32{4, 4, 4}) },
			want: bad, mention: []string{"attention.head_count"}, plan: true},
		{name: "feed_forward_length per-layer array", edit: func(h *hmodel) { h.set(".feed_forward_length", []uint32{128, 64}) },
			want: arch, mention: []string{"feed_forward_length"}, plan: true},
		{name: "rms epsilon NaN", edit: setF(".attention.layer_norm_rms_epsilon", nan), want: bad, mention: []string{"layer_norm_rms_epsilon"}, plan: true},
		{name: "rms epsilon inf", edit: setF(".attention.layer_norm_rms_epsilon", inf), want: bad, mention: []string{"layer_norm_rms_epsilon"}, plan: true},
		{name: "rms epsilon negative", edit: setF(".attention.layer_norm_rms_epsilon", -1e-5), want: bad, mention: []string{"layer_norm_rms_epsilon"}, plan: true},
		{name: "rms epsilon float64 overflowing float32", edit: func(h *hmodel) { h.set(".attention.layer_norm_rms_epsilon", 1e300) },
			want: bad, mention: []string{"layer_norm_rms_epsilon"}, plan: true},
		{name: "rms epsilon string", edit: func(h *hmodel) { h.set(".attention.layer_norm_rms_epsilon", "1e-5") },
			want: bad, mention: []string{"layer_norm_rms_epsilon"}, plan: true},
		{name: "rope base 0", edit: setF(".rope.freq_base", 0), want: bad, mention: []string{"rope.freq_base"}, plan: true},
		{name: "rope base NaN", edit: setF(".rope.freq_base", nan), want: bad, mention: []string{"rope.freq_base"}, plan: true},
		{name: "rope base inf", edit: setF(".rope.freq_base", inf), want: bad, mention: []string{"rope.freq_base"}, plan: true},
		// YaRN runs (a Qwen3 made long); DeepSeek's log multiplier does not.
		{name: "rope scaling yarn", edit: func(h *hmodel) {
			h.set(".rope.scaling.type", "yarn")
			h.set(".rope.scaling.factor", float32(4))
		}},
		{name: "rope scaling yarn with a log multiplier", edit: func(h *hmodel) {
			h.set(".rope.scaling.type", "yarn")
			h.set(".rope.scaling.factor", float32(4))
			h.set(".rope.scaling.yarn_log_multiplier", float32(1))
		}},
		{name: "rope scaling yarn log multiplier inf", edit: func(h *hmodel) {
			h.set(".rope.scaling.type", "yarn")
			h.set(".rope.scaling.yarn_log_multiplier", inf)
		}, want: bad, mention: []string{"yarn_log_multiplier"}, plan: true},
		{name: "mistral3 temperature scale NaN", spec: testutil.TinyMistral3(), edit: func(h *hmodel) { h.set(".attention.temperature_scale", nan) },
			want: bad, mention: []string{"mistral3.attention.temperature_scale"}, plan: true},
		{name: "rope scaling yarn beta NaN", edit: func(h *hmodel) {
			h.set(".rope.scaling.type", "yarn")
			h.set(".rope.scaling.yarn_beta_slow", nan)
		}, want: bad, mention: []string{"yarn_beta_slow"}, plan: true},
		{name: "rope scaling unknown", edit: func(h *hmodel) { h.set(".rope.scaling.type", "dynamic") },
			want: arch, mention: []string{"dynamic"}, plan: true},
		{name: "rope scaling linear factor NaN", edit: func(h *hmodel) {
			h.set(".rope.scaling.type", "linear")
			h.set(".rope.scaling.factor", nan)
		}, want: bad, mention: []string{"rope.scaling.factor"}, plan: true},
		{name: "rope scaling linear factor inf", edit: func(h *hmodel) {
			h.set(".rope.scaling.type", "linear")
			h.set(".rope.scaling.factor", inf)
		}, want: bad, mention: []string{"rope.scaling.factor"}, plan: true},
		{name: "rope_freqs wrong length", edit: func(h *hmodel) { h.put("rope_freqs.weight", quant.F32, 5) }, want: bad, mention: []string{"rope_freqs.weight"}, plan: true},
		{name: "scores shorter than tokens", edit: func(h *hmodel) { h.set("tokenizer.ggml.scores", []float32{0, 0, 0}) },
			want: bad, mention: []string{"tokenizer.ggml.scores"}},
		{name: "token types shorter than tokens", edit: func(h *hmodel) { h.set("tokenizer.ggml.token_type", []int32{1}) },
			want: bad, mention: []string{"tokenizer.ggml.token_type"}},
		{name: "tokens missing", edit: del("tokenizer.ggml.tokens"), want: bad, mention: []string{"tokenizer.ggml.tokens"}},
		{name: "tokens empty", edit: func(h *hmodel) { h.set("tokenizer.ggml.tokens", []string{}) }, want: bad, mention: []string{"tokenizer.ggml.tokens"}},
		{name: "tokens duplicate", edit: func(h *hmodel) {
			toks := append([]string(nil), h.get("tokenizer.ggml.tokens").([]string)...)
			toks[300] = toks[299]
			h.set("tokenizer.ggml.tokens", toks)
		}, want: bad, mention: []string{"duplicate"}},
		{name: "tokens of type uint32", edit: func(h *hmodel) { h.set("tokenizer.ggml.tokens", make([]uint32, 320)) }, want: bad, mention: []string{"tokenizer.ggml.tokens"}},
		{name: "bos id out of range", edit: setU("tokenizer.ggml.bos_token_id", 100000)},
		{name: "eos id max uint32", edit: setU("tokenizer.ggml.eos_token_id", math.MaxUint32)},
		{name: "token type out of range", edit: func(h *hmodel) {
			types := append([]int32(nil), h.get("tokenizer.ggml.token_type").([]int32)...)
			types[300], types[301] = -7, 1<<30
			h.set("tokenizer.ggml.token_type", types)
		}},
		{name: "tokenizer model unknown", edit: func(h *hmodel) { h.set("tokenizer.ggml.model", "unknown") }, want: arch, mention: []string{"unknown"}},
		{name: "tokenizer model missing", edit: del("tokenizer.ggml.model"), want: bad, mention: []string{"tokenizer.ggml.model"}},
		{name: "gpt2 merges well formed", edit: func(h *hmodel) { gpt2Vocab(h, 320, []string{"a b", "b c", "ab c"}) }},
		{name: "gpt2 merges malformed", edit: func(h *hmodel) {
			gpt2Vocab(h, 320, []string{"", " ", "abc", "a b c", "  a", "\x00 \xff", "zz yy", "a b"})
		}},
		{name: "gpt2 merges missing", edit: func(h *hmodel) { gpt2Vocab(h, 320, nil); h.del("tokenizer.ggml.merges") },
			want: bad, mention: []string{"tokenizer.ggml.merges"}},
		{name: "gpt2 pre-tokenizer unknown", edit: func(h *hmodel) { gpt2Vocab(h, 320, nil); h.set("tokenizer.ggml.pre", "nonesuch") },
			want: arch, mention: []string{"nonesuch"}},
		{name: "gpt2 pre-tokenizer tekken", edit: func(h *hmodel) { gpt2Vocab(h, 320, nil); h.set("tokenizer.ggml.pre", "tekken") }},
		{name: "architecture unknown", edit: func(h *hmodel) { h.set("general.architecture", "rwkv6") }, want: arch, mention: []string{"rwkv6"}, plan: true},
		{name: "architecture missing", edit: del("general.architecture"), want: bad, mention: []string{"general.architecture"}, plan: true},
		{name: "architecture not a string", edit: func(h *hmodel) { h.set("general.architecture", uint32(1)) }, want: bad, mention: []string{"general.architecture"}, plan: true},
		{name: "tensor of block -1", edit: func(h *hmodel) { h.put("blk.-1.attn_norm.weight", quant.F32, 64) }},
		{name: "tensor of block huge", edit: func(h *hmodel) { h.put("blk.99999999999999999999.attn_norm.weight", quant.F32, 64) }},
		{name: "mixture of experts", edit: func(h *hmodel) { h.put("blk.0.ffn_gate_inp.weight", quant.F32, 64, 4) },
			want: arch, mention: []string{"blk.0.ffn_gate_inp.weight"}, plan: true},
		{name: "mixture of experts by metadata", edit: func(h *hmodel) { h.set(".expert_count", uint32(8)) },
			want: arch, mention: []string{"expert_count"}, plan: true},
		// llama.cpp loads these biases as optional for llama and granite:
		// a file that has one must be refused, not run without it.
		{name: "llama with attn_q.bias", edit: func(h *hmodel) { h.put("blk.1.attn_q.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.1.attn_q.bias"}, plan: true},
		{name: "granite with ffn_down.bias", spec: testutil.TinyGranite(), edit: func(h *hmodel) { h.put("blk.0.ffn_down.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.0.ffn_down.bias"}, plan: true},
		{name: "granite logit_scale missing", spec: testutil.TinyGranite(), edit: del(".logit_scale"),
			want: bad, mention: []string{"granite.logit_scale"}, plan: true},
		{name: "granite residual_scale missing", spec: testutil.TinyGranite(), edit: del(".residual_scale"),
			want: bad, mention: []string{"granite.residual_scale"}, plan: true},
		{name: "granite logit_scale zero", spec: testutil.TinyGranite(), edit: func(h *hmodel) { h.set(".logit_scale", float32(0)) },
			want: bad, mention: []string{"granite.logit_scale"}, plan: true},
		{name: "granite embedding_scale NaN", spec: testutil.TinyGranite(), edit: func(h *hmodel) { h.set(".embedding_scale", float32(math.NaN())) },
			want: bad, mention: []string{"granite.embedding_scale"}, plan: true},
		{name: "granite attention.scale a string", spec: testutil.TinyGranite(), edit: func(h *hmodel) { h.set(".attention.scale", "1") },
			want: bad, mention: []string{"granite.attention.scale"}, plan: true},
		{name: "granite without RoPE", spec: testutil.TinyGranite(), edit: func(h *hmodel) { h.set(".rope.scaling.finetuned", false) }},
		{name: "minicpm logit_scale zero", spec: testutil.TinyMiniCPM(), edit: func(h *hmodel) { h.set(".logit_scale", float32(0)) },
			want: bad, mention: []string{"minicpm.logit_scale"}, plan: true},
		{name: "minicpm residual_scale infinite", spec: testutil.TinyMiniCPM(), edit: func(h *hmodel) { h.set(".residual_scale", float32(math.Inf(1))) },
			want: bad, mention: []string{"minicpm.residual_scale"}, plan: true},
		{name: "minicpm without its multipliers", spec: testutil.TinyMiniCPM(), edit: func(h *hmodel) {
			del(".embedding_scale")(h)
			del(".residual_scale")(h)
			del(".logit_scale")(h)
		}},
		{name: "minicpm with ffn_down.bias", spec: testutil.TinyMiniCPM(), edit: func(h *hmodel) { h.put("blk.0.ffn_down.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.0.ffn_down.bias"}, plan: true},
		{name: "minicpm rope_factors_long of the wrong length", spec: testutil.TinyMiniCPM(), edit: func(h *hmodel) { h.put("rope_factors_long.weight", quant.F32, 5) },
			want: bad, mention: []string{"rope_factors_long.weight"}},
		{name: "granitemoe shared expert without its tensors", spec: testutil.TinyGraniteMoE(), edit: func(h *hmodel) { h.set(".expert_shared_feed_forward_length", uint32(64)) },
			want: bad, mention: []string{"blk.0.ffn_gate_shexp.weight"}, plan: true},
		missing("granitehybrid recurrent layer without ssm_a", testutil.TinyGraniteHybrid(), "blk.1.ssm_a"),
		missing("granitehybrid recurrent layer without ssm_in", testutil.TinyGraniteHybrid(), "blk.0.ssm_in.weight"),
		misshapen("granitehybrid ssm_conv1d of the wrong shape", testutil.TinyGraniteHybrid(), "blk.3.ssm_conv1d.weight", 3, 192),
		misshapen("granitehybrid ssm_norm of ungrouped shape", testutil.TinyGraniteHybrid(), "blk.0.ssm_norm.weight", 128),
		{name: "granitehybrid without the conv bias", spec: testutil.TinyGraniteHybrid(), edit: drop("blk.0.ssm_conv1d.bias")},
		missing("granitehybrid attention layer without attn_q", testutil.TinyGraniteHybrid(), "blk.2.attn_q.weight"),
		{name: "granitehybrid groups not dividing the heads", spec: testutil.TinyGraniteHybrid(), edit: setU(".ssm.group_count", 3),
			want: bad, mention: []string{"granitehybrid.ssm.group_count"}, plan: true},
		{name: "granitehybrid state size 0", spec: testutil.TinyGraniteHybrid(), edit: setU(".ssm.state_size", 0),
			want: bad, mention: []string{"granitehybrid.ssm.state_size"}, plan: true},
		{name: "granitehybrid state size missing", spec: testutil.TinyGraniteHybrid(), edit: del(".ssm.state_size"),
			want: bad, mention: []string{"granitehybrid.ssm.state_size"}, plan: true},
		{name: "granitehybrid state size disagreeing with ssm_in", spec: testutil.TinyGraniteHybrid(), edit: setU(".ssm.state_size", 32),
			want: bad, mention: []string{"ssm_in.weight"}, plan: true},
		misshapen("granitehybrid router in a dense model", testutil.TinyGraniteHybrid(), "blk.0.ffn_gate_inp.weight", 64, 8),
		missing("granitehybrid shared expert missing", testutil.TinyGraniteHybridMoE(), "blk.2.ffn_down_shexp.weight"),
		{name: "granitehybrid NaN time-step bias", spec: testutil.TinyGraniteHybrid(), edit: func(h *hmodel) { h.tensor("blk.0.ssm_dt.bias").data = nanData(8) }},
		{name: "qwen35 delta-net layer without ssm_beta", spec: testutil.TinyQwen35(), edit: drop("blk.1.ssm_beta.weight"), want: bad, mention: []string{"blk.1.ssm_beta.weight"}, plan: true},
		{name: "qwen35 delta-net layer without attn_gate", spec: testutil.TinyQwen35(), edit: drop("blk.0.attn_gate.weight"), want: bad, mention: []string{"blk.0.attn_gate.weight"}, plan: true},
		{name: "qwen35 attn_q without the gates", spec: testutil.TinyQwen35(), edit: func(h *hmodel) { h.put("blk.3.attn_q.weight", quant.F32, 64, 128) }, want: bad, mention: []string{"blk.3.attn_q.weight"}, plan: true},
		{name: "qwen35 inner size not heads × state", spec: testutil.TinyQwen35(), edit: setU(".ssm.inner_size", 128), want: bad, mention: []string{"qwen35.ssm.inner_size"}, plan: true},
		{name: "qwen35 key heads not dividing the value heads", spec: testutil.TinyQwen35(), edit: setU(".ssm.group_count", 3), want: bad, mention: []string{"qwen35.ssm.group_count"}, plan: true},
		{name: "qwen35 conv kernel missing", spec: testutil.TinyQwen35(), edit: del(".ssm.conv_kernel"), want: bad, mention: []string{"qwen35.ssm.conv_kernel"}, plan: true},
		{name: "qwen35 rope sections missing", spec: testutil.TinyQwen35(), edit: del(".rope.dimension_sections"), want: bad, mention: []string{"qwen35.rope.dimension_sections"}, plan: true},
		{name: "qwen35 rope sections all 0", spec: testutil.TinyQwen35(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []int32{0, 0, 0, 0}) }, want: bad, mention: []string{"qwen35.rope.dimension_sections"}, plan: true},
		{name: "qwen35 full-attention interval 0", spec: testutil.TinyQwen35(), edit: setU(".full_attention_interval", 0), want: bad, mention: []string{"qwen35.full_attention_interval"}, plan: true},
		{name: "qwen35 recurrent layers of another count", spec: testutil.TinyQwen35(), edit: func(h *hmodel) { h.set(".attention.recurrent_layers", []bool{true, false}) }, want: bad, mention: []string{"qwen35.attention.recurrent_layers"}, plan: true},
		{name: "qwen35 recurrent layers a string", spec: testutil.TinyQwen35(), edit: func(h *hmodel) { h.set(".attention.recurrent_layers", "all") }, want: bad, mention: []string{"qwen35.attention.recurrent_layers"}, plan: true},
		{name: "qwen35 every layer recurrent", spec: testutil.TinyQwen35(), edit: func(h *hmodel) { h.set(".attention.recurrent_layers", []bool{true, true, true, true}) }, want: bad, mention: []string{"no layer attends"}, plan: true},
		{name: "qwen35 recurrent layer as attention", spec: testutil.TinyQwen35(), edit: func(h *hmodel) { h.set(".attention.recurrent_layers", []bool{false, true, true, false}) }, want: bad, mention: []string{"blk.0.attn_q.weight"}, plan: true},
		{name: "qwen35 NextN blocks leaving no layer", spec: testutil.TinyQwen35(), edit: setU(".nextn_predict_layers", 4), want: bad, mention: []string{"qwen35.nextn_predict_layers"}, plan: true},
		{name: "qwen35 with a NextN block", spec: qwen35NextN(), edit: func(*hmodel) {}},
		missing("qwen35moe shared expert's gate missing", testutil.TinyQwen35MoE(), "blk.0.ffn_gate_inp_shexp.weight"),
		misshapen("qwen35moe shared expert's gate of the wrong width", testutil.TinyQwen35MoE(), "blk.1.ffn_gate_inp_shexp.weight", 32),
		misshapen("qwen35moe shared expert's gate of two rows", testutil.TinyQwen35MoE(), "blk.3.ffn_gate_inp_shexp.weight", 64, 2),
		{name: "qwen35moe shared expert's gate of one row, 2-D", spec: testutil.TinyQwen35MoE(), edit: func(h *hmodel) { h.put("blk.2.ffn_gate_inp_shexp.weight", quant.F32, 64, 1) }},
		missing("qwen35moe shared expert missing", testutil.TinyQwen35MoE(), "blk.3.ffn_down_shexp.weight"),
		missing("qwen3next ssm_ba missing", testutil.TinyQwen3Next(), "blk.1.ssm_ba.weight"),
		misshapen("qwen3next ssm_ba of one value head's width", testutil.TinyQwen3Next(), "blk.0.ssm_ba.weight", 64, 4),
		misshapen("qwen3next ssm_in without z", testutil.TinyQwen3NextSSMIn(), "blk.2.ssm_in.weight", 64, 128),
		missing("qwen3next attn_gate missing beside attn_qkv", testutil.TinyQwen3Next(), "blk.0.attn_gate.weight"),
		{name: "qwen3next with qwen35's ssm_beta and ssm_alpha", spec: testutil.TinyQwen3Next(), edit: func(h *hmodel) {
			h.drop("blk.1.ssm_ba.weight")
			h.put("blk.1.ssm_beta.weight", quant.F32, 64, 4)
			h.put("blk.1.ssm_alpha.weight", quant.F32, 64, 4)
		}, want: bad, mention: []string{"blk.1.ssm_ba.weight"}, plan: true},
		{name: "qwen3next without experts", spec: testutil.TinyQwen3Next(), edit: setU(".expert_count", 0), want: bad, mention: []string{"qwen3next.expert_count"}, plan: true},
		{name: "qwen3next key heads not dividing the value heads", spec: testutil.TinyQwen3Next(), edit: setU(".ssm.group_count", 3), want: bad, mention: []string{"qwen3next.ssm.group_count"}, plan: true},
		missing("qwen3next shared expert's gate missing", testutil.TinyQwen3Next(), "blk.3.ffn_gate_inp_shexp.weight"),
		misshapen("qwen35moe fused gate and up of one expert's width", testutil.TinyQwen35MoEFused(), "blk.1.ffn_gate_up_exps.weight", 64, 32, 8),
		misshapen("qwen35moe fused gate and up of the wrong count", testutil.TinyQwen35MoEFused(), "blk.2.ffn_gate_up_exps.weight", 64, 64, 4),
		{name: "qwen35moe fused gate and up in one block, separate in another", spec: testutil.TinyQwen35MoE(), edit: func(h *hmodel) {
			h.drop("blk.2.ffn_gate_exps.weight")
			h.drop("blk.2.ffn_up_exps.weight")
			h.put("blk.2.ffn_gate_up_exps.weight", quant.F32, 64, 64, 8)
		}},
		missing("qwen35moe router missing", testutil.TinyQwen35MoE(), "blk.0.ffn_gate_inp.weight"),
		misshapen("qwen35moe experts of the wrong count", testutil.TinyQwen35MoE(), "blk.2.ffn_up_exps.weight", 64, 32, 4),
		{name: "qwen35moe dense feed-forward instead of experts", spec: testutil.TinyQwen35MoE(), edit: func(h *hmodel) {
			for _, n := range []string{"ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"} {
				h.drop("blk.1." + n + ".weight")
			}
			h.put("blk.1.ffn_gate.weight", quant.F32, 64, 128)
			h.put("blk.1.ffn_up.weight", quant.F32, 64, 128)
			h.put("blk.1.ffn_down.weight", quant.F32, 128, 64)
		}, want: bad, mention: []string{"blk.1.ffn_gate_inp.weight"}, plan: true},
		{name: "qwen35moe shared expert width 0", spec: testutil.TinyQwen35MoE(), edit: setU(".expert_shared_feed_forward_length", 0), want: bad, mention: []string{"qwen35moe.expert_shared_feed_forward_length"}, plan: true},
		// Without the key llama.cpp takes feed_forward_length (128 here),
		// which the shared expert's 64 rows then disagree with.
		{name: "qwen35moe shared expert width missing", spec: testutil.TinyQwen35MoE(), edit: del(".expert_shared_feed_forward_length"), want: bad, mention: []string{"blk.0.ffn_gate_shexp.weight"}, plan: true},
		{name: "qwen35moe more experts used than there are", spec: testutil.TinyQwen35MoE(), edit: setU(".expert_used_count", 9), want: bad, mention: []string{"qwen35moe.expert_used_count"}, plan: true},
		{name: "qwen35moe expert_count missing", spec: testutil.TinyQwen35MoE(), edit: del(".expert_count"), want: bad, mention: []string{"qwen35moe.expert_count"}, plan: true},
		{name: "qwen35moe inner size not heads × state", spec: testutil.TinyQwen35MoE(), edit: setU(".ssm.inner_size", 128), want: bad, mention: []string{"qwen35moe.ssm.inner_size"}, plan: true},
		missing("nemotron_h Mamba-2 layer without ssm_in", testutil.TinyNemotronH(), "blk.0.ssm_in.weight"),
		missing("nemotron_h Mamba-2 layer without ssm_d", testutil.TinyNemotronH(), "blk.5.ssm_d"),
		misshapen("nemotron_h ssm_in of an inner size of 2 × the width", testutil.TinyNemotronH(), "blk.2.ssm_in.weight", 64, 328),
		misshapen("nemotron_h ssm_norm of ungrouped shape", testutil.TinyNemotronH(), "blk.0.ssm_norm.weight", 96),
		missing("nemotron_h feed-forward without ffn_up", testutil.TinyNemotronH(), "blk.1.ffn_up.weight"),
		misshapen("nemotron_h ffn_down of another width than its layer's", testutil.TinyNemotronH(), "blk.4.ffn_down.weight", 96, 64),
		missing("nemotron_h attention layer without attn_k", testutil.TinyNemotronH(), "blk.3.attn_k.weight"),
		misshapen("nemotron_h attn_q of width / heads", testutil.TinyNemotronH(), "blk.6.attn_q.weight", 64, 64),
		misshapen("nemotron_h ffn_up.bias of the wrong length", testutil.TinyNemotronH(), "blk.1.ffn_up.bias", 64),
		{name: "nemotron_h with ffn_up and ffn_down biases", spec: testutil.TinyNemotronH(), edit: func(h *hmodel) {
			h.put("blk.1.ffn_up.bias", quant.F32, 128)
			h.put("blk.1.ffn_down.bias", quant.F32, 64)
		}},
		{name: "nemotron_h with attention biases", spec: testutil.TinyNemotronH(), edit: func(h *hmodel) {
			h.put("blk.3.attn_q.bias", quant.F32, 96)
			h.put("blk.3.attn_output.bias", quant.F32, 64)
		}},
		{name: "nemotron_h without the conv bias", spec: testutil.TinyNemotronH(), edit: drop("blk.0.ssm_conv1d.bias")},
		{name: "nemotron_h one feed-forward width", spec: testutil.TinyNemotronH(), edit: setU(".feed_forward_length", 128),
			want: bad, mention: []string{"nemotron_h.feed_forward_length"}, plan: true},
		{name: "nemotron_h feed-forward widths of another count", spec: testutil.TinyNemotronH(), edit: func(h *hmodel) { h.set(".feed_forward_length", []int32{0, 128}) },
			want: bad, mention: []string{"nemotron_h.feed_forward_length"}, plan: true},
		{name: "nemotron_h a Mamba-2 layer given a width", spec: testutil.TinyNemotronH(), edit: func(h *hmodel) { h.set(".feed_forward_length", []int32{128, 128, 0, 0, 128, 0, 0}) },
			want: bad, mention: []string{"blk.0.ffn_up.weight"}, plan: true},
		{name: "nemotron_h an attention layer given a width", spec: testutil.TinyNemotronH(), edit: func(h *hmodel) { h.set(".feed_forward_length", []int32{0, 128, 0, 128, 128, 0, 0}) },
			want: bad, mention: []string{"blk.3.ffn_up.weight"}, plan: true},
		{name: "nemotron_h no attention layer", spec: testutil.TinyNemotronH(), edit: func(h *hmodel) { h.set(".attention.head_count_kv", []int32{0, 0, 0, 0, 0, 0, 0}) },
			want: bad, mention: []string{"no layer attends"}, plan: true},
		{name: "nemotron_h RMS epsilon missing", spec: testutil.TinyNemotronH(), edit: del(".attention.layer_norm_rms_epsilon"),
			want: bad, mention: []string{"nemotron_h.attention.layer_norm_rms_epsilon"}, plan: true},
		{name: "nemotron_h inner size missing", spec: testutil.TinyNemotronH(), edit: del(".ssm.inner_size"),
			want: bad, mention: []string{"nemotron_h.ssm.inner_size"}, plan: true},
		{name: "nemotron_h heads not dividing the inner size", spec: testutil.TinyNemotronH(), edit: setU(".ssm.time_step_rank", 7),
			want: bad, mention: []string{"nemotron_h.ssm.time_step_rank"}, plan: true},
		{name: "nemotron_h with experts", spec: testutil.TinyNemotronH(), edit: setU(".expert_count", 8),
			want: arch, mention: []string{"nemotron_h.expert_count"}, plan: true},
		{name: "nemotron_h NaN A", spec: testutil.TinyNemotronH(), edit: func(h *hmodel) { h.tensor("blk.2.ssm_a").data = nanData(8) }},
		missing("nemotron_h_moe without the selection bias", testutil.TinyNemotronHMoE(), "blk.1.exp_probs_b.bias"),
		missing("nemotron_h_moe without the shared expert's up", testutil.TinyNemotronHMoE(), "blk.4.ffn_up_shexp.weight"),
		misshapen("nemotron_h_moe experts of another width", testutil.TinyNemotronHMoE(), "blk.1.ffn_up_exps.weight", 64, 32, 8),
		{name: "nemotron_h_moe expert width missing", spec: testutil.TinyNemotronHMoE(), edit: del(".expert_feed_forward_length"),
			want: bad, mention: []string{"nemotron_h_moe.expert_feed_forward_length"}, plan: true},
		{name: "nemotron_h_moe shared width missing", spec: testutil.TinyNemotronHMoE(), edit: del(".expert_shared_feed_forward_length"),
			want: bad, mention: []string{"nemotron_h_moe.expert_shared_feed_forward_length"}, plan: true},
		{name: "nemotron_h_moe more used than experts", spec: testutil.TinyNemotronHMoE(), edit: setU(".expert_used_count", 9),
			want: bad, mention: []string{"nemotron_h_moe.expert_used_count"}, plan: true},
		{name: "nemotron_h_moe scale NaN", spec: testutil.TinyNemotronHMoE(), edit: setF(".expert_weights_scale", nan),
			want: bad, mention: []string{"nemotron_h_moe.expert_weights_scale"}, plan: true},
		{name: "nemotron_h_moe latent experts", spec: testutil.TinyNemotronHMoE(), edit: setU(".moe_latent_size", 32),
			want: arch, mention: []string{"nemotron_h_moe.moe_latent_size"}, plan: true},
		{name: "nemotron_h_moe NextN blocks", spec: testutil.TinyNemotronHMoE(), edit: setU(".nextn_predict_layers", 1),
			want: arch, mention: []string{"nemotron_h_moe.nextn_predict_layers"}, plan: true},
		{name: "nemotron_h_moe without the weights' scale", spec: testutil.TinyNemotronHMoE(), edit: del(".expert_weights_scale")},
		// glm4moe: the attention biases, the selection bias and the shared
		// expert are required (llama.cpp's loader); the Q/K norms optional,
		// as a pair; the NextN block (blk.3) must hold an ordinary block's
		// tensors and its own required ones, by name: its shapes are not
		// checked and its optional ones may be missing, as llama.cpp skips
		// it unread.
		missing("glm4moe selection bias missing", testutil.TinyGLM4MoE(), "blk.1.exp_probs_b.bias"),
		missing("glm4moe attn_k.bias missing", testutil.TinyGLM4MoE(), "blk.2.attn_k.bias"),
		missing("glm4moe shared expert missing", testutil.TinyGLM4MoE(), "blk.2.ffn_up_shexp.weight"),
		missing("glm4moe attn_k_norm without attn_q_norm", testutil.TinyGLM4MoE(), "blk.1.attn_q_norm.weight"),
		misshapen("glm4moe attn_q_norm of half a head", testutil.TinyGLM4MoE(), "blk.1.attn_q_norm.weight", 16),
		{name: "glm4moe without Q/K norms", spec: testutil.TinyGLM4MoE(), edit: func(h *hmodel) {
			for il := range 4 {
				h.drop(fmt.Sprintf("blk.%d.attn_q_norm.weight", il))
				h.drop(fmt.Sprintf("blk.%d.attn_k_norm.weight", il))
			}
		}},
		missing("glm4moe NextN projection missing", testutil.TinyGLM4MoE(), "blk.3.nextn.eh_proj.weight"),
		missing("glm4moe NextN experts missing", testutil.TinyGLM4MoE(), "blk.3.ffn_down_exps.weight"),
		{name: "glm4moe NextN projection misshapen", spec: testutil.TinyGLM4MoE(), edit: func(h *hmodel) { h.put("blk.3.nextn.eh_proj.weight", quant.F32, 7) }},
		{name: "glm4moe NextN without its shared head norm", spec: testutil.TinyGLM4MoE(), edit: drop("blk.3.nextn.shared_head_norm.weight")},
		{name: "glm4moe NextN blocks leaving no layer", spec: testutil.TinyGLM4MoE(), edit: setU(".nextn_predict_layers", 4),
			want: bad, mention: []string{"glm4moe.nextn_predict_layers"}, plan: true},
		{name: "glm4moe two NextN blocks, one without NextN tensors", spec: testutil.TinyGLM4MoE(), edit: setU(".nextn_predict_layers", 2),
			want: bad, mention: []string{"blk.2.nextn.eh_proj.weight"}, plan: true},
		{name: "glm4moe expert groups not dividing", spec: testutil.TinyGLM4MoE(), edit: func(h *hmodel) {
			h.set(".expert_group_count", uint32(3))
			h.set(".expert_group_used_count", uint32(2))
		}, want: bad, mention: []string{"glm4moe.expert_group_count"}, plan: true},
		{name: "glm4moe shared count missing", spec: testutil.TinyGLM4MoE(), edit: del(".expert_shared_count"),
			want: bad, mention: []string{"glm4moe.expert_shared_count"}, plan: true},
		{name: "glm4moe scale missing", spec: testutil.TinyGLM4MoE(), edit: del(".expert_weights_scale"),
			want: bad, mention: []string{"glm4moe.expert_weights_scale"}, plan: true},
		{name: "glm4moe gating unknown", spec: testutil.TinyGLM4MoE(), edit: setU(".expert_gating_func", 9),
			want: arch, mention: []string{"glm4moe.expert_gating_func"}, plan: true},
		{name: "glm4moe multimodal RoPE", spec: testutil.TinyGLM4MoE(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []int32{4, 2, 2, 0}) },
			want: arch, mention: []string{"glm4moe.rope.dimension_sections"}, plan: true},
		// bailingmoe2: attn_qkv alone (never the separate projections),
		// the Q/K norms required, the selection bias optional but of the
		// experts' count; the NextN block's layer_output_norm required;
		// no attention output bias (llama.cpp's loader takes none).
		missing("bailingmoe2 attn_qkv missing", testutil.TinyBailingMoE2(), "blk.1.attn_qkv.weight"),
		{name: "bailingmoe2 separate Q/K/V", spec: testutil.TinyBailingMoE2(), edit: func(h *hmodel) {
			h.drop("blk.1.attn_qkv.weight")
			h.put("blk.1.attn_q.weight", quant.F32, 64, 64)
			h.put("blk.1.attn_k.weight", quant.F32, 64, 32)
			h.put("blk.1.attn_v.weight", quant.F32, 64, 32)
		}, want: bad, mention: []string{"blk.1.attn_qkv.weight"}, plan: true},
		missing("bailingmoe2 attn_k_norm missing", testutil.TinyBailingMoE2(), "blk.2.attn_k_norm.weight"),
		{name: "bailingmoe2 without its selection bias", spec: testutil.TinyBailingMoE2(), edit: drop("blk.1.exp_probs_b.bias")},
		misshapen("bailingmoe2 exp_probs_b.bias one short", testutil.TinyBailingMoE2(), "blk.2.exp_probs_b.bias", 7),
		misshapen("bailingmoe2 shared expert of the experts' width", testutil.TinyBailingMoE2(), "blk.1.ffn_gate_shexp.weight", 64, 32),
		missing("bailingmoe2 NextN layer_output_norm missing", testutil.TinyBailingMoE2(), "blk.3.layer_output_norm.weight"),
		missing("bailingmoe2 NextN hnorm missing", testutil.TinyBailingMoE2(), "blk.3.nextn.hnorm.weight"),
		missing("bailingmoe2 output missing (never tied)", testutil.TinyBailingMoE2(), "output.weight"),
		{name: "bailingmoe2 attn_output.bias", spec: testutil.TinyBailingMoE2(), edit: func(h *hmodel) { h.put("blk.1.attn_output.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.1.attn_output.bias"}, plan: true},
		{name: "bailingmoe2 every group used", spec: testutil.TinyBailingMoE2(), edit: setU(".expert_group_used_count", 4),
			want: bad, mention: []string{"bailingmoe2.expert_group_used_count"}, plan: true},
		{name: "bailingmoe2 shared width missing", spec: testutil.TinyBailingMoE2(), edit: del(".expert_shared_feed_forward_length"),
			want: bad, mention: []string{"bailingmoe2.expert_shared_feed_forward_length"}, plan: true},
		{name: "bailingmoe2 gating missing", spec: testutil.TinyBailingMoE2(), edit: del(".expert_gating_func"),
			want: bad, mention: []string{"bailingmoe2.expert_gating_func"}, plan: true},
		// llama.cpp sizes granitemoe's experts by feed_forward_length, and
		// its converter writes no expert_feed_forward_length.
		{name: "granitemoe without expert_feed_forward_length", spec: testutil.TinyGraniteMoE(), edit: del(".expert_feed_forward_length")},
		{name: "granitemoe feed_forward_length missing", spec: testutil.TinyGraniteMoE(), edit: del(".feed_forward_length"),
			want: bad, mention: []string{"granitemoe.feed_forward_length"}, plan: true},
		{name: "granitemoe expert_count missing", spec: testutil.TinyGraniteMoE(), edit: del(".expert_count"),
			want: bad, mention: []string{"granitemoe.expert_count"}, plan: true},
		{name: "olmoe expert_used_count 0", spec: testutil.TinyOLMoE(), edit: setU(".expert_used_count", 0),
			want: bad, mention: []string{"olmoe.expert_used_count = 0"}, plan: true},
		{name: "olmoe feed_forward_length missing", spec: testutil.TinyOLMoE(), edit: del(".feed_forward_length"),
			want: bad, mention: []string{"olmoe.feed_forward_length"}, plan: true},
		{name: "olmoe without expert_feed_forward_length", spec: testutil.TinyOLMoE(), edit: del(".expert_feed_forward_length")},
		missing("olmoe output missing (never tied)", testutil.TinyOLMoE(), "output.weight"),
		missing("olmoe without attn_k_norm", testutil.TinyOLMoE(), "blk.1.attn_k_norm.weight"),
		misshapen("olmoe attn_q_norm of a head's width", testutil.TinyOLMoE(), "blk.0.attn_q_norm.weight", 16),
		missing("olmoe without ffn_gate_inp", testutil.TinyOLMoE(), "blk.0.ffn_gate_inp.weight"),
		{name: "gemma-embedding sliding_window missing", spec: testutil.TinyGemmaEmbedding(), edit: del(".attention.sliding_window"),
			want: bad, mention: []string{"gemma-embedding.attention.sliding_window"}, plan: true},
		{name: "gemma-embedding pooling_type missing", spec: testutil.TinyGemmaEmbedding(), edit: del(".pooling_type"),
			want: bad, mention: []string{"gemma-embedding.pooling_type"}, plan: true},
		{name: "gemma-embedding dense_3 missing", spec: testutil.TinyGemmaEmbedding(), edit: drop("dense_3.weight"), want: bad, mention: []string{"dense_3.weight"}},
		{name: "gemma-embedding dense_3 of the wrong shape", spec: testutil.TinyGemmaEmbedding(), edit: func(h *hmodel) { h.put("dense_3.weight", quant.F32, 96, 32) },
			want: bad, mention: []string{"dense_3.weight"}},
		{name: "gemma-embedding without dense", spec: testutil.TinyGemmaEmbedding(), edit: func(h *hmodel) {
			h.drop("dense_2.weight")
			h.drop("dense_3.weight")
		}},
		{name: "gemma-embedding dense_2_feat_out disagrees", spec: testutil.TinyGemmaEmbedding(), edit: func(h *hmodel) { h.set(".dense_2_feat_out", uint32(95)) },
			want: bad, mention: []string{"gemma-embedding.dense_2_feat_out"}},
		{name: "qwen2 bias missing", spec: testutil.TinyQwen2(), edit: drop("blk.1.attn_k.bias"), want: bad, mention: []string{"blk.1.attn_k.bias"}, plan: true},
		// ernie4_5's Q/K/V biases are optional one by one (llama.cpp's
		// TENSOR_NOT_REQUIRED), but one present must fit; an output bias,
		// which llama.cpp loads and its graph never adds, is refused.
		{name: "ernie4_5 without a bias", spec: testutil.TinyErnie45(), edit: drop("blk.1.attn_k.bias")},
		misshapen("ernie4_5 attn_q.bias of the embedding's width", testutil.TinyErnie45(), "blk.0.attn_q.bias", 64),
		misshapen("ernie4_5 attn_v.bias 2-D", testutil.TinyErnie45(), "blk.1.attn_v.bias", 32, 2),
		{name: "ernie4_5 attn_output.bias", spec: testutil.TinyErnie45(), edit: func(h *hmodel) { h.put("blk.0.attn_output.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.0.attn_output.bias"}, plan: true},
		// seed_oss: its norm before the feed-forward is post_attention_norm
		// (required; an ffn_norm does not stand in for it); biases as
		// ernie4_5's.
		{name: "seed_oss post_attention_norm missing", spec: testutil.TinySeedOSS(), edit: func(h *hmodel) {
			h.drop("blk.1.post_attention_norm.weight")
			h.put("blk.1.ffn_norm.weight", quant.F32, 64)
		}, want: bad, mention: []string{"blk.1.post_attention_norm.weight"}, plan: true},
		{name: "seed_oss without its biases", spec: testutil.TinySeedOSS(), edit: func(h *hmodel) {
			for _, b := range []string{"attn_q.bias", "attn_k.bias", "attn_v.bias"} {
				h.drop("blk.0." + b)
			}
		}},
		// exaone4: its norms after attention and the feed-forward and its
		// per-head Q/K norms are required; the 32B's window, when stated,
		// must be a window.
		missing("exaone4 post_ffw_norm missing", testutil.TinyExaone4(), "blk.1.post_ffw_norm.weight"),
		missing("exaone4 attn_k_norm missing", testutil.TinyExaone4(), "blk.0.attn_k_norm.weight"),
		misshapen("exaone4 attn_q_norm across all heads", testutil.TinyExaone4(), "blk.0.attn_q_norm.weight", 64),
		{name: "exaone4 64 layers without a window", spec: testutil.TinyExaone4SWA(), edit: setU(".attention.sliding_window", 0),
			want: bad, mention: []string{"exaone4.attention.sliding_window"}, plan: true},
		{name: "exaone4 30 layers' window ignored", spec: testutil.TinyExaone4(), edit: setU(".attention.sliding_window", 0)},
		misshapen("seed_oss attn_k.bias of the query's width", testutil.TinySeedOSS(), "blk.1.attn_k.bias", 128),
		// ernie4_5-moe: the selection bias is optional (llama.cpp's
		// TENSOR_NOT_REQUIRED) but must fit; the shared expert is required
		// when its width is set, the experts' gate always (llama.cpp would
		// run a file without it as SiLU of up alone); layer 0 is dense;
		// experts on every step-th layer only are not run; an output bias,
		// which llama.cpp never adds, is refused as ernie4_5's.
		{name: "ernie4_5-moe without its selection bias", spec: testutil.TinyErnie45MoE(), edit: drop("blk.1.exp_probs_b.bias")},
		misshapen("ernie4_5-moe exp_probs_b.bias one short", testutil.TinyErnie45MoE(), "blk.2.exp_probs_b.bias", 7),
		missing("ernie4_5-moe shared expert missing", testutil.TinyErnie45MoE(), "blk.2.ffn_down_shexp.weight"),
		missing("ernie4_5-moe experts' gate missing", testutil.TinyErnie45MoE(), "blk.1.ffn_gate_exps.weight"),
		{name: "ernie4_5-moe router in the dense layer", spec: testutil.TinyErnie45MoE(), edit: func(h *hmodel) { h.put("blk.0.ffn_gate_inp.weight", quant.F32, 64, 8) },
			want: bad, mention: []string{"blk.0.ffn_gate_inp.weight"}, plan: true},
		{name: "ernie4_5-moe experts every other layer", spec: testutil.TinyErnie45MoE(), edit: setU(".interleave_moe_layer_step", 2),
			want: arch, mention: []string{"ernie4_5-moe.interleave_moe_layer_step"}, plan: true},
		{name: "ernie4_5-moe step missing", spec: testutil.TinyErnie45MoE(), edit: del(".interleave_moe_layer_step"),
			want: bad, mention: []string{"ernie4_5-moe.interleave_moe_layer_step"}, plan: true},
		{name: "ernie4_5-moe attn_output.bias", spec: testutil.TinyErnie45MoE(), edit: func(h *hmodel) { h.put("blk.1.attn_output.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.1.attn_output.bias"}, plan: true},
		// falcon-h1: every layer has both the attention and the Mamba-2
		// mixer; ffn_norm is named without .weight (llama.cpp d32676d77
		// refuses a file whose norm is ffn_norm.weight); the mixer's gated
		// norm is optional (mamba_rms_norm) and rope_freqs ignored, as
		// llama.cpp's graph passes none; an output bias, which llama.cpp
		// loads and never adds, is refused.
		missing("falcon-h1 mixer without ssm_in", testutil.TinyFalconH1(), "blk.1.ssm_in.weight"),
		missing("falcon-h1 layer without attn_k", testutil.TinyFalconH1(), "blk.2.attn_k.weight"),
		missing("falcon-h1 ffn_norm missing", testutil.TinyFalconH1(), "blk.0.ffn_norm"),
		{name: "falcon-h1 ffn_norm.weight in its place", spec: testutil.TinyFalconH1(), edit: func(h *hmodel) {
			h.drop("blk.0.ffn_norm")
			h.put("blk.0.ffn_norm.weight", quant.F32, 64)
		}, want: bad, mention: []string{"blk.0.ffn_norm"}, plan: true},
		misshapen("falcon-h1 ssm_in of a mixer twice the width", testutil.TinyFalconH1(), "blk.0.ssm_in.weight", 64, 390),
		{name: "falcon-h1 without the gated norm", spec: testutil.TinyFalconH1(), edit: drop("blk.1.ssm_norm.weight")},
		{name: "falcon-h1 rope_freqs ignored", spec: testutil.TinyFalconH1(), edit: func(h *hmodel) { h.put("rope_freqs.weight", quant.F32, 8) }},
		{name: "falcon-h1 attn_output.bias", spec: testutil.TinyFalconH1(), edit: func(h *hmodel) { h.put("blk.1.attn_output.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.1.attn_output.bias"}, plan: true},
		{name: "falcon-h1 state size missing", spec: testutil.TinyFalconH1(), edit: del(".ssm.state_size"),
			want: bad, mention: []string{"falcon-h1.ssm.state_size"}, plan: true},
		// jamba: a Mamba-1 layer's tensors are all required (its norms of
		// the time step's rank, B and C too), A holds a decay per channel
		// and state element, the inner size is twice the width, some layer
		// attends, and a router needs expert_count.
		missing("jamba Mamba layer without ssm_x", testutil.TinyJamba(), "blk.0.ssm_x.weight"),
		missing("jamba Mamba layer without ssm_b_norm", testutil.TinyJamba(), "blk.1.ssm_b_norm.weight"),
		missing("jamba Mamba layer without ssm_dt", testutil.TinyJamba(), "blk.3.ssm_dt.weight"),
		missing("jamba attention layer without attn_q", testutil.TinyJamba(), "blk.2.attn_q.weight"),
		missing("jamba dense layer without ffn_gate", testutil.TinyJamba(), "blk.0.ffn_gate.weight"),
		misshapen("jamba ssm_a of one decay a channel", testutil.TinyJamba(), "blk.0.ssm_a", 1, 128),
		misshapen("jamba ssm_x of a wider rank", testutil.TinyJamba(), "blk.1.ssm_x.weight", 128, 48),
		{name: "jamba inner size not twice the width", spec: testutil.TinyJamba(), edit: setU(".ssm.inner_size", 96),
			want: bad, mention: []string{"jamba.ssm.inner_size"}, plan: true},
		{name: "jamba time step rank missing", spec: testutil.TinyJamba(), edit: del(".ssm.time_step_rank"),
			want: bad, mention: []string{"jamba.ssm.time_step_rank"}, plan: true},
		{name: "jamba time step rank above the inner size", spec: testutil.TinyJamba(), edit: setU(".ssm.time_step_rank", 129),
			want: bad, mention: []string{"jamba.ssm.time_step_rank"}, plan: true},
		{name: "jamba with no attention layer", spec: testutil.TinyJamba(), edit: func(h *hmodel) { h.set(".attention.head_count_kv", []int32{0, 0, 0, 0}) },
			want: bad, mention: []string{"jamba.attention.head_count_kv"}, plan: true},
		{name: "jamba head_count_kv of one value", spec: testutil.TinyJamba(), edit: setU(".attention.head_count_kv", 2),
			want: bad, mention: []string{"jamba.attention.head_count_kv"}, plan: true},
		{name: "jamba router without expert_count", spec: testutil.TinyJamba(), edit: del(".expert_count"),
			want: bad, mention: []string{"blk.1.ffn_gate_inp.weight"}, plan: true},
		// mamba: every block's Mamba-1 tensors are required, D of one
		// value a channel, and the ssm.* sizes must agree with them.
		missing("mamba layer without ssm_a", testutil.TinyMamba(), "blk.2.ssm_a"),
		missing("mamba layer without ssm_conv1d.bias", testutil.TinyMamba(), "blk.0.ssm_conv1d.bias"),
		misshapen("mamba ssm_conv1d of another kernel", testutil.TinyMamba(), "blk.1.ssm_conv1d.weight", 3, 128),
		misshapen("mamba ssm_d of one value", testutil.TinyMamba(), "blk.1.ssm_d", 1),
		{name: "mamba state size missing", spec: testutil.TinyMamba(), edit: del(".ssm.state_size"),
			want: bad, mention: []string{"mamba.ssm.state_size"}, plan: true},
		{name: "mamba state size of another file", spec: testutil.TinyMamba(), edit: setU(".ssm.state_size", 8),
			want: bad, mention: []string{"blk.0.ssm_x.weight"}, plan: true},
		{name: "mamba kernel huge", spec: testutil.TinyMamba(), edit: setU(".ssm.conv_kernel", 1<<20),
			want: bad, mention: []string{"mamba.ssm.conv_kernel"}, plan: true},
		// rwkv7: every LoRA tensor, norm bias and the ends' norms are
		// required; the ranks and the head size must agree with the
		// tensors and the width; token_shift_count is 2.
		missing("rwkv7 layer without time_mix_w1", testutil.TinyRWKV7(), "blk.1.time_mix_w1.weight"),
		missing("rwkv7 layer without time_mix_a2", testutil.TinyRWKV7(), "blk.2.time_mix_a2.weight"),
		missing("rwkv7 layer without time_mix_v2", testutil.TinyRWKV7(), "blk.1.time_mix_v2.weight"),
		missing("rwkv7 layer without time_mix_g1", testutil.TinyRWKV7(), "blk.0.time_mix_g1.weight"),
		missing("rwkv7 layer without the group norm's bias", testutil.TinyRWKV7(), "blk.0.time_mix_ln.bias"),
		missing("rwkv7 without token_embd_norm", testutil.TinyRWKV7(), "token_embd_norm.weight"),
		missing("rwkv7 without output_norm.bias", testutil.TinyRWKV7(), "output_norm.bias"),
		missing("rwkv7 without an output matrix", testutil.TinyRWKV7(), "output.weight"),
		misshapen("rwkv7 lerp_fused of five mixes", testutil.TinyRWKV7(), "blk.1.time_mix_lerp_fused.weight", 128, 1, 1, 5),
		misshapen("rwkv7 layer 0 value pair at the value rank", testutil.TinyRWKV7(), "blk.0.time_mix_v1.weight", 128, 96),
		{name: "rwkv7 decay rank of another file", spec: testutil.TinyRWKV7(), edit: setU(".attention.decay_lora_rank", 64),
			want: bad, mention: []string{"blk.0.time_mix_w1.weight"}, plan: true},
		{name: "rwkv7 gate rank missing", spec: testutil.TinyRWKV7(), edit: del(".attention.gate_lora_rank"),
			want: bad, mention: []string{"rwkv7.attention.gate_lora_rank"}, plan: true},
		{name: "rwkv7 rank wider than the model", spec: testutil.TinyRWKV7(), edit: setU(".attention.iclr_lora_rank", 256),
			want: bad, mention: []string{"rwkv7.attention.iclr_lora_rank"}, plan: true},
		{name: "rwkv7 head size not dividing the width", spec: testutil.TinyRWKV7(), edit: setU(".wkv.head_size", 48),
			want: bad, mention: []string{"rwkv7.wkv.head_size"}, plan: true},
		{name: "rwkv7 head size 0", spec: testutil.TinyRWKV7(), edit: setU(".wkv.head_size", 0),
			want: bad, mention: []string{"rwkv7.wkv.head_size"}, plan: true},
		{name: "rwkv7 three token shifts", spec: testutil.TinyRWKV7(), edit: setU(".token_shift_count", 3),
			want: bad, mention: []string{"rwkv7.token_shift_count"}, plan: true},
		// smallthinker: every layer's router and experts are required (no
		// dense feed-forward, no shared expert), and so is the gating
		// function (llama.cpp's graph aborts without one); a window of 0
		// is none, and a missing output matrix is the tied embedding, as
		// llama.cpp loads them.
		missing("smallthinker router missing", testutil.TinySmallThinker(), "blk.3.ffn_gate_inp.weight"),
		missing("smallthinker experts' gate missing", testutil.TinySmallThinker(), "blk.0.ffn_gate_exps.weight"),
		misshapen("smallthinker router one expert short", testutil.TinySmallThinker(), "blk.1.ffn_gate_inp.weight", 64, 7),
		misshapen("smallthinker experts' up of another width", testutil.TinySmallThinker(), "blk.2.ffn_up_exps.weight", 64, 16, 8),
		{name: "smallthinker gating function missing", spec: testutil.TinySmallThinker(), edit: del(".expert_gating_func"),
			want: bad, mention: []string{"smallthinker.expert_gating_func"}, plan: true},
		{name: "smallthinker gating function none", spec: testutil.TinySmallThinker(), edit: setU(".expert_gating_func", 0),
			want: arch, mention: []string{"smallthinker.expert_gating_func"}, plan: true},
		{name: "smallthinker window as text", spec: testutil.TinySmallThinkerSWA(), edit: func(h *hmodel) { h.set(".attention.sliding_window", "wide") },
			want: bad, mention: []string{"smallthinker.attention.sliding_window"}, plan: true},
		{name: "smallthinker window 0", spec: testutil.TinySmallThinkerSWA(), edit: setU(".attention.sliding_window", 0)},
		{name: "smallthinker output tied", spec: testutil.TinySmallThinkerSWA(), edit: drop("output.weight")},
		{name: "smallthinker values of another head size", spec: testutil.TinySmallThinker(), edit: setU(".attention.value_length", 8),
			want: bad, mention: []string{"smallthinker.attention.value_length"}, plan: true},
		// glm4: the norms after attention and the feed-forward are
		// required, ffn_up holds the gate and the up rows, the biases are
		// optional (separate or fused, as the projections are) but must
		// fit, a separate bias beside attn_qkv is not glm4's; the query
		// must be as wide as the embedding (llama.cpp sizes attn_output
		// and the fused views by it); multimodal RoPE is GLM-4.1V's.
		missing("glm4 post_attention_norm missing", testutil.TinyGLM4(), "blk.0.post_attention_norm.weight"),
		missing("glm4 post_ffw_norm missing", testutil.TinyGLM4(), "blk.1.post_ffw_norm.weight"),
		misshapen("glm4 ffn_up without the up rows", testutil.TinyGLM4(), "blk.0.ffn_up.weight", 64, 128),
		misshapen("glm4 attn_qkv.bias without the value's", testutil.TinyGLM4Fused(), "blk.1.attn_qkv.bias", 96),
		misshapen("glm4 attn_v.bias of the query's width", testutil.TinyGLM4(), "blk.1.attn_v.bias", 64),
		{name: "glm4 without its biases", spec: testutil.TinyGLM4(), edit: func(h *hmodel) {
			for _, b := range []string{"attn_q.bias", "attn_k.bias", "attn_v.bias"} {
				h.drop("blk.1." + b)
			}
		}},
		{name: "glm4 fused without its bias", spec: testutil.TinyGLM4Fused(), edit: drop("blk.0.attn_qkv.bias")},
		{name: "glm4 fused with a separate bias", spec: testutil.TinyGLM4Fused(), edit: func(h *hmodel) { h.put("blk.0.attn_q.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.0.attn_q.bias"}, plan: true},
		{name: "glm4 query narrower than the embedding", spec: testutil.TinyGLM4(), edit: func(h *hmodel) {
			h.set(".attention.key_length", uint32(8))
			h.set(".attention.value_length", uint32(8))
		}, want: bad, mention: []string{"glm4.embedding_length"}, plan: true},
		{name: "glm4 multimodal RoPE", spec: testutil.TinyGLM4(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []int32{2, 1, 1, 0}) },
			want: arch, mention: []string{"glm4.rope.dimension_sections"}, plan: true},
		// Qwen's vision-language text models: rope.dimension_sections as
		// llama.cpp's get_key_or_arr reads it (4 int32/uint32 counts or one
		// int32) and ggml's rope asserts it (a temporal, height or width
		// pair; no more than the head's dims); the whole head rotated, as
		// the graphs assert.
		{name: "qwen3vl rope sections missing", spec: testutil.TinyQwen3VL(), edit: del(".rope.dimension_sections"), want: bad, mention: []string{"qwen3vl.rope.dimension_sections"}, plan: true},
		{name: "qwen3vl three rope sections", spec: testutil.TinyQwen3VL(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []int32{8, 4, 4}) }, want: bad, mention: []string{"qwen3vl.rope.dimension_sections"}, plan: true},
		{name: "qwen3vl five rope sections", spec: testutil.TinyQwen3VL(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []int32{8, 4, 4, 0, 0}) }, want: bad, mention: []string{"qwen3vl.rope.dimension_sections"}, plan: true},
		{name: "qwen3vl rope sections past the head", spec: testutil.TinyQwen3VL(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []int32{16, 10, 10, 0}) }, want: bad, mention: []string{"qwen3vl.rope.dimension_sections"}, plan: true},
		{name: "qwen3vl rope sections extra only", spec: testutil.TinyQwen3VL(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []int32{0, 0, 0, 16}) }, want: bad, mention: []string{"qwen3vl.rope.dimension_sections"}, plan: true},
		{name: "qwen3vl rope section negative", spec: testutil.TinyQwen3VL(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []int32{-1, 9, 8, 0}) }, want: bad, mention: []string{"qwen3vl.rope.dimension_sections[0]"}, plan: true},
		{name: "qwen3vl rope section huge uint32", spec: testutil.TinyQwen3VL(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []uint32{8, 4, 4, math.MaxUint32}) }, want: bad, mention: []string{"qwen3vl.rope.dimension_sections[3]"}, plan: true},
		{name: "qwen3vl rope sections floats", spec: testutil.TinyQwen3VL(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []float32{8, 4, 4, 0}) }, want: bad, mention: []string{"qwen3vl.rope.dimension_sections"}, plan: true},
		{name: "qwen3vl rope sections one uint32", spec: testutil.TinyQwen3VL(), edit: setU(".rope.dimension_sections", 4), want: bad, mention: []string{"qwen3vl.rope.dimension_sections"}, plan: true},
		{name: "qwen3vl rope sections one int32", spec: testutil.TinyQwen3VL(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", int32(4)) }},
		{name: "qwen3vl rope sections uint32", spec: testutil.TinyQwen3VL(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []uint32{8, 4, 4, 0}) }},
		{name: "qwen3vl rope sections short of the pairs", spec: testutil.TinyQwen3VL(), edit: func(h *hmodel) { h.set(".rope.dimension_sections", []int32{2, 1, 1, 0}) }},
		{name: "qwen3vl half the head rotated", spec: testutil.TinyQwen3VL(), edit: setU(".rope.dimension_count", 16), want: bad, mention: []string{"qwen3vl.rope.dimension_count"}, plan: true},
		{name: "qwen3vl deepstack layers a string", spec: testutil.TinyQwen3VL(), edit: func(h *hmodel) { h.set(".n_deepstack_layers", "3") }, want: bad, mention: []string{"qwen3vl.n_deepstack_layers"}, plan: true},
		{name: "qwen3vl without deepstack layers", spec: testutil.TinyQwen3VL(), edit: del(".n_deepstack_layers")},
		{name: "qwen3vl deepstack in every layer", spec: testutil.TinyQwen3VL(), edit: setU(".n_deepstack_layers", 2), want: bad, mention: []string{"qwen3vl.n_deepstack_layers"}, plan: true},
		{name: "qwen3vlmoe deepstack in every layer", spec: testutil.TinyQwen3VLMoE(), edit: setU(".n_deepstack_layers", 5), want: bad, mention: []string{"qwen3vlmoe.n_deepstack_layers"}, plan: true},
		missing("qwen3vl without attn_k_norm", testutil.TinyQwen3VL(), "blk.1.attn_k_norm.weight"),
		{name: "qwen3vlmoe expert count missing", spec: testutil.TinyQwen3VLMoE(), edit: del(".expert_count"), want: bad, mention: []string{"qwen3vlmoe.expert_count"}, plan: true},
		{name: "qwen3vlmoe rope sections missing", spec: testutil.TinyQwen3VLMoE(), edit: del(".rope.dimension_sections"), want: bad, mention: []string{"qwen3vlmoe.rope.dimension_sections"}, plan: true},
		misshapen("qwen3vlmoe experts of another width", testutil.TinyQwen3VLMoE(), "blk.0.ffn_up_exps.weight", 64, 64, 8),
		{name: "qwen2vl rope sections missing", spec: testutil.TinyQwen2VL(), edit: del(".rope.dimension_sections"), want: bad, mention: []string{"qwen2vl.rope.dimension_sections"}, plan: true},
		{name: "qwen2vl without its biases", spec: testutil.TinyQwen2VL(), edit: func(h *hmodel) {
			for _, b := range []string{"attn_q.bias", "attn_k.bias", "attn_v.bias"} {
				h.drop("blk.0." + b)
			}
		}},
		{name: "qwen2vl query narrower than the embedding", spec: testutil.TinyQwen2VL(), edit: func(h *hmodel) {
			h.set(".attention.key_length", uint32(8))
			h.set(".attention.value_length", uint32(8))
			h.set(".rope.dimension_count", uint32(8))
		}, want: bad, mention: []string{"qwen2vl.embedding_length"}, plan: true},
		// cohere2: its window, LayerNorm epsilon and logit scale are
		// required (llama.cpp's get_key), the scale finite; the output is
		// the embedding, and llama.cpp refuses an output.weight it would
		// not load; one norm a block, before attention and the
		// feed-forward alike.
		{name: "cohere2 sliding_window missing", spec: testutil.TinyCohere2(), edit: del(".attention.sliding_window"),
			want: bad, mention: []string{"cohere2.attention.sliding_window"}, plan: true},
		{name: "cohere2 layer_norm_epsilon missing", spec: testutil.TinyCohere2(), edit: del(".attention.layer_norm_epsilon"),
			want: bad, mention: []string{"cohere2.attention.layer_norm_epsilon"}, plan: true},
		{name: "cohere2 logit_scale missing", spec: testutil.TinyCohere2(), edit: del(".logit_scale"),
			want: bad, mention: []string{"cohere2.logit_scale"}, plan: true},
		{name: "cohere2 logit_scale infinite", spec: testutil.TinyCohere2(), edit: setF(".logit_scale", inf),
			want: bad, mention: []string{"cohere2.logit_scale"}, plan: true},
		{name: "cohere2 with an output matrix", spec: testutil.TinyCohere2(), edit: func(h *hmodel) { h.put("output.weight", quant.F32, 64, 320) },
			want: bad, mention: []string{"output.weight"}, plan: true},
		missing("cohere2 attn_norm missing", testutil.TinyCohere2(), "blk.3.attn_norm.weight"),
		missing("cohere2 ffn_gate missing", testutil.TinyCohere2(), "blk.1.ffn_gate.weight"),
		{name: "cohere2 attn_q.bias", spec: testutil.TinyCohere2(), edit: func(h *hmodel) { h.put("blk.0.attn_q.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.0.attn_q.bias"}, plan: true},
		// arcee: up and down, no gate; a bias llama.cpp's arcee graph would
		// not add is refused.
		missing("arcee ffn_up missing", testutil.TinyArcee(), "blk.0.ffn_up.weight"),
		misshapen("arcee ffn_down of the width of a gated block's halves", testutil.TinyArcee(), "blk.1.ffn_down.weight", 64, 64),
		{name: "arcee ffn_up.bias", spec: testutil.TinyArcee(), edit: func(h *hmodel) { h.put("blk.0.ffn_up.bias", quant.F32, 128) },
			want: arch, mention: []string{"blk.0.ffn_up.bias"}, plan: true},
		// apertus: the four xIELU keys are required, one number or one a
		// layer, finite; the per-head Q/K norms are required.
		{name: "apertus xielu.beta missing", spec: testutil.TinyApertus(), edit: del("xielu.beta"),
			want: bad, mention: []string{"xielu.beta"}, plan: true},
		{name: "apertus xielu.eps one short", spec: testutil.TinyApertus(), edit: func(h *hmodel) { h.set("xielu.eps", []float32{-1e-6}) },
			want: bad, mention: []string{"xielu.eps"}, plan: true},
		{name: "apertus xielu.alpha_p NaN", spec: testutil.TinyApertus(), edit: func(h *hmodel) { h.set("xielu.alpha_p", []float32{0.8, nan}) },
			want: bad, mention: []string{"xielu.alpha_p"}, plan: true},
		{name: "apertus xielu.alpha_n a string", spec: testutil.TinyApertus(), edit: func(h *hmodel) { h.set("xielu.alpha_n", "0.8") },
			want: bad, mention: []string{"xielu.alpha_n"}, plan: true},
		{name: "apertus xielu.alpha_n one number for every layer", spec: testutil.TinyApertus(), edit: setF("xielu.alpha_n", 0.8)},
		missing("apertus attn_k_norm missing", testutil.TinyApertus(), "blk.1.attn_k_norm.weight"),
		{name: "apertus attn_q.bias", spec: testutil.TinyApertus(), edit: func(h *hmodel) { h.put("blk.0.attn_q.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.0.attn_q.bias"}, plan: true},
		// hunyuan-dense: per-head Q/K norms required, and per head.
		missing("hunyuan-dense attn_q_norm missing", testutil.TinyHunyuanDense(), "blk.0.attn_q_norm.weight"),
		misshapen("hunyuan-dense attn_k_norm across all heads", testutil.TinyHunyuanDense(), "blk.1.attn_k_norm.weight", 32),
		// exaone: the RMS epsilon is required, as llama.cpp's loader
		// requires it; rope_freqs, when present, has a factor a rotated
		// pair; a bias llama.cpp's exaone loader does not take is refused.
		{name: "exaone layer_norm_rms_epsilon missing", spec: testutil.TinyExaone(), edit: del(".attention.layer_norm_rms_epsilon"),
			want: bad, mention: []string{"exaone.attention.layer_norm_rms_epsilon"}, plan: true},
		misshapen("exaone rope_freqs a factor short", testutil.TinyExaone(), "rope_freqs.weight", 7),
		{name: "exaone attn_q.bias", spec: testutil.TinyExaone(), edit: func(h *hmodel) { h.put("blk.0.attn_q.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.0.attn_q.bias"}, plan: true},
		// starcoder2: every bias and the LayerNorm epsilon are required,
		// as llama.cpp's loader requires them.
		{name: "starcoder2 layer_norm_epsilon missing", spec: testutil.TinyStarCoder2(), edit: del(".attention.layer_norm_epsilon"),
			want: bad, mention: []string{"starcoder2.attention.layer_norm_epsilon"}, plan: true},
		missing("starcoder2 attn_norm.bias missing", testutil.TinyStarCoder2(), "blk.1.attn_norm.bias"),
		missing("starcoder2 ffn_norm.bias missing", testutil.TinyStarCoder2(), "blk.0.ffn_norm.bias"),
		missing("starcoder2 output_norm.bias missing", testutil.TinyStarCoder2(), "output_norm.bias"),
		missing("starcoder2 attn_v.bias missing", testutil.TinyStarCoder2(), "blk.0.attn_v.bias"),
		missing("starcoder2 attn_output.bias missing", testutil.TinyStarCoder2(), "blk.1.attn_output.bias"),
		missing("starcoder2 ffn_up.bias missing", testutil.TinyStarCoder2(), "blk.0.ffn_up.bias"),
		misshapen("starcoder2 ffn_down.bias of the feed-forward's width", testutil.TinyStarCoder2(), "blk.1.ffn_down.bias", 128),
		// gemma: the output is the embedding, always; the RMS epsilon is
		// required; no gate-less block.
		{name: "gemma with an output matrix", spec: testutil.TinyGemma(), edit: func(h *hmodel) { h.put("output.weight", quant.F32, 64, 320) },
			want: bad, mention: []string{"output.weight"}, plan: true},
		{name: "gemma layer_norm_rms_epsilon missing", spec: testutil.TinyGemma(), edit: del(".attention.layer_norm_rms_epsilon"),
			want: bad, mention: []string{"gemma.attention.layer_norm_rms_epsilon"}, plan: true},
		missing("gemma ffn_gate missing", testutil.TinyGemma(), "blk.1.ffn_gate.weight"),
		misshapen("gemma attn_q of width/heads heads", testutil.TinyGemma(), "blk.0.attn_q.weight", 64, 64),
		// nemotron: the output matrix, the LayerNorms' biases and the
		// epsilon are required; the projections' biases are optional, but
		// of their projection's width.
		missing("nemotron output missing", testutil.TinyNemotron(), "output.weight"),
		missing("nemotron ffn_norm.bias missing", testutil.TinyNemotron(), "blk.1.ffn_norm.bias"),
		{name: "nemotron layer_norm_epsilon missing", spec: testutil.TinyNemotron(), edit: del(".attention.layer_norm_epsilon"),
			want: bad, mention: []string{"nemotron.attention.layer_norm_epsilon"}, plan: true},
		misshapen("nemotron attn_k.bias of the query's width", testutil.TinyNemotron(), "blk.1.attn_k.bias", 64),
		misshapen("nemotron ffn_up.bias of the width", testutil.TinyNemotron(), "blk.1.ffn_up.bias", 64),
		{name: "nemotron rope.dimension_count odd", spec: testutil.TinyNemotron(), edit: setU(".rope.dimension_count", 7),
			want: bad, mention: []string{"nemotron.rope.dimension_count"}, plan: true},
		// afmoe: the output gate, the four norms around attention and the
		// feed-forward, the Q/K norms and the selection bias are required,
		// as llama.cpp's loader requires them, and so are the RMS epsilon,
		// leading_dense_block_count and expert_shared_count (0: no shared
		// expert); expert_gating_func 0
		// (none) is sigmoid; a window of 0 is none, and a missing output
		// matrix the tied embedding.
		missing("afmoe attn_gate missing", testutil.TinyAfmoe(), "blk.2.attn_gate.weight"),
		misshapen("afmoe attn_gate a head short", testutil.TinyAfmoe(), "blk.1.attn_gate.weight", 64, 48),
		missing("afmoe post_attention_norm missing", testutil.TinyAfmoe(), "blk.0.post_attention_norm.weight"),
		missing("afmoe post_ffw_norm missing", testutil.TinyAfmoe(), "blk.3.post_ffw_norm.weight"),
		missing("afmoe ffn_norm missing", testutil.TinyAfmoe(), "blk.1.ffn_norm.weight"),
		missing("afmoe attn_k_norm missing", testutil.TinyAfmoe(), "blk.3.attn_k_norm.weight"),
		missing("afmoe selection bias missing", testutil.TinyAfmoe(), "blk.1.exp_probs_b.bias"),
		missing("afmoe shared expert missing", testutil.TinyAfmoe(), "blk.2.ffn_down_shexp.weight"),
		missing("afmoe dense layer's gate missing", testutil.TinyAfmoe(), "blk.0.ffn_gate.weight"),
		{name: "afmoe layer_norm_rms_epsilon missing", spec: testutil.TinyAfmoe(), edit: del(".attention.layer_norm_rms_epsilon"),
			want: bad, mention: []string{"afmoe.attention.layer_norm_rms_epsilon"}, plan: true},
		{name: "afmoe leading_dense_block_count missing", spec: testutil.TinyAfmoe(), edit: del(".leading_dense_block_count"),
			want: bad, mention: []string{"afmoe.leading_dense_block_count"}, plan: true},
		{name: "afmoe leading_dense_block_count past the layers", spec: testutil.TinyAfmoe(), edit: setU(".leading_dense_block_count", 5),
			want: bad, mention: []string{"afmoe.leading_dense_block_count"}, plan: true},
		{name: "afmoe two dense layers of one", spec: testutil.TinyAfmoe(), edit: setU(".leading_dense_block_count", 2),
			want: bad, mention: []string{"leading_dense_block_count = 2"}, plan: true},
		{name: "afmoe expert_shared_count missing", spec: testutil.TinyAfmoe(), edit: del(".expert_shared_count"),
			want: bad, mention: []string{"afmoe.expert_shared_count"}, plan: true},
		{name: "afmoe expert_shared_count 0, no shared experts", spec: testutil.TinyAfmoe(), edit: func(h *hmodel) {
			h.set(".expert_shared_count", uint32(0))
			for il := 1; il < 4; il++ {
				for _, m := range []string{"gate", "up", "down"} {
					h.drop(fmt.Sprintf("blk.%d.ffn_%s_shexp.weight", il, m))
				}
			}
		}},
		{name: "afmoe gating function none", spec: testutil.TinyAfmoe(), edit: setU(".expert_gating_func", 0)},
		{name: "afmoe gating function softmax", spec: testutil.TinyAfmoe(), edit: setU(".expert_gating_func", 1)},
		{name: "afmoe gating function unknown", spec: testutil.TinyAfmoe(), edit: setU(".expert_gating_func", 9),
			want: arch, mention: []string{"afmoe.expert_gating_func = 9"}, plan: true},
		{name: "afmoe values of another head size", spec: testutil.TinyAfmoe(), edit: setU(".attention.value_length", 8),
			want: bad, mention: []string{"afmoe.attention.value_length"}, plan: true},
		{name: "afmoe window as text", spec: testutil.TinyAfmoe(), edit: func(h *hmodel) { h.set(".attention.sliding_window", "wide") },
			want: bad, mention: []string{"afmoe.attention.sliding_window"}, plan: true},
		{name: "afmoe window 0", spec: testutil.TinyAfmoe(), edit: setU(".attention.sliding_window", 0)},
		{name: "afmoe output tied", spec: testutil.TinyAfmoe(), edit: drop("output.weight")},
		{name: "afmoe attn_q.bias", spec: testutil.TinyAfmoe(), edit: func(h *hmodel) { h.put("blk.0.attn_q.bias", quant.F32, 64) },
			want: arch, mention: []string{"blk.0.attn_q.bias"}, plan: true},
		{name: "gemma2 softcap NaN", spec: testutil.TinyGemma2(), edit: setF(".attn_logit_softcapping", nan),
			want: bad, mention: []string{"attn_logit_softcapping"}, plan: true},
		{name: "gemma2 final softcap negative", spec: testutil.TinyGemma2(), edit: setF(".final_logit_softcapping", -30),
			want: bad, mention: []string{"final_logit_softcapping"}, plan: true},
		{name: "gemma2 sliding window huge", spec: testutil.TinyGemma2(), edit: setU(".attention.sliding_window", 1<<30),
			want: bad, mention: []string{"attention.sliding_window"}, plan: true},
		missing("gemma2 post norm missing", testutil.TinyGemma2(), "blk.0.post_ffw_norm.weight"),
		missing("bert token_embd_norm.bias missing", testutil.TinyBert(), "token_embd_norm.bias"),
		misshapen("bert position_embd shorter than the context", testutil.TinyBert(), "position_embd.weight", 64, 100),
		missing("bert position_embd missing", testutil.TinyBert(), "position_embd.weight"),
		missing("bert attn_output_norm.bias missing", testutil.TinyBert(), "blk.1.attn_output_norm.bias"),
		missing("bert layer_output_norm.weight missing", testutil.TinyBert(), "blk.0.layer_output_norm.weight"),
		misshapen("bert attn_q.bias of the wrong size", testutil.TinyBert(), "blk.0.attn_q.bias", 32),
		misshapen("bert ffn_up.bias of the wrong size", testutil.TinyBert(), "blk.1.ffn_up.bias", 64),
		{name: "bert layer_norm_epsilon missing", spec: testutil.TinyBert(), edit: del(".attention.layer_norm_epsilon"),
			want: bad, mention: []string{"bert.attention.layer_norm_epsilon"}, plan: true},
		{name: "bert causal a string", spec: testutil.TinyBert(), edit: func(h *hmodel) { h.set(".attention.causal", "no") },
			want: bad, mention: []string{"bert.attention.causal"}, plan: true},
		{name: "bert token_type_count missing", spec: testutil.TinyBert(), edit: del("tokenizer.ggml.token_type_count"),
			want: bad, mention: []string{"token_types.weight", "tokenizer.ggml.token_type_count"}, plan: true},
		misshapen("bert token_types of the wrong count", testutil.TinyBert(), "token_types.weight", 64, 3),
		// llama.cpp takes the biases as optional: without them (as without
		// token_types) the model loads and embeds.
		{name: "bert without biases or token types", spec: testutil.TinyBert(), edit: func(h *hmodel) {
			for _, n := range []string{"attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_output.bias", "ffn_up.bias", "ffn_down.bias"} {
				h.drop("blk.0." + n)
			}
			h.drop("token_types.weight")
		}},
		missing("nomic-bert ffn_gate missing", testutil.TinyNomicBert(), "blk.1.ffn_gate.weight"),
		{name: "nomic-bert attn_qkv narrow", spec: testutil.TinyNomicBert(), edit: func(h *hmodel) { h.put("blk.0.attn_qkv.weight", quant.Q8_0, 64, 128) },
			want: bad, mention: []string{"blk.0.attn_qkv.weight"}, plan: true},
		{name: "nomic-bert pooling_type missing", spec: testutil.TinyNomicBert(), edit: del(".pooling_type"),
			want: bad, mention: []string{"nomic-bert.pooling_type"}, plan: true},
		// modern-bert: LayerNorms, block 0 without attn_norm.
		{name: "modern-bert layer_norm_epsilon missing", spec: testutil.TinyModernBert(), edit: del(".attention.layer_norm_epsilon"),
			want: bad, mention: []string{"modern-bert.attention.layer_norm_epsilon"}, plan: true},
		{name: "modern-bert causal missing", spec: testutil.TinyModernBert(), edit: del(".attention.causal"),
			want: bad, mention: []string{"modern-bert.attention.causal"}, plan: true},
		{name: "modern-bert sliding_window_pattern of the wrong length", spec: testutil.TinyModernBert(), edit: func(h *hmodel) { h.set(".attention.sliding_window_pattern", []bool{true, false}) },
			want: bad, mention: []string{"modern-bert.attention.sliding_window_pattern"}, plan: true},
		missing("modern-bert token_embd_norm missing", testutil.TinyModernBert(), "token_embd_norm.weight"),
		missing("modern-bert attn_norm missing", testutil.TinyModernBert(), "blk.1.attn_norm.weight"),
		misshapen("modern-bert ffn_up not fused", testutil.TinyModernBert(), "blk.2.ffn_up.weight", 64, 128),
		// nomic-bert-moe: experts on the layers il mod moe_every_n_layers = 1.
		{name: "nomic-bert-moe expert_used_count missing", spec: testutil.TinyNomicBertMoE(), edit: del(".expert_used_count"),
			want: bad, mention: []string{"nomic-bert-moe.expert_used_count"}, plan: true},
		{name: "nomic-bert-moe more experts used than there are", spec: testutil.TinyNomicBertMoE(), edit: func(h *hmodel) { h.set(".expert_used_count", uint32(9)) },
			want: bad, mention: []string{"nomic-bert-moe.expert_used_count", "nomic-bert-moe.expert_count"}, plan: true},
		{name: "nomic-bert-moe moe_every_n_layers a string", spec: testutil.TinyNomicBertMoE(), edit: func(h *hmodel) { h.set(".moe_every_n_layers", "two") },
			want: bad, mention: []string{"nomic-bert-moe.moe_every_n_layers"}, plan: true},
		// Every third layer from layer 1 would leave layer 3's router unused.
		{name: "nomic-bert-moe router on a dense layer", spec: testutil.TinyNomicBertMoE(), edit: func(h *hmodel) { h.set(".moe_every_n_layers", uint32(3)) },
			want: bad, mention: []string{"blk.3.ffn_gate_inp.weight", "moe_every_n_layers = 3"}},
		// The released file's XLM-R Unigram ("t5") vocabulary loads (below:
		// an edit that changes nothing); its precompiled charsmap cut short,
		// or a key whose replacement lies past the map, does not.
		{name: "nomic-bert-moe t5 tokenizer", spec: unigram(testutil.TinyNomicBertMoE()), edit: func(h *hmodel) {}},
		{name: "nomic-bert-moe t5 charsmap truncated", spec: unigram(testutil.TinyNomicBertMoE()),
			edit: func(h *hmodel) { h.set("tokenizer.ggml.precompiled_charsmap", []uint8{0xff, 0, 0}) },
			want: bad, mention: []string{"precompiled charsmap", "4-byte trie size"}},
		{name: "nomic-bert-moe t5 charsmap size past its end", spec: unigram(testutil.TinyNomicBertMoE()),
			edit: func(h *hmodel) { h.set("tokenizer.ggml.precompiled_charsmap", []uint8{0, 1, 0, 0, 'a', 0}) },
			want: bad, mention: []string{"precompiled charsmap", "trie of 256 bytes"}},
		{name: "nomic-bert-moe t5 charsmap replacement past its end", spec: unigram(testutil.TinyNomicBertMoE()),
			edit: func(h *hmodel) {
				cm, _ := testutil.Charsmap(map[string]string{"a": "b"})
				size := int(binary.LittleEndian.Uint32(cm))
				h.set("tokenizer.ggml.precompiled_charsmap", cm[:4+size+1]) // "b" without its NUL
			},
			want: bad, mention: []string{"precompiled charsmap", "no terminating NUL"}},
		{name: "nomic-bert-moe t5 charsmap of strings", spec: unigram(testutil.TinyNomicBertMoE()),
			edit: func(h *hmodel) { h.set("tokenizer.ggml.precompiled_charsmap", []string{"a"}) },
			want: bad, mention: []string{"tokenizer.ggml.precompiled_charsmap", "array of uint8"}},
		missing("nomic-bert-moe ffn_up_exps missing", testutil.TinyNomicBertMoE(), "blk.1.ffn_up_exps.weight"),
		misshapen("nomic-bert-moe ffn_down_exps of the wrong width", testutil.TinyNomicBertMoE(), "blk.3.ffn_down_exps.weight", 64, 64, 8),
		// jina-bert-v2: llama.cpp fixes the ALiBi maximum bias at 8 and reads
		// no key for it, so a file's max_alibi_bias, even negative, changes
		// nothing (model.TestJinaMaxALiBiBiasIgnored: the same bits).
		{name: "jina-bert-v2 max_alibi_bias negative", spec: testutil.TinyJinaBertV2(), edit: setF(".attention.max_alibi_bias", -1)},
		{name: "jina-bert-v2 max_alibi_bias NaN", spec: testutil.TinyJinaBertV2(), edit: setF(".attention.max_alibi_bias", nan)},
		{name: "jina-bert-v2 causal", spec: testutil.TinyJinaBertV2(), edit: func(h *hmodel) { h.set(".attention.causal", true) },
			want: bad, mention: []string{"jina-bert-v2.attention.causal"}, plan: true},
		missing("jina-bert-v2 attn_q.bias missing", testutil.TinyJinaBertV2(), "blk.0.attn_q.bias"),
		missing("jina-bert-v2 attn_output.bias missing", testutil.TinyJinaBertV2(), "blk.1.attn_output.bias"),
		missing("jina-bert-v2 attn_k_norm missing beside attn_q_norm", testutil.TinyJinaBertV2(), "blk.0.attn_k_norm.weight"),
		missing("jina-bert-v2 attn_q_norm.bias missing", testutil.TinyJinaBertV2(), "blk.1.attn_q_norm.bias"),
		missing("jina-bert-v2 ffn_down.bias missing", testutil.TinyJinaBertV2(), "blk.0.ffn_down.bias"),
		missing("jina-bert-v2 layer_output_norm.bias missing", testutil.TinyJinaBertV2(), "blk.1.layer_output_norm.bias"),
		// Without ffn_gate, ffn_up must hold the gate and up rows both.
		{name: "jina-bert-v2 ffn_gate missing", spec: testutil.TinyJinaBertV2(), edit: drop("blk.0.ffn_gate.weight"),
			want: bad, mention: []string{"blk.0.ffn_up.weight"}, plan: true},
		misshapen("jina-bert-v2 attn_q_norm of one head", testutil.TinyJinaBertV2(), "blk.0.attn_q_norm.weight", 16),
		// NaN weights are data, not metadata: the model loads and runs, and
		// its logits are NaN. Sampling from NaN logits picks some token;
		// nothing panics.
		{name: "F32 weights all NaN", spec: func() testutil.ModelSpec { s := testutil.TinyLlama(); s.WeightType = quant.F32; return s }(),
			edit: func(h *hmodel) {
				for i := range h.tensors {
					t := &h.tensors[i]
					t.data = nanData(int64(len(t.data) / 4))
				}
			}},
	}
}

func TestHostileModels(t *testing.T) {
	dir := t.TempDir()
	for i, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			// Each case its own file and model: side by side, they also
			// load and run models concurrently under the race detector.
			t.Parallel()
			spec := c.spec
			if spec.Vocab == 0 {
				spec = testutil.TinyLlama()
			}
			h := parseModel(t, modelBytes(t, spec))
			if c.edit != nil {
				c.edit(h)
			}
			path := filepath.Join(dir, fmt.Sprintf("hostile%d.gguf", i))
			if err := os.WriteFile(path, h.bytes(t), 0o644); err != nil {
				t.Fatal(err)
			}
			checkHostile(t, path, c)
		})
	}
}

func checkHostile(t *testing.T, path string, c hostileCase) {
	t.Helper()
	opts := []llm.Option{llm.WithMemoryLimit(1 << 30), llm.WithLogger(quietLogger())}
	m, err := llm.Load(path, opts...)
	_, perr := llm.Plan(path, opts...)
	if c.want == nil {
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if perr != nil {
			t.Errorf("Plan: %v", perr)
		}
		defer m.Close()
		runHostile(t, m)
		return
	}
	if err == nil {
		m.Close()
		t.Fatalf("Load succeeded, want an error wrapping %v", c.want)
	}
	if !errors.Is(err, c.want) {
		t.Fatalf("Load: %v\nwant an error wrapping %v", err, c.want)
	}
	for _, s := range c.mention {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Load: %v\ndoes not mention %q", err, s)
		}
	}
	switch {
	case c.plan && !errors.Is(perr, c.want):
		t.Errorf("Plan: %v\nwant an error wrapping %v", perr, c.want)
	case perr != nil && !errors.Is(perr, c.want):
		t.Errorf("Plan: %v\nwant nil or an error wrapping %v", perr, c.want)
	}
}

// runHostile exercises a model that loaded: a session, two tokens, a short
// generation; for an embedding model, an embedding.
func runHostile(t *testing.T, m *llm.Model) {
	t.Helper()
	if m.Info().EmbeddingOnly {
		if _, err := m.Embed(context.Background(), []string{"the cat"}); err != nil {
			t.Fatalf("Embed: %v", err)
		}
		return
	}
	s, err := m.NewSession(llm.WithContextSize(64))
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	defer s.Close()
	v := int32(m.Info().VocabSize)
	logits, err := s.Eval(context.Background(), []int32{min(1, v-1), min(2, v-1)})
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	if len(logits) != int(v) {
		t.Fatalf("Eval gave %d logits, want %d", len(logits), v)
	}
	if _, err := s.Generate(context.Background(), " the cat", llm.MaxTokens(4)); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if _, err := m.Detokenize(append(s.Tokens(), v-1)); err != nil {
		t.Fatalf("Detokenize: %v", err)
	}
}

// TestHostileContextSize asks for the largest context the options allow on
// a normal model: the planner must shrink it to the memory limit (or
// refuse) rather than allocate it, and quickly.
func TestHostileContextSize(t *testing.T) {
	path := testutil.TempModel(t, testutil.TinyLlama())
	for _, limit := range []int64{64 << 20, 1 << 30} {
		t.Run(fmt.Sprint(limit>>20, "MiB"), func(t *testing.T) {
			opts := []llm.Option{llm.WithMemoryLimit(limit), llm.WithContextSize(1 << 24), llm.WithLogger(quietLogger())}
			p, err := llm.Plan(path, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Fits || p.Total > limit || p.Context >= 1<<24 {
				t.Fatalf("plan: fits %v, total %d, context %d; want a context below 1<<24 fitting %d", p.Fits, p.Total, p.Context, limit)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			m := load(t, path, opts...)
			s := session(t, m)
			if _, err := s.Eval(context.Background(), []int32{1, 2}); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; int64(grew) > limit {
				t.Fatalf("load, session and eval allocated %d bytes, more than the limit %d", grew, limit)
			}
		})
	}
	// A budget below what any configuration needs: a clean refusal that
	// says what was needed.
	_, err := llm.Load(path, llm.WithMemoryLimit(1<<20), llm.WithLogger(quietLogger()))
	if !errors.Is(err, llm.ErrOutOfMemoryBudget) || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("1 MiB budget: err = %v, want ErrOutOfMemoryBudget naming the limit", err)
	}
	// With strict memory there is no degrading: a clean refusal.
	_, err = llm.Load(path, llm.WithMemoryLimit(64<<20), llm.WithContextSize(1<<24), llm.WithStrictMemory(), llm.WithLogger(quietLogger()))
	if !errors.Is(err, llm.ErrOutOfMemoryBudget) {
		t.Fatalf("strict: err = %v, want ErrOutOfMemoryBudget", err)
	}
}

// fuzzBases are the models FuzzLoad mutates: tiny llama, qwen2 and gemma2
// files, each split at the start of its tensor data.
type fuzzBase struct {
	header, data []byte
}

func fuzzBases(tb testing.TB) []fuzzBase {
	specs := []testutil.ModelSpec{
		{Arch: "llama", Vocab: testutil.MinVocab + 32, Embd: 32, Layers: 1, Heads: 2, HeadsKV: 1, FFN: 64, Context: 64, WeightType: quant.Q8_0, Seed: 1},
		{Arch: "qwen2", Vocab: testutil.MinVocab + 32, Embd: 32, Layers: 1, Heads: 2, HeadsKV: 1, FFN: 64, Context: 64, WeightType: quant.Q4_0, TiedOutput: true, Seed: 2},
		{Arch: "gemma2", Vocab: testutil.MinVocab + 32, Embd: 32, Layers: 2, Heads: 2, HeadsKV: 1, HeadDim: 16, FFN: 64, Context: 64, WeightType: quant.F16, TiedOutput: true, SlidingWindow: 8, Seed: 3},
		{Arch: "granitehybrid", Vocab: testutil.MinVocab + 32, Embd: 32, Layers: 2, Heads: 2, HeadsKV: 1, FFN: 64, Context: 64, WeightType: quant.Q8_0, TiedOutput: true,
			ConvLayers: []int{0}, SSMState: 8, SSMHeads: 4, SSMGroups: 2, Seed: 4},
	}
	var bases []fuzzBase
	for _, s := range specs {
		// A vocabulary of 32 tokens (the special ones and plain pieces, no
		// byte tokens) keeps the header small, so that the fuzzer's
		// mutations land on the model's keys and minimizing is quick.
		h := parseModel(tb, modelBytes(tb, s))
		const n = 32
		for _, k := range []string{"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"} {
			switch v := h.get(k).(type) {
			case []string:
				h.set(k, append(v[:3:3], v[testutil.MinVocab:testutil.MinVocab+n-3]...))
			case []float32:
				h.set(k, append(v[:3:3], v[testutil.MinVocab:testutil.MinVocab+n-3]...))
			case []int32:
				h.set(k, append(v[:3:3], v[testutil.MinVocab:testutil.MinVocab+n-3]...))
			}
		}
		for _, name := range []string{"token_embd.weight", "output.weight"} {
			if t := h.tensor(name); t != nil {
				h.put(name, t.typ, t.dims[0], n)
			}
		}
		h.set(".vocab_size", uint32(n))
		b := h.bytes(tb)
		g, err := gguf.Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			tb.Fatal(err)
		}
		bases = append(bases, fuzzBase{b[:g.DataOffset], b[g.DataOffset:]})
	}
	return bases
}

// FuzzLoad feeds Load files whose header (metadata and tensor descriptors)
// is mutated freely and whose tensor data is patched at a few places; the
// top bits of which choose streaming weights and an INT8 KV cache. Load
// must fail with one of the documented errors or give a model that
// evaluates two tokens; it must never panic or allocate absurdly.
func FuzzLoad(f *testing.F) {
	bases := fuzzBases(f)
	for i, b := range bases {
		f.Add(uint8(i), b.header, []byte(nil))
		f.Add(uint8(i)|0xc0, b.header, []byte(nil)) // streaming weights, INT8 KV
	}
	// A few hostile seeds: head count 0 in place, and a NaN patch of data.
	for i, b := range bases {
		h := bytes.Clone(b.header)
		if j := bytes.Index(h, []byte("attention.head_count")); j >= 0 {
			// key, then type (4 bytes), then the uint32 value.
			binary.LittleEndian.PutUint32(h[j+len("attention.head_count")+4:], 0)
		}
		f.Add(uint8(i), h, []byte{0, 0, 0xff, 1, 0, 0xff, 2, 0, 0xff, 3, 0, 0x7f})
	}
	dir := f.TempDir()
	path := filepath.Join(dir, "fuzz.gguf")
	f.Fuzz(func(t *testing.T, which uint8, header, patch []byte) {
		b := bases[int(which)%len(bases)]
		file := make([]byte, 0, len(header)+64+len(b.data))
		file = append(file, header...)
		for len(file)%32 != 0 {
			file = append(file, 0)
		}
		start := len(file)
		file = append(file, b.data...)
		for i := 0; i+3 <= len(patch) && len(b.data) > 0; i += 3 {
			off := int(binary.LittleEndian.Uint16(patch[i:])) % len(b.data)
			file[start+off] = patch[i+2]
		}
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		defer func() {
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Fatalf("a %d-byte file made Load and Eval allocate %d bytes", len(file), grew)
			}
		}()
		opts := []llm.Option{llm.WithMemoryLimit(256 << 20), llm.WithContextSize(64), llm.WithThreads(1), llm.WithLogger(quietLogger())}
		if which&0x80 != 0 {
			opts = append(opts, llm.WithWeights(llm.WeightsStreaming))
		}
		if which&0x40 != 0 {
			opts = append(opts, llm.WithKVType(llm.KVInt8))
		}
		m, err := llm.Load(path, opts...)
		if err != nil && len(patch) == 0 && bytes.Equal(header, b.header) {
			t.Fatalf("Load of an unmutated model: %v", err)
		}
		if err != nil {
			for _, want := range []error{llm.ErrBadModel, llm.ErrUnsupportedArch, llm.ErrUnsupportedType, llm.ErrOutOfMemoryBudget} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("Load: %v\nwraps none of the documented errors", err)
		}
		defer m.Close()
		s, err := m.NewSession()
		if err != nil {
			t.Fatalf("NewSession: %v", err)
		}
		defer s.Close()
		v := int32(m.Info().VocabSize)
		if _, err := s.Eval(context.Background(), []int32{min(1, v-1), min(2, v-1)}); err != nil {
			t.Fatalf("Eval: %v", err)
		}
	})
}

// qwen35NextN is TinyQwen35 with a NextN block after its four layers.
func qwen35NextN() testutil.ModelSpec {
	s := testutil.TinyQwen35()
	s.NextN = 1
	return s
}
