package llm_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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

// The edits a test makes of a model, as values, so that a table of cases
// can say each case's edit in a line.

// set is the edit setting each key to the value after it.
func set(kv ...any) func(*hmodel) {
	return func(h *hmodel) {
		for i := 0; i < len(kv); i += 2 {
			h.set(kv[i].(string), kv[i+1])
		}
	}
}

// del is the edit deleting the keys.
func del(keys ...string) func(*hmodel) {
	return func(h *hmodel) {
		for _, k := range keys {
			h.del(k)
		}
	}
}

// drop is the edit dropping the tensors.
func drop(names ...string) func(*hmodel) {
	return func(h *hmodel) {
		for _, name := range names {
			h.drop(name)
		}
	}
}

// edits is the edits one after another.
func edits(es ...func(*hmodel)) func(*hmodel) {
	return func(h *hmodel) {
		for _, e := range es {
			e(h)
		}
	}
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

// The constructors below say each kind of hostile case once. Within a
// family a case is named without its architecture, which family puts
// before the name.

// layerNormFamily is family for an architecture of LayerNorms with
// biases (Arch.NormBias): beside its own cases, attn_norm's and
// output_norm's biases and attention.layer_norm_epsilon are required of
// each, as llama.cpp's loaders require them.
func layerNormFamily(arch string, spec testutil.ModelSpec, req requires, cases ...hostileCase) []hostileCase {
	req = maps.Clone(req)
	if req == nil {
		req = requires{}
	}
	req["attn_norm.bias missing"] = "blk.1.attn_norm.bias"
	req["output_norm.bias missing"] = "output_norm.bias"
	return family(arch, spec, req, append(cases, unset("layer_norm_epsilon missing", ".attention.layer_norm_epsilon"))...)
}

// glmFamily is the cases glm4 and chatglm share, besides theirs: ffn_up
// holds the gate and the up rows, the Q/K/V biases are optional
// (separate on apart, fused on fused, as the projections are) but must
// fit, a separate bias beside attn_qkv is not theirs, and the query must
// be as wide as the embedding (llama.cpp sizes attn_output and the fused
// views by it).
func glmFamily(arch string, apart, fused testutil.ModelSpec, req requires, cases ...hostileCase) []hostileCase {
	return family(arch, apart, req, append(cases,
		misshapen("ffn_up without the up rows", "blk.0.ffn_up.weight", 64, 128),
		on(fused, misshapen("attn_qkv.bias without the value's", "blk.1.attn_qkv.bias", 96)),
		misshapen("attn_v.bias of the query's width", "blk.1.attn_v.bias", 64),
		withoutQKVBiases(1),
		on(fused, loads("fused without its bias", drop("blk.0.attn_qkv.bias"))),
		on(fused, unsupportedTensor("fused with a separate bias", "blk.0.attn_q.bias", 64)),
		refused("query narrower than the embedding", set(".attention.key_length", uint32(8), ".attention.value_length", uint32(8)), ".embedding_length"),
	)...)
}

// cohereFamily is the cases cohere2 and command-r share, besides theirs:
// the LayerNorm epsilon and logit scale are required (llama.cpp's
// get_key), the scale finite; the output is the embedding, and llama.cpp
// refuses an output.weight it would not load; one norm a block, before
// attention and the feed-forward alike; no projection biases.
func cohereFamily(arch string, spec testutil.ModelSpec, req requires, cases ...hostileCase) []hostileCase {
	return family(arch, spec, req, append(cases,
		unset("layer_norm_epsilon missing", ".attention.layer_norm_epsilon"),
		unset("logit_scale missing", ".logit_scale"),
		refusedKey("logit_scale infinite", ".logit_scale", float32(math.Inf(1))),
		misshapen("with an output matrix", "output.weight", 64, 320),
		unsupportedTensor("attn_q.bias", "blk.0.attn_q.bias", 64),
	)...)
}

// withoutQKVBiases is the file without block il's attn_q, attn_k and
// attn_v biases, which loads: llama.cpp takes each when the block has it
// (Arch.OptionalQKVBias).
func withoutQKVBiases(il int) hostileCase {
	return loads("without its biases", func(h *hmodel) {
		for _, b := range []string{"attn_q.bias", "attn_k.bias", "attn_v.bias"} {
			h.drop(fmt.Sprintf("blk.%d.%s", il, b))
		}
	})
}

// withQKVBiases is the file with block il's attn_q, attn_k and attn_v
// biases added (q and kv wide), which loads where llama.cpp takes each
// when the block has it (Arch.OptionalQKVBias) for an architecture whose
// released files have none (hunyuan-dense, hunyuan-moe, dots1, mellum,
// maincoder).
func withQKVBiases(il int, q, kv int64) hostileCase {
	return loads("with Q/K/V biases", func(h *hmodel) {
		for b, n := range map[string]int64{"attn_q.bias": q, "attn_k.bias": kv, "attn_v.bias": kv} {
			h.put(fmt.Sprintf("blk.%d.%s", il, b), quant.F32, n)
		}
	})
}

// requires is tensors the loader requires, each by the name of the case
// of the file without it (missing). A family writes out only the names
// requiring (and requires.and) and requires.named do not make.
type requires map[string]string

// requiresEach is the requires of each tensor named, each case named
// after its tensor.
func requiresEach(tensors ...string) requires {
	req := make(requires, len(tensors))
	for _, name := range tensors {
		req[name+" missing"] = name
	}
	return req
}

// missingNames names the case of a file without a tensor (by its local
// name: in a block, or outside one, and without .weight) after what the
// tensor is, where the families say that rather than its name.
var missingNames = map[string]string{
	"ffn_gate_inp":       "router missing",
	"ffn_gate_inp_shexp": "shared expert's gate missing",
	"ffn_up_shexp":       "shared expert missing",
	"ffn_down_shexp":     "shared expert missing",
	"ffn_up_exps":        "experts missing",
	"ffn_gate_exps":      "experts missing",
	"ffn_down_exps":      "experts missing",
	"exp_probs_b.bias":   "selection bias missing",
	"output":             "output missing (never tied)",
}

// requiring is the requires of each tensor named, each case named by
// missingNames or else after the tensor's local name ("attn_q_norm
// missing"), as most families name them.
func requiring(tensors ...string) requires {
	return requires(nil).and(tensors...)
}

// and is req and requiring(tensors...).
func (req requires) and(tensors ...string) requires {
	return req.add(tensors, func(local string) string {
		if what, ok := missingNames[local]; ok {
			return what
		}
		return local + " missing"
	})
}

// named is req and the requires of each tensor named, each case named
// by format with the tensor's local name ("layer without %s").
func (req requires) named(format string, tensors ...string) requires {
	return req.add(tensors, func(local string) string { return fmt.Sprintf(format, local) })
}

// add is req and a case of each of tensors, named by what of the
// tensor's local name: without its block ("blk.N.") and ".weight". Two
// cases of one name, which would leave one out, are a mistake in the
// table.
func (req requires) add(tensors []string, what func(local string) string) requires {
	r := maps.Clone(req)
	if r == nil {
		r = requires{}
	}
	for _, t := range tensors {
		local := t
		if rest, ok := strings.CutPrefix(t, "blk."); ok {
			local = rest[strings.Index(rest, ".")+1:]
		}
		name := what(strings.TrimSuffix(local, ".weight"))
		if _, dup := r[name]; dup {
			panic(fmt.Sprintf("requires: two cases named %q", name))
		}
		r[name] = t
	}
	return r
}

// family is the cases of one architecture and a missing case of each
// tensor it requires, each on spec unless on puts it on another, named
// "<arch> <its name>"; a mention ".x" is the architecture's key
// "<arch>.x", as hmodel.key reads a key.
func family(arch string, spec testutil.ModelSpec, req requires, cases ...hostileCase) []hostileCase {
	for _, what := range slices.Sorted(maps.Keys(req)) {
		cases = append(cases, missing(what, req[what]))
	}
	for i := range cases {
		c := &cases[i]
		c.name = arch + " " + c.name
		if c.spec.Vocab == 0 {
			c.spec = spec
		}
		for j, m := range c.mention {
			if strings.HasPrefix(m, ".") {
				c.mention[j] = arch + m
			}
		}
	}
	return cases
}

// rwkv6Requires is own and a case for each of the time mix's tensors
// rwkv6 and rwkv6qwen2 both require and each of body (the family's own
// block tensors), missing from one of TinyRWKV6's or TinyRWKV6Qwen2's
// three layers in turn.
func rwkv6Requires(own requires, body ...string) requires {
	r := maps.Clone(own)
	for i, name := range append([]string{"time_mix_w1", "time_mix_w2", "time_mix_lerp_x", "time_mix_lerp_fused", "time_mix_decay",
		"time_mix_decay_w2", "time_mix_gate"}, body...) {
		r["layer without "+name] = fmt.Sprintf("blk.%d.%s.weight", i%3, name)
	}
	return r
}

// putLerpParts adds an RWKV file's five lerps apart (time_mix_lerp_w,
// _k, _v, _r, _g of 128) to each of its three layers.
func putLerpParts(h *hmodel) {
	for il := range 3 {
		for _, b := range "wkvrg" {
			h.put(fmt.Sprintf("blk.%d.time_mix_lerp_%c.weight", il, b), quant.F32, 128, 1, 1)
		}
	}
}

// qkvApart is the file with block 1's attn_qkv replaced by attn_q,
// attn_k and attn_v (64 wide, two KV heads of 16): refused naming
// attn_qkv by an architecture whose llama.cpp loader requires it fused
// (bailingmoe2, plamo3).
func qkvApart() hostileCase {
	return refused("separate Q/K/V", func(h *hmodel) {
		h.drop("blk.1.attn_qkv.weight")
		h.put("blk.1.attn_q.weight", quant.F32, 64, 64)
		h.put("blk.1.attn_k.weight", quant.F32, 64, 32)
		h.put("blk.1.attn_v.weight", quant.F32, 64, 32)
	}, "blk.1.attn_qkv.weight")
}

// on is c on spec rather than on its family's (or TinyLlama).
func on(spec testutil.ModelSpec, c hostileCase) hostileCase {
	c.spec = spec
	return c
}

// fusedQKV is s written with its Q, K and V fused (ModelSpec.FuseQKV).
func fusedQKV(s testutil.ModelSpec) testutil.ModelSpec {
	s.FuseQKV = true
	return s
}

// refused is a file that Load and Plan both refuse with ErrBadModel, the
// error mentioning each of mention: the problem is in the header.
func refused(what string, edit func(*hmodel), mention ...string) hostileCase {
	return hostileCase{name: what, edit: edit, want: llm.ErrBadModel, mention: mention, plan: true}
}

// refusedAtLoad is a file that Load refuses with ErrBadModel, mentioning
// each of mention; Plan, which reads no tokenizer, may pass it.
func refusedAtLoad(what string, edit func(*hmodel), mention ...string) hostileCase {
	return hostileCase{name: what, edit: edit, want: llm.ErrBadModel, mention: mention}
}

// unsupported is a file that Load and Plan both refuse with
// ErrUnsupportedArch, the error mentioning each of mention.
func unsupported(what string, edit func(*hmodel), mention ...string) hostileCase {
	return hostileCase{name: what, edit: edit, want: llm.ErrUnsupportedArch, mention: mention, plan: true}
}

// unsupportedAtLoad is a file that Load refuses with ErrUnsupportedArch,
// mentioning each of mention, and Plan may pass.
func unsupportedAtLoad(what string, edit func(*hmodel), mention ...string) hostileCase {
	return hostileCase{name: what, edit: edit, want: llm.ErrUnsupportedArch, mention: mention}
}

// loads is a file that must load and run.
func loads(what string, edit func(*hmodel)) hostileCase {
	return hostileCase{name: what, edit: edit}
}

// refusedKey is the file with key set to v: ErrBadModel naming the key,
// from the plan too.
func refusedKey(what, key string, v any) hostileCase {
	return refused(what, set(key, v), key)
}

// unsupportedKey is the file with key set to v: ErrUnsupportedArch naming
// the key, from the plan too.
func unsupportedKey(what, key string, v any) hostileCase {
	return unsupported(what, set(key, v), key)
}

// unsupportedTensor is the file with tensor added, F32 of dims, which
// the architecture has no place for: ErrUnsupportedArch naming it, from
// the plan too.
func unsupportedTensor(what, tensor string, dims ...int64) hostileCase {
	return unsupported(what, func(h *hmodel) { h.put(tensor, quant.F32, dims...) }, tensor)
}

// missing is the file without tensor: ErrBadModel naming it, from the
// plan too.
func missing(what, tensor string) hostileCase {
	return refused(what, func(h *hmodel) { h.drop(tensor) }, tensor)
}

// misshapen is the file with tensor F32 of dims: ErrBadModel naming it,
// from the plan too.
func misshapen(what, tensor string, dims ...int64) hostileCase {
	return refused(what, func(h *hmodel) { h.put(tensor, quant.F32, dims...) }, tensor)
}

// unset is the file without the metadata key: ErrBadModel naming the key,
// from the plan too.
func unset(what, key string) hostileCase {
	return refused(what, func(h *hmodel) { h.del(key) }, key)
}

func hostileCases() []hostileCase {
	setU := func(k string, v uint32) func(*hmodel) { return set(k, v) }
	setF := func(k string, v float32) func(*hmodel) { return set(k, v) }
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	typ := llm.ErrUnsupportedType
	// add is the edit adding an F32 tensor of dims (its values do not
	// matter to a case about whether the model has a place for it).
	add := func(name string, dims ...int64) func(*hmodel) {
		return func(h *hmodel) { h.put(name, quant.F32, dims...) }
	}
	// fuseExps is the edit holding layer il's experts' gate and up in
	// one ffn_gate_up_exps, as llama.cpp's converter may write them.
	fuseExps := func(il int) func(*hmodel) {
		return func(h *hmodel) {
			p := fmt.Sprintf("blk.%d.", il)
			g := h.tensor(p + "ffn_gate_exps.weight")
			typ, dims := g.typ, g.dims
			h.drop(p + "ffn_gate_exps.weight")
			h.drop(p + "ffn_up_exps.weight")
			h.put(p+"ffn_gate_up_exps.weight", typ, dims[0], 2*dims[1], dims[2])
		}
	}
	return slices.Concat(
		[]hostileCase{
			refused("head_count 0", setU(".attention.head_count", 0), "attention.head_count"),
			refused("head_count_kv 0", setU(".attention.head_count_kv", 0), "attention.head_count_kv"),
			refused("head_count_kv not dividing", setU(".attention.head_count_kv", 3), "attention.head_count_kv"),
			refused("head_count_kv above head_count", setU(".attention.head_count_kv", 8), "attention.head_count_kv"),
			refused("head_count_kv huge", setU(".attention.head_count_kv", 1<<31), "attention.head_count_kv"),
			refused("embedding_length not divisible by head_count", set(".attention.head_count", uint32(6), ".attention.head_count_kv", uint32(6)), "embedding_length", "attention.head_count"),
			refused("embedding_length huge", setU(".embedding_length", 1<<30), "embedding_length"),
			refused("key_length 0", setU(".attention.key_length", 0), "attention.key_length"),
			refused("key_length huge", setU(".attention.key_length", 1<<20), "attention.key_length"),
			refused("value_length huge", setU(".attention.value_length", 1<<20), "attention.value_length"),
			refused("key_length disagrees with tensors", setU(".attention.key_length", 32), "attn_q.weight"),
			refused("head dims overflow", set(".attention.head_count", uint32(1<<20), ".attention.head_count_kv", uint32(1<<20), ".attention.key_length", uint32(1<<12)), "attention.head_count"),
			refused("rope.dimension_count odd", setU(".rope.dimension_count", 15), "rope.dimension_count"),
			refused("rope.dimension_count above head dim", setU(".rope.dimension_count", 32), "rope.dimension_count"),
			refused("rope.dimension_count 0", setU(".rope.dimension_count", 0), "rope.dimension_count"),
			refused("block_count 0", setU(".block_count", 0), "block_count"),
			refused("block_count huge", setU(".block_count", 1<<20), "block_count"),
			refused("block_count one too many", setU(".block_count", 3), "block_count"),
			refused("feed_forward_length mismatch", setU(".feed_forward_length", 256), "ffn_gate.weight"),
			refused("feed_forward_length missing", del(".feed_forward_length"), "feed_forward_length"),
			refused("context_length 0", setU(".context_length", 0), "context_length"),
			refused("context_length 1<<40", set(".context_length", uint64(1)<<40), "context_length"),
			refused("context_length negative", set(".context_length", int32(-5)), "context_length"),
			refused("context_length string", set(".context_length", "4096"), "context_length"),
			loads("vocab of 1 token", oneTokenVocab(false)), // there is no BOS to add
			// llama.cpp refuses add_bos_token without a BOS in the vocabulary.
			refusedAtLoad("vocab of 1 token adding BOS", oneTokenVocab(true), "tokenizer.ggml.add_bos_token", "tokenizer.ggml.bos_token_id"),
			refused("token_embd narrower than embedding_length", func(h *hmodel) {
				h.put("token_embd.weight", quant.Q8_0, 32, 320)
			}, "token_embd.weight"),
			refused("token_embd 1-D", func(h *hmodel) { h.put("token_embd.weight", quant.F32, 64*320) }, "token_embd.weight"),
			misshapen("token_embd 3-D", "token_embd.weight", 64, 320, 1),
			missing("token_embd missing", "token_embd.weight"),
			refused("output rows differ from vocab", func(h *hmodel) { h.put("output.weight", quant.Q8_0, 64, 300) }, "output.weight"),
			refused("tokenizer larger than token_embd", func(h *hmodel) {
				h.put("token_embd.weight", quant.Q8_0, 64, 300)
				h.put("output.weight", quant.Q8_0, 64, 300)
				h.set(".vocab_size", uint32(300))
			}, "tokenizer.ggml.tokens", "token_embd.weight"),
			// llama.cpp sizes token_embd by the vocabulary: a row without a
			// token (which the sampler could pick and nothing could print) is
			// refused as firmly as a token without a row.
			refused("tokenizer smaller than token_embd", func(h *hmodel) {
				h.set("tokenizer.ggml.tokens", h.get("tokenizer.ggml.tokens").([]string)[:300])
				h.set("tokenizer.ggml.scores", h.get("tokenizer.ggml.scores").([]float32)[:300])
				h.set("tokenizer.ggml.token_type", h.get("tokenizer.ggml.token_type").([]int32)[:300])
			}, "tokenizer.ggml.tokens", "300", "token_embd.weight", "320"),
			refused("vocab_size disagrees with token_embd", setU(".vocab_size", 319), "vocab_size", "token_embd.weight"),
			loads("vocab_size agrees", setU(".vocab_size", 320)),
			refused("vocab_size not a number", set(".vocab_size", "320"), "vocab_size"),
			// Q8_1 is an activation type: it decodes, but no weight row of
			// it has a dot product.
			{name: "Q8_1 tensor", spec: func() testutil.ModelSpec { s := testutil.TinyLlama(); s.FFN = 256; return s }(),
				edit: func(h *hmodel) { h.put("blk.1.ffn_down.weight", quant.Q8_1, 256, 64) },
				want: typ, mention: []string{"blk.1.ffn_down.weight", "Q8_1"}, plan: true},
			{name: "Q8_1 model", spec: testutil.ModelSpec{Vocab: 320, Embd: 256, Layers: 1, Heads: 4, FFN: 256, Context: 128, WeightType: quant.Q8_1, OutputType: quant.Q8_0},
				want: typ, mention: []string{"Q8_1"}, plan: true},
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
			{name: "norm of type I32", edit: func(h *hmodel) { h.put("blk.0.attn_norm.weight", quant.I32, 64) }, want: typ, mention: []string{"blk.0.attn_norm.weight"}, plan: true},
			missing("output_norm missing", "output_norm.weight"),
			missing("ffn_down missing", "blk.1.ffn_down.weight"),
			misshapen("attn_q 3-D", "blk.0.attn_q.weight", 64, 32, 2),
			unsupported("head_count per-layer array", set(".attention.head_count", []uint32{4, 2}), "attention.head_count"),
			unsupported("head_count_kv per-layer array", set(".attention.head_count_kv", []int32{2, 1}), "attention.head_count_kv"),
			loads("head_count uniform per-layer array", set(".attention.head_count", []uint32{4, 4})),
			refused("head_count array of wrong length", set(".attention.head_count", []uint32{4, 4, 4}), "attention.head_count"),
			unsupported("feed_forward_length per-layer array", set(".feed_forward_length", []uint32{128, 64}), "feed_forward_length"),
			refused("rms epsilon NaN", setF(".attention.layer_norm_rms_epsilon", nan), "layer_norm_rms_epsilon"),
			refused("rms epsilon inf", setF(".attention.layer_norm_rms_epsilon", inf), "layer_norm_rms_epsilon"),
			refused("rms epsilon negative", setF(".attention.layer_norm_rms_epsilon", -1e-5), "layer_norm_rms_epsilon"),
			refused("rms epsilon float64 overflowing float32", set(".attention.layer_norm_rms_epsilon", 1e300), "layer_norm_rms_epsilon"),
			refused("rms epsilon string", set(".attention.layer_norm_rms_epsilon", "1e-5"), "layer_norm_rms_epsilon"),
			refused("rope base 0", setF(".rope.freq_base", 0), "rope.freq_base"),
			refused("rope base NaN", setF(".rope.freq_base", nan), "rope.freq_base"),
			refused("rope base inf", setF(".rope.freq_base", inf), "rope.freq_base"),
			// YaRN runs (a Qwen3 made long); DeepSeek's log multiplier does not.
			loads("rope scaling yarn", set(".rope.scaling.type", "yarn", ".rope.scaling.factor", float32(4))),
			loads("rope scaling yarn with a log multiplier", set(".rope.scaling.type", "yarn", ".rope.scaling.factor", float32(4), ".rope.scaling.yarn_log_multiplier", float32(1))),
			refused("rope scaling yarn log multiplier inf", set(".rope.scaling.type", "yarn", ".rope.scaling.yarn_log_multiplier", inf), "yarn_log_multiplier"),
			refused("rope scaling yarn beta NaN", set(".rope.scaling.type", "yarn", ".rope.scaling.yarn_beta_slow", nan), "yarn_beta_slow"),
			unsupported("rope scaling unknown", set(".rope.scaling.type", "dynamic"), "dynamic"),
			refused("rope scaling linear factor NaN", set(".rope.scaling.type", "linear", ".rope.scaling.factor", nan), "rope.scaling.factor"),
			refused("rope scaling linear factor inf", set(".rope.scaling.type", "linear", ".rope.scaling.factor", inf), "rope.scaling.factor"),
			misshapen("rope_freqs wrong length", "rope_freqs.weight", 5),
			refusedAtLoad("scores shorter than tokens", set("tokenizer.ggml.scores", []float32{0, 0, 0}), "tokenizer.ggml.scores"),
			refusedAtLoad("token types shorter than tokens", set("tokenizer.ggml.token_type", []int32{1}), "tokenizer.ggml.token_type"),
			refusedAtLoad("tokens missing", del("tokenizer.ggml.tokens"), "tokenizer.ggml.tokens"),
			refusedAtLoad("tokens empty", set("tokenizer.ggml.tokens", []string{}), "tokenizer.ggml.tokens"),
			refusedAtLoad("tokens duplicate", func(h *hmodel) {
				toks := append([]string(nil), h.get("tokenizer.ggml.tokens").([]string)...)
				toks[300] = toks[299]
				h.set("tokenizer.ggml.tokens", toks)
			}, "duplicate"),
			refusedAtLoad("tokens of type uint32", set("tokenizer.ggml.tokens", make([]uint32, 320)), "tokenizer.ggml.tokens"),
			loads("bos id out of range", setU("tokenizer.ggml.bos_token_id", 100000)),
			loads("eos id max uint32", setU("tokenizer.ggml.eos_token_id", math.MaxUint32)),
			loads("token type out of range", func(h *hmodel) {
				types := append([]int32(nil), h.get("tokenizer.ggml.token_type").([]int32)...)
				types[300], types[301] = -7, 1<<30
				h.set("tokenizer.ggml.token_type", types)
			}),
			unsupportedAtLoad("tokenizer model unknown", set("tokenizer.ggml.model", "unknown"), "unknown"),
			refusedAtLoad("tokenizer model missing", del("tokenizer.ggml.model"), "tokenizer.ggml.model"),
			loads("gpt2 merges well formed", func(h *hmodel) { gpt2Vocab(h, 320, []string{"a b", "b c", "ab c"}) }),
			loads("gpt2 merges malformed", func(h *hmodel) {
				gpt2Vocab(h, 320, []string{"", " ", "abc", "a b c", "  a", "\x00 \xff", "zz yy", "a b"})
			}),
			refusedAtLoad("gpt2 merges missing", func(h *hmodel) { gpt2Vocab(h, 320, nil); h.del("tokenizer.ggml.merges") }, "tokenizer.ggml.merges"),
			unsupportedAtLoad("gpt2 pre-tokenizer unknown", func(h *hmodel) { gpt2Vocab(h, 320, nil); h.set("tokenizer.ggml.pre", "nonesuch") }, "nonesuch"),
			loads("gpt2 pre-tokenizer tekken", func(h *hmodel) { gpt2Vocab(h, 320, nil); h.set("tokenizer.ggml.pre", "tekken") }),
			unsupported("architecture unknown", set("general.architecture", "rwkv5"), "rwkv5"),
			unset("architecture missing", "general.architecture"),
			refusedKey("architecture not a string", "general.architecture", uint32(1)),
			// llama.cpp refuses any tensor its graph does not load ("wrong
			// number of tensors"): one in no block is damage, one it has
			// no place for a variant neither runs.
			refused("tensor of block -1", func(h *hmodel) { h.put("blk.-1.attn_norm.weight", quant.F32, 64) }, "blk.-1.attn_norm.weight", "block_count"),
			refused("tensor of block huge", func(h *hmodel) { h.put("blk.99999999999999999999.attn_norm.weight", quant.F32, 64) }, "blk.99999999999999999999.attn_norm.weight"),
			refused("tensor of a block past the count", func(h *hmodel) { h.put("blk.9.attn_norm.weight", quant.F32, 64) }, "blk.9.attn_norm.weight", "block_count"),
			unsupported("tensor llama has no place for", func(h *hmodel) { h.put("blk.0.attn_sub_norm.weight", quant.F32, 64) }, "blk.0.attn_sub_norm.weight", "no use"),
			unsupportedTensor("tensor outside the blocks llama has no place for", "output_norm.bias", 64),
			unsupportedTensor("mixture of experts", "blk.0.ffn_gate_inp.weight", 64, 4),
			unsupported("mixture of experts by metadata", set(".expert_count", uint32(8)), "expert_count"),
			// llama.cpp loads these biases as optional for llama and granite:
			// a file that has one must be refused, not run without it.
			unsupportedTensor("llama with attn_q.bias", "blk.1.attn_q.bias", 64),
			// llama.cpp's create_tensor_qkv takes a fused attn_qkv in place
			// of attn_q, attn_k and attn_v for llama (as --fuse-qkv writes
			// it), and so does the loader here, block by block; for olmo2,
			// whose graph crashes on it, it is refused by name rather than
			// reported as attn_q missing.
			loads("llama with a fused attn_qkv", edits(drop("blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight"), add("blk.0.attn_qkv.weight", 64, 128))),
			refused("llama with a fused attn_qkv a row short", edits(drop("blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight"), add("blk.0.attn_qkv.weight", 64, 127)),
				"blk.0.attn_qkv.weight"),
			// qwen2's Q/K/V biases are required: fused, so is attn_qkv.bias,
			// as wide as the three.
			on(fusedQKV(testutil.TinyQwen2()), loads("qwen2 fused", nil)),
			on(fusedQKV(testutil.TinyQwen2()), missing("qwen2 fused without attn_qkv.bias", "blk.1.attn_qkv.bias")),
			on(fusedQKV(testutil.TinyQwen2()), misshapen("qwen2 fused with attn_qkv.bias of the query's width", "blk.0.attn_qkv.bias", 64)),
			// Both layouts at once: llama.cpp takes the fused one and refuses
			// the file for the three it then does not load.
			unsupported("llama with attn_qkv beside attn_q, attn_k and attn_v", add("blk.0.attn_qkv.weight", 64, 128), "blk.0.attn_"),
			on(testutil.TinyOlmo2(), unsupported("olmo2 with a fused attn_qkv", edits(drop("blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight"), add("blk.0.attn_qkv.weight", 64, 128)),
				"blk.0.attn_qkv.weight", "fused")),
			// The per-tensor scales of NVFP4 checkpoints, which llama.cpp
			// loads for any architecture and its graphs multiply the
			// products by (input_scale beside them).
			unsupported("llama with attn_output.scale", add("blk.1.attn_output.scale", 1), "blk.1.attn_output.scale", "no use"),
			unsupported("llama with attn_output.input_scale", add("blk.0.attn_output.input_scale", 1), "blk.0.attn_output.input_scale"),
			on(testutil.TinyQwen3MoE(), unsupported("qwen3moe with its experts' scales", add("blk.1.ffn_down_exps.scale", 8), "blk.1.ffn_down_exps.scale")),
			// llama.cpp takes a bias beside phi3's fused attn_qkv and adds it.
			on(testutil.TinyPhi3(), unsupported("phi3 with attn_qkv.bias", add("blk.0.attn_qkv.bias", 128), "blk.0.attn_qkv.bias")),
			// Sentence-transformers' Dense projections, which llama.cpp
			// loads for these architectures too and applies to the pooled
			// embedding (build_dense_out); here only the embedders without
			// a head (gemma-embedding) take them.
			on(testutil.TinyGemma3(), unsupported("gemma3 with dense_2 and dense_3", edits(add("dense_2.weight", 64, 32), add("dense_3.weight", 32, 64)), "dense_2.weight")),
			on(testutil.TinyLFM2(), unsupported("lfm2 with dense_2", edits(add("dense_2.weight", 64, 64), add("dense_2.bias", 64)), "dense_2.weight")),
			// A reranker's head, which llama.cpp loads for qwen3 whatever the
			// pooling and reads only to pool by rank: passed over.
			on(testutil.TinyQwen3(), loads("qwen3 with cls.output, not pooled by rank", add("cls.output.weight", 64, 1))),
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
		},
		// lfm2moe: its gating function, its leading dense layers and the
		// tensors each kind of layer must have; a selection bias of NaNs
		// chooses experts all the same (NaN last), as it never fails.
		family("lfm2moe", testutil.TinyLFM2MoE(), requires{
			"dense layer without ffn_gate": "blk.0.ffn_gate.weight",
			"without a selection bias":     "blk.3.exp_probs_b.bias",
		},
			unsupported("gating 9", setU(".expert_gating_func", 9), ".expert_gating_func = 9"),
			refused("dense lead past the blocks", setU(".leading_dense_block_count", 5), "leading_dense_block_count"),
			refused("dense lead covering an expert layer", setU(".leading_dense_block_count", 2), "blk.1.ffn_gate_inp.weight", "leading_dense_block_count = 2"),
			misshapen("router in a dense layer", "blk.0.ffn_gate_inp.weight", 64, 8),
			loads("selection bias of NaNs", func(h *hmodel) {
				t := h.tensor("blk.1.exp_probs_b.bias")
				for k := 0; k < len(t.data); k += 4 {
					binary.LittleEndian.PutUint32(t.data[k:], math.Float32bits(float32(math.NaN())))
				}
			}),
		),
		// gemma3n: its AltUp, per-layer, shared-KV and sparsity keys, and
		// the tensors only it has; the shared_kv_layers float32 of early
		// conversions is taken when it holds a count.
		family("gemma3n", testutil.TinyGemma3n(), requires{
			"without the first laurel_l":      "blk.0.laurel_l.weight",
			"without a router":                "blk.3.altup_router.weight",
			"without a shared layer's attn_k": "blk.3.attn_k.weight",
		}.named("without %s", "blk.2.laurel_l.weight", "per_layer_token_embd.weight", "altup_unembd_proj.weight"),
			refused("per-layer width wrong", setU(".embedding_length_per_layer_input", 16), "per_layer_token_embd.weight", "embedding_length_per_layer_input = 16"),
			// llama.cpp's text model leaves the vision and audio towers'
			// tensors alone (its converter writes them to another file).
			loads("with vision and audio tensors", func(h *hmodel) {
				h.put("v.patch_embd.weight", quant.F16, 64, 64)
				h.put("a.blk.0.attn_q.weight", quant.F16, 64, 64)
				h.put("mm.input_projection.weight", quant.F32, 64, 64)
			}),
			refused("altup inputs 0", setU(".altup.num_inputs", 0), ".altup.num_inputs = 0"),
			refused("altup inputs 1", setU(".altup.num_inputs", 1), ".altup.num_inputs = 1"),
			refused("altup inputs disagree with altup_proj", setU(".altup.num_inputs", 3), "altup_proj.weight"),
			refused("active stream out of range", setU(".altup.active_idx", 4), ".altup.active_idx = 4"),
			refused("shared KV beyond the layers", setU(".attention.shared_kv_layers", 9), ".attention.shared_kv_layers = 9"),
			refused("shared KV of the wrong kind", setU(".attention.shared_kv_layers", 1), ".attention.shared_kv_layers = 1", "windowed"),
			loads("shared KV as float32", set(".attention.shared_kv_layers", float32(2))),
			refused("shared KV fractional", set(".attention.shared_kv_layers", float32(1.5)), "shared_kv_layers"),
			refused("sparsity scales of another length", set(".activation_sparsity_scale", []float32{1, 2}), "activation_sparsity_scale"),
			unset("without a window", ".attention.sliding_window"),
		),
		// gemma4: its head sizes, layer kinds, per-layer counts and
		// tensors; layer_output_scale and attn_v are optional.
		family("gemma4", testutil.TinyGemma4(), requires{
			"without a global layer's attn_q":  "blk.2.attn_q.weight",
			"without an owning layer's attn_k": "blk.1.attn_k.weight",
		}.named("without %s", "rope_freqs.weight", "per_layer_token_embd.weight", "blk.4.inp_gate.weight"),
			unset("without key_length_swa", ".attention.key_length_swa"),
			refused("value_length_swa differs", setU(".attention.value_length_swa", 64), ".attention.value_length_swa = 64"),
			unset("without a layer pattern", ".attention.sliding_window_pattern"),
			refusedKey("layer pattern a single value", ".attention.sliding_window_pattern", uint32(5)),
			unset("without per-layer input width", ".embedding_length_per_layer_input"),
			refusedKey("KV heads not dividing", ".attention.head_count_kv", []int32{2, 2, 3, 2, 1}),
			unsupportedAtLoad("query heads per layer", set(".attention.head_count", []int32{4, 4, 2, 4, 4}), ".attention.head_count"),
			refused("rotating more than the windowed head", setU(".rope.dimension_count_swa", 48), ".rope.dimension_count_swa = 48"),
			loads("without layer_output_scale", drop("blk.3.layer_output_scale.weight")),
			// llama.cpp takes a KV-sharing layer's attn_k_norm, shape and
			// all, and its graph never reads it: that layer computes no keys.
			loads("KV-sharing layer with attn_k_norm", add("blk.4.attn_k_norm.weight", 64)),
			misshapen("KV-sharing layer's attn_k_norm of the windowed width", "blk.4.attn_k_norm.weight", 32),
			// gemma4's experts (26B-A4B): the counts, the width, each tensor
			// of an expert block; a router in a dense model.
			refused("expert_count without expert_used_count", setU(".expert_count", 8), ".expert_used_count"),
			refused("expert_used_count without experts", setU(".expert_used_count", 2), ".expert_used_count", ".expert_count"),
		),
		family("gemma4", testutil.TinyGemma4MoE(), requires{
			"without a router":                                  "blk.3.ffn_gate_inp.weight",
			"without the router's scale":                        "blk.1.ffn_gate_inp.scale",
			"without the dense feed-forward beside the experts": "blk.0.ffn_gate.weight",
		}.named("without %s", "blk.2.pre_ffw_norm_2.weight", "blk.0.post_ffw_norm_1.weight", "blk.3.post_ffw_norm_2.weight", "blk.1.ffn_down_exps.weight"),
			unset("without expert_feed_forward_length", ".expert_feed_forward_length"),
			refused("more experts used than there are", setU(".expert_used_count", 9), ".expert_used_count = 9"),
			refused("router in a dense model", set(".expert_count", uint32(0), ".expert_used_count", uint32(0)), "blk.0.ffn_gate_inp.weight", "expert_count = 0"),
			refused("without the experts' gate and up", drop("blk.2.ffn_gate_up_exps.weight"), "blk.2.ffn_gate_exps.weight"),
			misshapen("fused experts of another width", "blk.0.ffn_gate_up_exps.weight", 64, 48, 8),
			misshapen("expert output scales of another count", "blk.0.ffn_down_exps.scale", 4),
			loads("without expert output scales", func(h *hmodel) {
				for l := range 4 {
					h.drop(fmt.Sprintf("blk.%d.ffn_down_exps.scale", l))
				}
			}),
		),
		// deepseek2: every size of the latent attention checked against
		// the others and the tensors, the expert counts, the groups.
		family("deepseek2", testutil.TinyDeepSeek2(), requiresEach("blk.1.attn_k_b.weight"),
			refused("kv_lora_rank 0", setU(".attention.kv_lora_rank", 0), ".attention.kv_lora_rank = 0"),
			unset("kv_lora_rank missing", ".attention.kv_lora_rank"),
			refused("kv_lora_rank disagreeing with key_length", setU(".attention.kv_lora_rank", 32), ".attention.key_length = 80"),
			refused("rope dims past key_length_mla", setU(".rope.dimension_count", 48), ".rope.dimension_count = 48", "key_length_mla"),
			refused("value_length not the latent", setU(".attention.value_length", 32), ".attention.value_length = 32"),
			refused("two KV heads", setU(".attention.head_count_kv", 2), ".attention.head_count_kv = 2"),
			unset("key_length_mla without value_length_mla", ".attention.key_length_mla"),
			on(testutil.TinyDeepSeek2KVB(), missing("older form without attn_kv_b", "blk.2.attn_kv_b.weight")),
			on(testutil.TinyDeepSeek2KVB(), refused("older form with one KV head", setU(".attention.head_count_kv", 1), ".attention.head_count_kv = 1")),
			refused("older form with split tensors", del(".attention.key_length_mla", ".attention.value_length_mla")),
			misshapen("attn_v_b of the wrong shape", "blk.0.attn_v_b.weight", 64, 32, 2),
			refused("q_lora_rank without attn_q_a", setU(".attention.q_lora_rank", 32), "blk.0.attn_q_a.weight"),
			refused("more experts used than there are", setU(".expert_used_count", 9), ".expert_used_count = 9"),
			unset("expert_shared_count missing", ".expert_shared_count"),
			refused("shared expert of the wrong width", setU(".expert_shared_count", 3), "ffn_gate_shexp.weight"),
			refusedKey("negative expert scale", ".expert_weights_scale", float32(-1)),
			refusedKey("dense lead past the blocks", ".leading_dense_block_count", uint32(4)),
			unsupportedKey("temperature scale", ".attention.temperature_scale", float32(0.1)),
		),
		// kimi-linear: the KDA layers' tensors and keys llama.cpp
		// requires, the latent attention's and the routing's; the kernels
		// and ssm_a in the dims llama-quantize may leave them.
		family("kimi-linear", testutil.TinyKimiLinear(), requiresEach("blk.0.ssm_conv1d_v.weight", "blk.1.ssm_f_b.weight",
			"blk.3.ssm_g_a.weight", "blk.0.ssm_dt.bias", "blk.1.ssm_a", "blk.3.ssm_norm.weight", "blk.0.ssm_beta.weight",
			"blk.2.attn_k_b.weight", "blk.1.exp_probs_b.bias", "blk.3.ffn_down_shexp.weight", "output_norm.weight"),
			unset("kda.head_dim missing", ".kda.head_dim"),
			unset("conv kernel missing", ".ssm.conv_kernel"),
			unset("gating function missing", ".expert_gating_func"),
			loads("expert scale missing", del(".expert_weights_scale")),
			unset("expert_shared_count missing", ".expert_shared_count"),
			refusedKey("head_count_kv one count", ".attention.head_count_kv", uint32(1)),
			unsupportedKey("query rank", ".attention.q_lora_rank", uint32(32)),
			misshapen("decay bias one a head", "blk.0.ssm_dt.bias", 4),
			misshapen("decay's second matrix one a head", "blk.1.ssm_f_b.weight", 32, 4),
			loads("kernels 3-D, ssm_a 2-D", func(h *hmodel) {
				for _, x := range []string{"q", "k", "v"} {
					h.put("blk.0.ssm_conv1d_"+x+".weight", quant.F32, 4, 1, 128)
				}
				h.put("blk.3.ssm_a", quant.F32, 1, 4)
			}),
		),
		family("deepseek2", testutil.TinyDeepSeek3(), requiresEach("blk.2.attn_q_a_norm.weight"),
			refused("groups not dividing the experts", setU(".expert_group_count", 3), ".expert_group_count = 3 does not divide"),
			refused("every group used", setU(".expert_group_used_count", 4), ".expert_group_used_count = 4"),
			refused("groups too few for the experts used", set(".expert_group_used_count", uint32(1), ".expert_used_count", uint32(3)), ".expert_used_count = 3"),
			loads("experts' gate and up fused", edits(fuseExps(1), fuseExps(2))),
			misshapen("fused gate and up of one expert's width", "blk.1.ffn_gate_up_exps.weight", 64, 32, 8),
		),
		// mistral4: deepseek2's loader under another name, as llama-bench
		// d32676d77 was seen to take it: q_lora_rank and the RMS epsilon
		// required (deepseek2 here takes files without them), the
		// experts' gate and up fused as the converter writes them.
		family("mistral4", testutil.TinyMistral4(), requiresEach("blk.1.attn_k_b.weight", "blk.0.attn_q_a_norm.weight",
			"blk.2.ffn_down_exps.weight", "blk.1.ffn_down_shexp.weight", "output_norm.weight"),
			unset("q_lora_rank missing", ".attention.q_lora_rank"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("kv_lora_rank missing", ".attention.kv_lora_rank"),
			unset("expert_shared_count missing", ".expert_shared_count"),
			unsupportedKey("temperature scale", ".attention.temperature_scale", float32(0.1)),
			misshapen("fused gate and up of one expert's width", "blk.1.ffn_gate_up_exps.weight", 64, 32, 8),
			misshapen("attn_q_b of the wrong shape", "blk.0.attn_q_b.weight", 32, 64),
			loads("a selection bias", func(h *hmodel) {
				for l := range 3 {
					h.put(fmt.Sprintf("blk.%d.exp_probs_b.bias", l), quant.F32, 8)
				}
			}),
		),
		family("minicpm3", testutil.TinyMiniCPM3(), requires{}.named("without %s", "blk.1.attn_kv_b.weight", "blk.0.attn_q_a_norm.weight"),
			unset("q_lora_rank missing", ".attention.q_lora_rank"),
			refused("q_lora_rank 0", setU(".attention.q_lora_rank", 0), ".attention.q_lora_rank = 0"),
			refused("fewer KV heads than heads", setU(".attention.head_count_kv", 2), ".attention.head_count_kv = 2"),
			misshapen("attn_kv_a_mqa of the wrong shape", "blk.0.attn_kv_a_mqa.weight", 64, 64),
			refusedAtLoad("rope_factors_short of the wrong length", func(h *hmodel) { h.put("rope_factors_short.weight", quant.F32, 16) }, "rope_factors_short.weight"),
		),
		family("mistral3", testutil.TinyMistral3(), nil,
			refusedKey("temperature scale NaN", ".attention.temperature_scale", nan),
		),
		family("granite", testutil.TinyGranite(), nil,
			unsupportedTensor("with ffn_down.bias", "blk.0.ffn_down.bias", 64),
			unset("logit_scale missing", ".logit_scale"),
			unset("residual_scale missing", ".residual_scale"),
			refusedKey("logit_scale zero", ".logit_scale", float32(0)),
			refused("embedding_scale NaN", func(h *hmodel) { h.set(".embedding_scale", float32(math.NaN())) }, ".embedding_scale"),
			refusedKey("attention.scale a string", ".attention.scale", "1"),
			loads("without RoPE", set(".rope.scaling.finetuned", false)),
		),
		family("minicpm", testutil.TinyMiniCPM(), nil,
			refusedKey("logit_scale zero", ".logit_scale", float32(0)),
			refused("residual_scale infinite", func(h *hmodel) { h.set(".residual_scale", float32(math.Inf(1))) }, ".residual_scale"),
			loads("without its multipliers", del(".embedding_scale", ".residual_scale", ".logit_scale")),
			unsupportedTensor("with ffn_down.bias", "blk.0.ffn_down.bias", 64),
			refusedAtLoad("rope_factors_long of the wrong length", func(h *hmodel) { h.put("rope_factors_long.weight", quant.F32, 5) }, "rope_factors_long.weight"),
		),
		family("granitemoe", testutil.TinyGraniteMoE(), nil,
			refused("shared expert without its tensors", set(".expert_shared_feed_forward_length", uint32(64)), "blk.0.ffn_gate_shexp.weight"),
			// llama.cpp sizes granitemoe's experts by feed_forward_length, and
			// its converter writes no expert_feed_forward_length.
			loads("without expert_feed_forward_length", del(".expert_feed_forward_length")),
			unset("feed_forward_length missing", ".feed_forward_length"),
			unset("expert_count missing", ".expert_count"),
		),
		family("granitehybrid", testutil.TinyGraniteHybrid(), requires{
			"attention layer without attn_q": "blk.2.attn_q.weight",
		}.named("recurrent layer without %s", "blk.1.ssm_a", "blk.0.ssm_in.weight"),
			misshapen("ssm_conv1d of the wrong shape", "blk.3.ssm_conv1d.weight", 3, 192),
			misshapen("ssm_norm of ungrouped shape", "blk.0.ssm_norm.weight", 128),
			loads("without the conv bias", drop("blk.0.ssm_conv1d.bias")),
			refusedKey("groups not dividing the heads", ".ssm.group_count", uint32(3)),
			refusedKey("state size 0", ".ssm.state_size", uint32(0)),
			unset("state size missing", ".ssm.state_size"),
			refused("state size disagreeing with ssm_in", setU(".ssm.state_size", 32), "ssm_in.weight"),
			misshapen("router in a dense model", "blk.0.ffn_gate_inp.weight", 64, 8),
			on(testutil.TinyGraniteHybridMoE(), missing("shared expert missing", "blk.2.ffn_down_shexp.weight")),
			loads("NaN time-step bias", func(h *hmodel) { h.tensor("blk.0.ssm_dt.bias").data = nanData(8) }),
		),
		family("qwen35", testutil.TinyQwen35(), requires{}.named("delta-net layer without %s", "blk.1.ssm_beta.weight", "blk.0.attn_gate.weight"),
			misshapen("attn_q without the gates", "blk.3.attn_q.weight", 64, 128),
			refusedKey("inner size not heads × state", ".ssm.inner_size", uint32(128)),
			refusedKey("key heads not dividing the value heads", ".ssm.group_count", uint32(3)),
			unset("conv kernel missing", ".ssm.conv_kernel"),
			unset("rope sections missing", ".rope.dimension_sections"),
			refusedKey("rope sections all 0", ".rope.dimension_sections", []int32{0, 0, 0, 0}),
			refusedKey("full-attention interval 0", ".full_attention_interval", uint32(0)),
			refusedKey("recurrent layers of another count", ".attention.recurrent_layers", []bool{true, false}),
			refusedKey("recurrent layers a string", ".attention.recurrent_layers", "all"),
			refused("every layer recurrent", set(".attention.recurrent_layers", []bool{true, true, true, true}), "no layer attends"),
			refused("recurrent layer as attention", set(".attention.recurrent_layers", []bool{false, true, true, false}), "blk.0.attn_q.weight"),
			refusedKey("NextN blocks leaving no layer", ".nextn_predict_layers", uint32(4)),
			on(qwen35NextN(), loads("with a NextN block", func(*hmodel) {})),
		),
		family("qwen35moe", testutil.TinyQwen35MoE(), requiring("blk.0.ffn_gate_inp_shexp.weight",
			"blk.3.ffn_down_shexp.weight", "blk.0.ffn_gate_inp.weight"),
			misshapen("shared expert's gate of the wrong width", "blk.1.ffn_gate_inp_shexp.weight", 32),
			misshapen("shared expert's gate of two rows", "blk.3.ffn_gate_inp_shexp.weight", 64, 2),
			loads("shared expert's gate of one row, 2-D", func(h *hmodel) { h.put("blk.2.ffn_gate_inp_shexp.weight", quant.F32, 64, 1) }),
			on(testutil.TinyQwen35MoEFused(), misshapen("fused gate and up of one expert's width", "blk.1.ffn_gate_up_exps.weight", 64, 32, 8)),
			on(testutil.TinyQwen35MoEFused(), misshapen("fused gate and up of the wrong count", "blk.2.ffn_gate_up_exps.weight", 64, 64, 4)),
			loads("fused gate and up in one block, separate in another", func(h *hmodel) {
				h.drop("blk.2.ffn_gate_exps.weight")
				h.drop("blk.2.ffn_up_exps.weight")
				h.put("blk.2.ffn_gate_up_exps.weight", quant.F32, 64, 64, 8)
			}),
			misshapen("experts of the wrong count", "blk.2.ffn_up_exps.weight", 64, 32, 4),
			refused("dense feed-forward instead of experts", func(h *hmodel) {
				for _, n := range []string{"ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"} {
					h.drop("blk.1." + n + ".weight")
				}
				h.put("blk.1.ffn_gate.weight", quant.F32, 64, 128)
				h.put("blk.1.ffn_up.weight", quant.F32, 64, 128)
				h.put("blk.1.ffn_down.weight", quant.F32, 128, 64)
			}, "blk.1.ffn_gate_inp.weight"),
			refusedKey("shared expert width 0", ".expert_shared_feed_forward_length", uint32(0)),
			// Without the key llama.cpp takes feed_forward_length (128 here),
			// which the shared expert's 64 rows then disagree with.
			refused("shared expert width missing", del(".expert_shared_feed_forward_length"), "blk.0.ffn_gate_shexp.weight"),
			refusedKey("more experts used than there are", ".expert_used_count", uint32(9)),
			unset("expert_count missing", ".expert_count"),
			refusedKey("inner size not heads × state", ".ssm.inner_size", uint32(128)),
		),
		// qwen2moe: llama.cpp's loader requires the router, experts, shared
		// expert and its gate, output.weight and the RMS epsilon; the
		// widths default as it sizes them (FFN/used: 64, not the file's
		// 32); Q/K/V biases optional, an output bias refused.
		family("qwen2moe", testutil.TinyQwen2MoE(), requiring("output.weight", "blk.0.ffn_gate_inp.weight",
			"blk.1.ffn_up_shexp.weight", "blk.1.ffn_gate_inp_shexp.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			refused("experts' width defaulted", del(".expert_feed_forward_length"), "blk.0.ffn_gate_exps.weight"),
			refused("shared width defaulted", del(".expert_shared_feed_forward_length"), "blk.0.ffn_gate_shexp.weight"),
			withoutQKVBiases(1),
			misshapen("attn_k.bias of the query's width", "blk.0.attn_k.bias", 64),
			misshapen("shared expert's gate of the wrong width", "blk.0.ffn_gate_inp_shexp.weight", 32),
			unsupportedTensor("attn_output.bias", "blk.1.attn_output.bias", 64),
		),
		// phimoe: llama.cpp's loader requires the router and experts,
		// every norm's bias, attn_output's bias, the untied output and its
		// bias, and the RMS epsilon; the experts are as wide as
		// feed_forward_length whatever expert_feed_forward_length says; Q,
		// K and V fused or apart, their biases optional; LongRoPE's
		// factors optional; no expert has a bias.
		family("phimoe", testutil.TinyPhiMoE(), requiring("output.weight", "output.bias", "output_norm.bias",
			"blk.1.attn_norm.bias", "blk.0.ffn_norm.bias", "blk.1.attn_output.bias", "blk.0.ffn_gate_inp.weight",
			"blk.1.ffn_up_exps.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			loads("expert_feed_forward_length not read", set(".expert_feed_forward_length", uint32(64))),
			refusedKey("more experts used than there are", ".expert_used_count", uint32(9)),
			withoutQKVBiases(0),
			misshapen("attn_k.bias of the query's width", "blk.0.attn_k.bias", 64),
			loads("Q, K and V fused", func(h *hmodel) {
				for _, n := range []string{"attn_q", "attn_k", "attn_v"} {
					h.drop("blk.1." + n + ".weight")
					h.drop("blk.1." + n + ".bias")
				}
				h.put("blk.1.attn_qkv.weight", quant.F32, 64, 128)
				h.put("blk.1.attn_qkv.bias", quant.F32, 128)
			}),
			loads("without LongRoPE's factors", drop("rope_factors_long.weight", "rope_factors_short.weight")),
			misshapen("rope_factors_long of the whole head", "rope_factors_long.weight", 16),
			unsupportedTensor("an expert's bias", "blk.0.ffn_down_exps.bias", 64, 8),
		),
		// mellum: llama.cpp's loader requires the router, experts, Q/K
		// norms, output.weight, the RMS epsilon, the experts' width (0
		// sizing them FFN/used: 64, not the file's 32) and, with a window,
		// its pattern, which must window some layer (llama.cpp asserts);
		// Q, K and V fused or apart, their biases optional; no
		// attn_output bias; expert_weights_scale not read.
		family("mellum", testutil.TinyMellum(), requiring("output.weight", "blk.0.ffn_gate_inp.weight",
			"blk.1.ffn_up_exps.weight", "blk.2.attn_q_norm.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("experts' width missing", ".expert_feed_forward_length"),
			refused("experts' width 0, defaulted", set(".expert_feed_forward_length", uint32(0)), "blk.0.ffn_gate_exps.weight"),
			unset("window pattern missing", ".attention.sliding_window_pattern"),
			refusedKey("pattern windowing no layer", ".attention.sliding_window_pattern", []bool{false, false, false, false}),
			loads("without a window", del(".attention.sliding_window", ".attention.sliding_window_pattern")),
			loads("expert_weights_scale not read", set(".expert_weights_scale", float32(2))),
			withQKVBiases(0, 64, 32),
			on(testutil.TinyMellumPattern(), loads("fused with its bias", func(h *hmodel) { h.put("blk.1.attn_qkv.bias", quant.F32, 128) })),
			unsupportedTensor("attn_output.bias", "blk.1.attn_output.bias", 64),
		),
		// grovemoe: llama.cpp's loader requires the router, experts,
		// adjugate experts, Q/K norms, the RMS epsilon, the experts'
		// width (0 sizing them FFN/used: 64, not the file's 32),
		// experts_per_group and expert_group_scale; the adjugate width
		// absent means the head size (16, not the file's 32); the output
		// tied when absent; Q/K/V biases optional, no attn_output bias;
		// experts_per_group must divide the experts into at least
		// expert_used_count groups (llama.cpp asserts on too few).
		family("grovemoe", testutil.TinyGroveMoE(), requires{
			"adjugate experts missing": "blk.1.ffn_up_chexps.weight",
			"adjugate gate missing":    "blk.2.ffn_gate_chexps.weight",
		}.and("blk.0.ffn_gate_inp.weight", "blk.1.ffn_up_exps.weight", "blk.2.attn_q_norm.weight", "blk.3.attn_k_norm.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("experts' width missing", ".expert_feed_forward_length"),
			unset("experts_per_group missing", ".experts_per_group"),
			unset("expert_group_scale missing", ".expert_group_scale"),
			refused("experts' width 0, defaulted", set(".expert_feed_forward_length", uint32(0)), "blk.0.ffn_gate_exps.weight"),
			refused("adjugate width absent, the head size", del(".expert_chunk_feed_forward_length"), "blk.0.ffn_gate_chexps.weight"),
			refusedKey("groups of 3 of 8 experts", ".experts_per_group", uint32(3)),
			refusedKey("fewer groups than experts a token", ".expert_used_count", uint32(5)),
			loads("without an output matrix (tied)", drop("output.weight")),
			withQKVBiases(0, 64, 32),
			unsupportedTensor("attn_output.bias", "blk.1.attn_output.bias", 64),
		),
		// maincoder: per-head Q/K norms and the RMS epsilon required; the
		// output tied unless the file has output.weight; Q/K/V biases
		// optional, no attn_output bias; a sliding window not read.
		family("maincoder", testutil.TinyMaincoder(), requiresEach("blk.0.attn_q_norm.weight", "blk.1.attn_k_norm.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			loads("with an output matrix", func(h *hmodel) { h.put("output.weight", quant.F32, 64, 320) }),
			withQKVBiases(1, 64, 32),
			unsupportedTensor("attn_output.bias", "blk.0.attn_output.bias", 64),
			loads("sliding window not read", set(".attention.sliding_window", uint32(4))),
		),
		// plamo3: llama.cpp's loader requires attn_qkv (never Q, K and V
		// apart), the per-head Q/K norms, the norms after attention and
		// the feed-forward by their names without .weight, ffn_up of the
		// gate and up rows (no ffn_gate) and the RMS epsilon; the output
		// tied unless the file has output.weight; no rope_freqs; with a
		// window, a pattern (default a period of 8) that windows some
		// layer (llama.cpp asserts on a period of 1).
		family("plamo3", testutil.TinyPlamo3(), requiresEach("blk.0.attn_qkv.weight", "blk.1.attn_q_norm.weight", "blk.2.attn_k_norm.weight",
			"blk.3.post_attention_norm", "blk.0.post_ffw_norm", "blk.1.ffn_up.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			refused("post norms named .weight", func(h *hmodel) {
				h.drop("blk.0.post_attention_norm")
				h.put("blk.0.post_attention_norm.weight", quant.F32, 64)
			}, "blk.0.post_attention_norm"),
			qkvApart(),
			misshapen("ffn_up without the gate rows", "blk.2.ffn_up.weight", 64, 128),
			unsupportedTensor("ffn_gate", "blk.0.ffn_gate.weight", 64, 128),
			unsupportedTensor("rope_freqs", "rope_freqs.weight", 8),
			loads("with an output matrix", func(h *hmodel) { h.put("output.weight", quant.F32, 64, 320) }),
			loads("without a window", del(".attention.sliding_window", ".attention.sliding_window_pattern", ".rope.freq_base_swa")),
			loads("window pattern missing, a period of 8", del(".attention.sliding_window_pattern")),
			refusedKey("period 1, windowing no layer", ".attention.sliding_window_pattern", uint32(1)),
			unsupported("YaRN with a windowed base of its own", edits(set(".rope.scaling.type", "yarn"), set(".rope.scaling.factor", float32(4))),
				".rope.freq_base_swa"),
			// PLaMo 3's converter writes plamo2's own tokenizer, which
			// this package does not run.
			unsupportedAtLoad("plamo2's tokenizer", set("tokenizer.ggml.model", "plamo2"), "plamo2"),
		),
		family("qwen3next", testutil.TinyQwen3Next(), requires{
			"attn_gate missing beside attn_qkv": "blk.0.attn_gate.weight",
		}.and("blk.1.ssm_ba.weight", "blk.3.ffn_gate_inp_shexp.weight"),
			misshapen("ssm_ba of one value head's width", "blk.0.ssm_ba.weight", 64, 4),
			on(testutil.TinyQwen3NextSSMIn(), misshapen("ssm_in without z", "blk.2.ssm_in.weight", 64, 128)),
			refused("with qwen35's ssm_beta and ssm_alpha", func(h *hmodel) {
				h.drop("blk.1.ssm_ba.weight")
				h.put("blk.1.ssm_beta.weight", quant.F32, 64, 4)
				h.put("blk.1.ssm_alpha.weight", quant.F32, 64, 4)
			}, "blk.1.ssm_ba.weight"),
			refusedKey("without experts", ".expert_count", uint32(0)),
			refusedKey("key heads not dividing the value heads", ".ssm.group_count", uint32(3)),
		),
		family("nemotron_h", testutil.TinyNemotronH(), requires{
			"feed-forward without ffn_up":    "blk.1.ffn_up.weight",
			"attention layer without attn_k": "blk.3.attn_k.weight",
		}.named("Mamba-2 layer without %s", "blk.0.ssm_in.weight", "blk.5.ssm_d"),
			misshapen("ssm_in of an inner size of 2 × the width", "blk.2.ssm_in.weight", 64, 328),
			misshapen("ssm_norm of ungrouped shape", "blk.0.ssm_norm.weight", 96),
			misshapen("ffn_down of another width than its layer's", "blk.4.ffn_down.weight", 96, 64),
			misshapen("attn_q of width / heads", "blk.6.attn_q.weight", 64, 64),
			misshapen("ffn_up.bias of the wrong length", "blk.1.ffn_up.bias", 64),
			loads("with ffn_up and ffn_down biases", func(h *hmodel) {
				h.put("blk.1.ffn_up.bias", quant.F32, 128)
				h.put("blk.1.ffn_down.bias", quant.F32, 64)
			}),
			loads("with attention biases", func(h *hmodel) {
				h.put("blk.3.attn_q.bias", quant.F32, 96)
				h.put("blk.3.attn_output.bias", quant.F32, 64)
			}),
			loads("without the conv bias", drop("blk.0.ssm_conv1d.bias")),
			refusedKey("one feed-forward width", ".feed_forward_length", uint32(128)),
			refusedKey("feed-forward widths of another count", ".feed_forward_length", []int32{0, 128}),
			refused("a Mamba-2 layer given a width", set(".feed_forward_length", []int32{128, 128, 0, 0, 128, 0, 0}), "blk.0.ffn_up.weight"),
			refused("an attention layer given a width", set(".feed_forward_length", []int32{0, 128, 0, 128, 128, 0, 0}), "blk.3.ffn_up.weight"),
			refused("no attention layer", set(".attention.head_count_kv", []int32{0, 0, 0, 0, 0, 0, 0}), "no layer attends"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("inner size missing", ".ssm.inner_size"),
			refusedKey("heads not dividing the inner size", ".ssm.time_step_rank", uint32(7)),
			unsupportedKey("with experts", ".expert_count", uint32(8)),
			loads("NaN A", func(h *hmodel) { h.tensor("blk.2.ssm_a").data = nanData(8) }),
		),
		family("nemotron_h_moe", testutil.TinyNemotronHMoE(), requires{
			"without the selection bias":     "blk.1.exp_probs_b.bias",
			"without the shared expert's up": "blk.4.ffn_up_shexp.weight",
		},
			misshapen("experts of another width", "blk.1.ffn_up_exps.weight", 64, 32, 8),
			unset("expert width missing", ".expert_feed_forward_length"),
			// Nemotron 3 Super's latent experts, which llama.cpp's graph
			// runs between the router and the experts.
			unsupported("latent experts", edits(add("blk.1.ffn_latent_down.weight", 64, 64), add("blk.1.ffn_latent_up.weight", 64, 64)), "blk.1.ffn_latent_down.weight"),
			unset("shared width missing", ".expert_shared_feed_forward_length"),
			refusedKey("more used than experts", ".expert_used_count", uint32(9)),
			refusedKey("scale NaN", ".expert_weights_scale", nan),
			unsupportedKey("latent experts", ".moe_latent_size", uint32(32)),
			unsupportedKey("NextN blocks", ".nextn_predict_layers", uint32(1)),
			loads("without the weights' scale", del(".expert_weights_scale")),
		),
		// glm4moe: the attention biases, the selection bias and the shared
		// expert are required (llama.cpp's loader); the Q/K norms optional,
		// as a pair; the NextN block (blk.3) must hold an ordinary block's
		// tensors and its own required ones, by name: its shapes are not
		// checked and its optional ones may be missing, as llama.cpp skips
		// it unread.
		family("glm4moe", testutil.TinyGLM4MoE(), requires{
			"attn_k_norm without attn_q_norm": "blk.1.attn_q_norm.weight",
			"NextN projection missing":        "blk.3.nextn.eh_proj.weight",
			"NextN experts missing":           "blk.3.ffn_down_exps.weight",
		}.and("blk.1.exp_probs_b.bias", "blk.2.attn_k.bias", "blk.2.ffn_up_shexp.weight"),
			misshapen("attn_q_norm of half a head", "blk.1.attn_q_norm.weight", 16),
			loads("without Q/K norms", func(h *hmodel) {
				for il := range 4 {
					h.drop(fmt.Sprintf("blk.%d.attn_q_norm.weight", il))
					h.drop(fmt.Sprintf("blk.%d.attn_k_norm.weight", il))
				}
			}),
			loads("NextN projection misshapen", func(h *hmodel) { h.put("blk.3.nextn.eh_proj.weight", quant.F32, 7) }),
			loads("NextN without its shared head norm", drop("blk.3.nextn.shared_head_norm.weight")),
			refusedKey("NextN blocks leaving no layer", ".nextn_predict_layers", uint32(4)),
			refused("two NextN blocks, one without NextN tensors", setU(".nextn_predict_layers", 2), "blk.2.nextn.eh_proj.weight"),
			refused("expert groups not dividing", set(".expert_group_count", uint32(3), ".expert_group_used_count", uint32(2)), ".expert_group_count"),
			unset("shared count missing", ".expert_shared_count"),
			unset("scale missing", ".expert_weights_scale"),
			unsupportedKey("gating unknown", ".expert_gating_func", uint32(9)),
			unsupportedKey("multimodal RoPE", ".rope.dimension_sections", []int32{4, 2, 2, 0}),
		),
		// bailingmoe2: attn_qkv alone (never the separate projections),
		// the Q/K norms required, the selection bias optional but of the
		// experts' count; the NextN block's layer_output_norm required;
		// no attention output bias (llama.cpp's loader takes none).
		family("bailingmoe2", testutil.TinyBailingMoE2(), requires{
			"NextN layer_output_norm missing": "blk.3.layer_output_norm.weight",
			"NextN hnorm missing":             "blk.3.nextn.hnorm.weight",
		}.and("blk.1.attn_qkv.weight", "blk.2.attn_k_norm.weight", "output.weight"),
			qkvApart(),
			loads("without its selection bias", drop("blk.1.exp_probs_b.bias")),
			misshapen("exp_probs_b.bias one short", "blk.2.exp_probs_b.bias", 7),
			misshapen("shared expert of the experts' width", "blk.1.ffn_gate_shexp.weight", 64, 32),
			unsupportedTensor("attn_output.bias", "blk.1.attn_output.bias", 64),
			refusedKey("every group used", ".expert_group_used_count", uint32(4)),
			unset("shared width missing", ".expert_shared_feed_forward_length"),
			unset("gating missing", ".expert_gating_func"),
		),
		family("olmoe", testutil.TinyOLMoE(), requiring("output.weight").named("without %s", "blk.1.attn_k_norm.weight", "blk.0.ffn_gate_inp.weight"),
			refused("expert_used_count 0", setU(".expert_used_count", 0), ".expert_used_count = 0"),
			unset("feed_forward_length missing", ".feed_forward_length"),
			loads("without expert_feed_forward_length", del(".expert_feed_forward_length")),
			misshapen("attn_q_norm of a head's width", "blk.0.attn_q_norm.weight", 16),
		),
		// minimax-m2: llama.cpp's loader requires the untied output, the
		// Q/K norms (across all heads), the router, its selection bias and
		// the experts, the RMS epsilon, expert_feed_forward_length (not
		// read for the experts' width: feed_forward_length is) and, for its
		// graph, the gating function; Q, K and V fused or apart, without
		// biases; no shared expert.
		family("minimax-m2", testutil.TinyMiniMaxM2(), requires{
			"without attn_q_norm": "blk.1.attn_q_norm.weight",
			"without exp_probs_b": "blk.0.exp_probs_b.bias",
		}.and("output.weight", "blk.1.ffn_gate_exps.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("gating missing", ".expert_gating_func"),
			unset("expert_feed_forward_length missing", ".expert_feed_forward_length"),
			loads("expert_feed_forward_length not read", set(".expert_feed_forward_length", uint32(64))),
			misshapen("attn_k_norm of a head's width", "blk.0.attn_k_norm.weight", 32),
			loads("Q, K and V fused", func(h *hmodel) {
				for _, n := range []string{"attn_q", "attn_k", "attn_v"} {
					h.drop("blk.1." + n + ".weight")
				}
				h.put("blk.1.attn_qkv.weight", quant.F32, 64, 256)
			}),
			unsupportedTensor("attn_q.bias", "blk.0.attn_q.bias", 128),
			unsupportedTensor("a shared expert", "blk.1.ffn_up_shexp.weight", 64, 32),
		),
		// exaone-moe: llama.cpp's loader requires the untied output, the
		// per-head Q/K norms, the router and experts past the dense lead,
		// the shared expert (of expert_shared_feed_forward_length, else the
		// experts' width), the RMS epsilon, the window and the gating
		// function, and in the NextN block a dense feed-forward beside its
		// projection and norms; the selection bias and the Q/K/V biases
		// optional; Q, K and V fused or apart.
		family("exaone-moe", testutil.TinyExaoneMoE(), requires{
			"without attn_k_norm":             "blk.2.attn_k_norm.weight",
			"NextN's dense feed-forward":      "blk.4.ffn_gate.weight",
			"NextN's projection missing":      "blk.4.nextn.eh_proj.weight",
			"dense layer 0's gate missing":    "blk.0.ffn_gate.weight",
			"experts missing after the dense": "blk.1.ffn_up_exps.weight",
		}.and("output.weight", "blk.1.ffn_gate_inp.weight", "blk.3.ffn_down_shexp.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("window missing", ".attention.sliding_window"),
			unset("gating missing", ".expert_gating_func"),
			refused("shared width of its own", set(".expert_shared_feed_forward_length", uint32(64)), "blk.1.ffn_gate_shexp.weight"),
			loads("without exp_probs_b", drop("blk.1.exp_probs_b.bias", "blk.2.exp_probs_b.bias", "blk.3.exp_probs_b.bias")),
			misshapen("attn_q_norm across the heads", "blk.1.attn_q_norm.weight", 64),
			loads("Q, K and V fused with a bias", func(h *hmodel) {
				for _, n := range []string{"attn_q", "attn_k", "attn_v"} {
					h.drop("blk.2." + n + ".weight")
				}
				h.put("blk.2.attn_qkv.weight", quant.F32, 64, 128)
				h.put("blk.2.attn_qkv.bias", quant.F32, 128)
			}),
			loads("attn_q.bias", func(h *hmodel) { h.put("blk.0.attn_q.bias", quant.F32, 64) }),
			unsupportedTensor("attn_output.bias", "blk.1.attn_output.bias", 64),
		),
		// falcon: attn_qkv alone, without bias, and no other projection
		// bias (llama.cpp d32676d77 refuses a file with one: a tensor it
		// does not load); the LayerNorms' biases and epsilon required;
		// attn_norm_2 taken block by block, its bias optional, as
		// llama.cpp takes them; whole heads rotated (llama.cpp refuses
		// another rope.dimension_count); the output tied without
		// output.weight.
		layerNormFamily("falcon", testutil.TinyFalcon(), requiresEach("blk.0.attn_qkv.weight"),
			unsupportedTensor("attn_qkv.bias", "blk.0.attn_qkv.bias", 96),
			unsupportedTensor("attn_output.bias", "blk.1.attn_output.bias", 64),
			refusedKey("half the head rotated", ".rope.dimension_count", uint32(8)),
			loads("with output.weight", add("output.weight", 64, 320)),
			misshapen("output.weight of another width", "output.weight", 32, 320),
			loads("attn_norm_2 in block 1 alone", func(h *hmodel) {
				h.put("blk.1.attn_norm_2.weight", quant.F32, 64)
				h.put("blk.1.attn_norm_2.bias", quant.F32, 64)
			}),
		),
		// Falcon-40B's attn_norm_2, block by block, must fit; llama.cpp
		// loads a bias without its weight, and its graph, as this
		// package, ignores it.
		family("falcon 40B", testutil.TinyFalcon40B(), nil,
			loads("without attn_norm_2's bias", drop("blk.1.attn_norm_2.bias")),
			loads("without attn_norm_2 in block 1", drop("blk.1.attn_norm_2.weight", "blk.1.attn_norm_2.bias")),
			misshapen("attn_norm_2 of the wrong width", "blk.0.attn_norm_2.weight", 32),
			loads("attn_norm_2's bias without its weight", drop("blk.0.attn_norm_2.weight")),
		),
		// bloom: gpt2's blocks without positions (a position_embd, which
		// llama.cpp's bloom loader does not take, is refused), the
		// embeddings' LayerNorm and every bias required as llama.cpp
		// requires them; attn_qkv alone; the output tied or not.
		layerNormFamily("bloom", testutil.TinyBloom(), requiresEach("token_embd_norm.weight", "token_embd_norm.bias", "blk.1.attn_qkv.bias",
			"blk.0.attn_output.bias", "blk.1.ffn_norm.bias", "blk.0.ffn_up.bias", "blk.1.ffn_down.bias"),
			misshapen("attn_qkv.bias without the value's", "blk.1.attn_qkv.bias", 192),
			misshapen("token_embd_norm of the wrong width", "token_embd_norm.weight", 64),
			unsupportedTensor("position_embd", "position_embd.weight", 96, 256),
			loads("with output.weight", func(h *hmodel) { h.put("output.weight", quant.F32, 96, 320) }),
		),
		// mpt: every bias optional block by block, as llama.cpp's mpt
		// loader takes them; max_alibi_bias and clamp_kqv optional
		// (llama-bench d32676d77 loads a file without either); the AWQ
		// activation scales (ffn_act) and Q/K LayerNorms llama.cpp also
		// takes are not run here: refused.
		family("mpt", testutil.TinyMPTClamp(), requires{"attn_qkv missing": "blk.0.attn_qkv.weight"},
			unset("layer_norm_epsilon missing", ".attention.layer_norm_epsilon"),
			loads("without max_alibi_bias", del(".attention.max_alibi_bias")),
			refusedKey("max_alibi_bias not finite", ".attention.max_alibi_bias", float32(math.NaN())),
			loads("without clamp_kqv", del(".attention.clamp_kqv")),
			refusedKey("clamp_kqv not finite", ".attention.clamp_kqv", float32(math.Inf(1))),
			loads("without block 1's biases", drop("blk.1.attn_norm.bias", "blk.1.attn_qkv.bias", "blk.1.attn_output.bias", "blk.1.ffn_norm.bias",
				"blk.1.ffn_up.bias", "blk.1.ffn_down.bias")),
			loads("without output_norm.bias", drop("output_norm.bias")),
			misshapen("attn_qkv.bias without the value's", "blk.1.attn_qkv.bias", 320),
			misshapen("attn_norm.bias of the wrong width", "blk.0.attn_norm.bias", 64),
			unsupportedTensor("AWQ activation scales", "blk.0.ffn_act.scales", 128),
			unsupported("Q/K LayerNorms", func(h *hmodel) {
				h.put("blk.0.attn_q_norm.weight", quant.F32, 160)
				h.put("blk.0.attn_k_norm.weight", quant.F32, 160)
			}, "blk.0.attn_"),
		),
		family("gemma-embedding", testutil.TinyGemmaEmbedding(), nil,
			unset("sliding_window missing", ".attention.sliding_window"),
			unset("pooling_type missing", ".pooling_type"),
			// llama.cpp loads an output matrix its graph never reads.
			loads("with output.weight", add("output.weight", 64, 320)),
			refusedAtLoad("dense_3 missing", drop("dense_3.weight"), "dense_3.weight"),
			refusedAtLoad("dense_3 of the wrong shape", func(h *hmodel) { h.put("dense_3.weight", quant.F32, 96, 32) }, "dense_3.weight"),
			loads("without dense", drop("dense_2.weight", "dense_3.weight")),
			refusedAtLoad("dense_2_feat_out disagrees", set(".dense_2_feat_out", uint32(95)), ".dense_2_feat_out"),
		),
		family("qwen2", testutil.TinyQwen2(), requires{
			"bias missing": "blk.1.attn_k.bias",
		},
			loads("with output.bias", add("output.bias", 320)),
			misshapen("output.bias of the embedding's width", "output.bias", 64),
		),
		// ernie4_5's Q/K/V biases are optional one by one (llama.cpp's
		// TENSOR_NOT_REQUIRED), but one present must fit; an output bias,
		// which llama.cpp loads and its graph never adds, is refused.
		family("ernie4_5", testutil.TinyErnie45(), nil,
			loads("without a bias", drop("blk.1.attn_k.bias")),
			misshapen("attn_q.bias of the embedding's width", "blk.0.attn_q.bias", 64),
			misshapen("attn_v.bias 2-D", "blk.1.attn_v.bias", 32, 2),
			unsupportedTensor("attn_output.bias", "blk.0.attn_output.bias", 64),
		),
		// seed_oss: its norm before the feed-forward is post_attention_norm
		// (required; an ffn_norm does not stand in for it); biases as
		// ernie4_5's.
		family("seed_oss", testutil.TinySeedOSS(), nil,
			refused("post_attention_norm missing", func(h *hmodel) {
				h.drop("blk.1.post_attention_norm.weight")
				h.put("blk.1.ffn_norm.weight", quant.F32, 64)
			}, "blk.1.post_attention_norm.weight"),
			withoutQKVBiases(0),
			misshapen("attn_k.bias of the query's width", "blk.1.attn_k.bias", 128),
		),
		// exaone4: its norms after attention and the feed-forward and its
		// per-head Q/K norms are required; the 32B's window, when stated,
		// must be a window.
		family("exaone4", testutil.TinyExaone4(), requiresEach("blk.1.post_ffw_norm.weight", "blk.0.attn_k_norm.weight"),
			misshapen("attn_q_norm across all heads", "blk.0.attn_q_norm.weight", 64),
			on(testutil.TinyExaone4SWA(), refused("64 layers without a window", setU(".attention.sliding_window", 0), ".attention.sliding_window")),
			loads("30 layers' window ignored", setU(".attention.sliding_window", 0)),
		),
		// ernie4_5-moe: the selection bias is optional (llama.cpp's
		// TENSOR_NOT_REQUIRED) but must fit; the shared expert is required
		// when its width is set, the experts' gate always (llama.cpp would
		// run a file without it as SiLU of up alone); layer 0 is dense;
		// experts on every step-th layer only are not run; an output bias,
		// which llama.cpp never adds, is refused as ernie4_5's.
		family("ernie4_5-moe", testutil.TinyErnie45MoE(), requires{
			"experts' gate missing": "blk.1.ffn_gate_exps.weight",
		}.and("blk.2.ffn_down_shexp.weight"),
			loads("without its selection bias", drop("blk.1.exp_probs_b.bias")),
			misshapen("exp_probs_b.bias one short", "blk.2.exp_probs_b.bias", 7),
			misshapen("router in the dense layer", "blk.0.ffn_gate_inp.weight", 64, 8),
			unsupportedKey("experts every other layer", ".interleave_moe_layer_step", uint32(2)),
			unset("step missing", ".interleave_moe_layer_step"),
			unsupportedTensor("attn_output.bias", "blk.1.attn_output.bias", 64),
		),
		// falcon-h1: every layer has both the attention and the Mamba-2
		// mixer; ffn_norm is named without .weight (llama.cpp d32676d77
		// refuses a file whose norm is ffn_norm.weight); the mixer's gated
		// norm is optional (mamba_rms_norm) and rope_freqs ignored, as
		// llama.cpp's graph passes none; an output bias, which llama.cpp
		// loads and never adds, is refused.
		family("falcon-h1", testutil.TinyFalconH1(), requires{
			"mixer without ssm_in": "blk.1.ssm_in.weight",
			"layer without attn_k": "blk.2.attn_k.weight",
		}.and("blk.0.ffn_norm"),
			refused("ffn_norm.weight in its place", func(h *hmodel) {
				h.drop("blk.0.ffn_norm")
				h.put("blk.0.ffn_norm.weight", quant.F32, 64)
			}, "blk.0.ffn_norm"),
			misshapen("ssm_in of a mixer twice the width", "blk.0.ssm_in.weight", 64, 390),
			loads("without the gated norm", drop("blk.1.ssm_norm.weight")),
			loads("rope_freqs ignored", func(h *hmodel) { h.put("rope_freqs.weight", quant.F32, 8) }),
			unsupportedTensor("attn_output.bias", "blk.1.attn_output.bias", 64),
			unset("state size missing", ".ssm.state_size"),
		),
		// jamba: a Mamba-1 layer's tensors are all required (its norms of
		// the time step's rank, B and C too), A holds a decay per channel
		// and state element, the inner size is twice the width, some layer
		// attends, and a router needs expert_count.
		family("jamba", testutil.TinyJamba(), requires{}.
			named("Mamba layer without %s", "blk.0.ssm_x.weight", "blk.1.ssm_b_norm.weight", "blk.3.ssm_dt.weight").
			named("attention layer without %s", "blk.2.attn_q.weight").
			named("dense layer without %s", "blk.0.ffn_gate.weight"),
			misshapen("ssm_a of one decay a channel", "blk.0.ssm_a", 1, 128),
			misshapen("ssm_x of a wider rank", "blk.1.ssm_x.weight", 128, 48),
			refusedKey("inner size not twice the width", ".ssm.inner_size", uint32(96)),
			unset("time step rank missing", ".ssm.time_step_rank"),
			refusedKey("time step rank above the inner size", ".ssm.time_step_rank", uint32(129)),
			refusedKey("with no attention layer", ".attention.head_count_kv", []int32{0, 0, 0, 0}),
			refusedKey("head_count_kv of one value", ".attention.head_count_kv", uint32(2)),
			refused("router without expert_count", del(".expert_count"), "blk.1.ffn_gate_inp.weight"),
		),
		// mamba: every block's Mamba-1 tensors are required, D of one
		// value a channel, and the ssm.* sizes must agree with them.
		family("mamba", testutil.TinyMamba(), requires{}.named("layer without %s", "blk.2.ssm_a", "blk.0.ssm_conv1d.bias"),
			misshapen("ssm_conv1d of another kernel", "blk.1.ssm_conv1d.weight", 3, 128),
			misshapen("ssm_d of one value", "blk.1.ssm_d", 1),
			unset("state size missing", ".ssm.state_size"),
			refused("state size of another file", setU(".ssm.state_size", 8), "blk.0.ssm_x.weight"),
			refusedKey("kernel huge", ".ssm.conv_kernel", uint32(1<<20)),
		),
		// mamba2 (TinyMamba2: inner 128 in 8 heads, 2 groups, state 16,
		// kernel 4, so a block's convolution is 192 channels wide and
		// ssm_in 328): every tensor llama.cpp's loader requires, their
		// sizes, and the ssm.* keys that size them.
		family("mamba2", testutil.TinyMamba2(), requires{
			"without the kernel's bias":    "blk.0.ssm_conv1d.bias",
			"without the time steps' bias": "blk.2.ssm_dt.bias",
		}.named("without %s", "blk.1.ssm_norm.weight", "blk.1.ssm_a", "output_norm.weight"),
			misshapen("kernel of 3 taps", "blk.1.ssm_conv1d.weight", 3, 192),
			misshapen("A of one value a group", "blk.0.ssm_a", 1, 2),
			misshapen("ssm_norm of one group", "blk.2.ssm_norm.weight", 128, 1),
			misshapen("ssm_in without dt", "blk.0.ssm_in.weight", 64, 320),
			unset("group count missing", ".ssm.group_count"),
			refused("group count of another file", setU(".ssm.group_count", 4), "blk.0.ssm_in.weight"),
			refused("heads of another file", setU(".ssm.time_step_rank", 16), "blk.0.ssm_in.weight"),
			refusedKey("heads not dividing the inner size", ".ssm.time_step_rank", uint32(6)),
			refusedKey("kernel huge", ".ssm.conv_kernel", uint32(1<<20)),
			unset("norm epsilon missing", ".attention.layer_norm_rms_epsilon"),
		),
		// rwkv7: every LoRA tensor, norm bias and the ends' norms are
		// required; the ranks and the head size must agree with the
		// tensors and the width; token_shift_count is 2.
		family("rwkv7", testutil.TinyRWKV7(), requires{
			"layer without the group norm's bias": "blk.0.time_mix_ln.bias",
			"without an output matrix":            "output.weight",
		}.named("layer without %s", "blk.1.time_mix_w1.weight", "blk.2.time_mix_a2.weight", "blk.1.time_mix_v2.weight",
			"blk.0.time_mix_g1.weight").
			named("without %s", "token_embd_norm.weight", "output_norm.bias"),
			misshapen("lerp_fused of five mixes", "blk.1.time_mix_lerp_fused.weight", 128, 1, 1, 5),
			misshapen("layer 0 value pair at the value rank", "blk.0.time_mix_v1.weight", 128, 96),
			refused("decay rank of another file", setU(".attention.decay_lora_rank", 64), "blk.0.time_mix_w1.weight"),
			unset("gate rank missing", ".attention.gate_lora_rank"),
			refusedKey("rank wider than the model", ".attention.iclr_lora_rank", uint32(256)),
			refusedKey("head size not dividing the width", ".wkv.head_size", uint32(48)),
			refusedKey("head size 0", ".wkv.head_size", uint32(0)),
			refusedKey("three token shifts", ".token_shift_count", uint32(3)),
		),
		// rwkv6: the data-dependent mix's and the decay's pairs, lerp_x,
		// the fused lerps or, in an older file, all five apart (beside the
		// fused ones each is checked and left unread), time_mix_first, the gate,
		// the channel mix's receptance and the ends' norms are required;
		// the extra dims and the head size must agree with the tensors
		// and the width; rescale_every_n_layers is optional.
		family("rwkv6", testutil.TinyRWKV6(), rwkv6Requires(requires{
			"without token_embd_norm's bias": "token_embd_norm.bias",
			"without output_norm.bias":       "output_norm.bias",
			"without an output matrix":       "output.weight",
		}, "channel_mix_receptance", "channel_mix_lerp_r", "time_mix_first", "time_mix_ln"),

			misshapen("time_mix_w2 of four matrices", "blk.1.time_mix_w2.weight", 32, 128, 4),
			misshapen("lerp_fused of six mixes", "blk.0.time_mix_lerp_fused.weight", 128, 1, 1, 6),
			misshapen("time_mix_first flat", "blk.2.time_mix_first.weight", 128),
			refused("mix dim of another file", setU(".time_mix_extra_dim", 64), "blk.0.time_mix_w1.weight"),
			refused("decay dim of another file", setU(".time_decay_extra_dim", 32), "blk.0.time_mix_decay_w1.weight"),
			unset("decay dim missing", ".time_decay_extra_dim"),
			refusedKey("mix dim wider than the model", ".time_mix_extra_dim", uint32(256)),
			refusedKey("head size not dividing the width", ".wkv.head_size", uint32(48)),
			refusedKey("three token shifts", ".token_shift_count", uint32(3)),
			loads("without rescale_every_n_layers", func(h *hmodel) { h.del(".rescale_every_n_layers") }),
			on(testutil.TinyRWKV6SplitLerps(), loads("with the lerps apart", func(*hmodel) {})),
			on(testutil.TinyRWKV6SplitLerps(), missing("lerps apart without lerp_k", "blk.1.time_mix_lerp_k.weight")),
			on(testutil.TinyRWKV6SplitLerps(), missing("lerps apart without lerp_w", "blk.2.time_mix_lerp_w.weight")),
			on(testutil.TinyRWKV6SplitLerps(), misshapen("lerp_v apart of two rows", "blk.0.time_mix_lerp_v.weight", 128, 1, 1, 2)),
			loads("with the lerps apart beside the fused ones", putLerpParts),
			misshapen("lerp_r beside the fused ones of two rows", "blk.0.time_mix_lerp_r.weight", 128, 1, 1, 2),
		),
		// rwkv6qwen2: rwkv6's time mix (without time_mix_first or the group
		// norm) in Qwen2's body: its feed-forward and norms are required,
		// the key and value are head_count_kv heads wide, the biases and
		// output_norm.bias optional; token_shift_count is 1.
		family("rwkv6qwen2", testutil.TinyRWKV6Qwen2(), rwkv6Requires(requires{"without an output matrix": "output.weight"},
			"ffn_norm", "ffn_gate", "ffn_down", "attn_norm"),
			misshapen("key as wide as the model", "blk.1.time_mix_key.weight", 128, 128),
			misshapen("value bias as wide as the model", "blk.2.time_mix_value.bias", 128),
			refusedKey("head_count_kv not dividing the heads", ".attention.head_count_kv", uint32(3)),
			refused("head_count_kv of another file", setU(".attention.head_count_kv", 4), "blk.0.time_mix_key.weight"),
			refusedKey("two token shifts", ".token_shift_count", uint32(2)),
			unset("token shift count missing (2 by default)", ".token_shift_count"),
			loads("without the biases", func(h *hmodel) {
				for il := range 3 {
					for _, b := range []string{"receptance", "key", "value"} {
						h.drop(fmt.Sprintf("blk.%d.time_mix_%s.bias", il, b))
					}
				}
			}),
			loads("with output_norm.bias", func(h *hmodel) { h.put("output_norm.bias", quant.F32, 128) }),
			// llama.cpp takes a time_mix_first and then runs wkv6 and the
			// group norm, whose tensors it never loads.
			unsupported("with time_mix_first", func(h *hmodel) { h.put("blk.1.time_mix_first.weight", quant.F32, 32, 4) },
				"blk.1.time_mix_first.weight", "group norm"),
			// llama.cpp's rwkv6qwen2 loader takes the fused lerps alone.
			refused("with the lerps apart", func(h *hmodel) {
				putLerpParts(h)
				h.drop("blk.0.time_mix_lerp_fused.weight")
			}, "blk.0.time_mix_lerp_fused.weight"),
		),
		// arwkv7: rwkv7's time mix (its gate's pair and the group norm
		// each both or neither in a block, the sixth mix with the gate) in
		// Qwen2's body: its feed-forward and RMSNorms are required, the
		// gate's rank optional; no final norm's bias; token_shift_count
		// is 1.
		family("arwkv7", testutil.TinyARWKV7(), requires{
			"layer with time_mix_g1 without g2":        "blk.0.time_mix_g2.weight",
			"layer with the group norm without a bias": "blk.1.time_mix_ln.bias",
			"without an output matrix":                 "output.weight",
		}.named("layer without %s", "blk.1.time_mix_w1.weight", "blk.2.time_mix_v2.weight", "blk.0.time_mix_r_k.weight",
			"blk.1.attn_norm.weight", "blk.2.ffn_gate.weight"),
			misshapen("five mixes with the gate", "blk.1.time_mix_lerp_fused.weight", 128, 1, 1, 5),
			on(testutil.TinyARWKV7Plain(), misshapen("four mixes", "blk.2.time_mix_lerp_fused.weight", 128, 1, 1, 4)),
			on(testutil.TinyARWKV7Plain(), loads("six mixes without the gate", func(h *hmodel) {
				for il := range 3 {
					h.put(fmt.Sprintf("blk.%d.time_mix_lerp_fused.weight", il), quant.F32, 128, 1, 1, 6)
				}
			})),
			on(testutil.TinyARWKV7Plain(), loads("without the gate's rank", func(h *hmodel) { h.del(".attention.gate_lora_rank") })),
			refused("gate rank 0 beside the gate's pair", setU(".attention.gate_lora_rank", 0), "blk.0.time_mix_g1.weight"),
			refusedKey("gate rank wider than the model", ".attention.gate_lora_rank", uint32(256)),
			refused("decay rank of another file", setU(".attention.decay_lora_rank", 64), "blk.0.time_mix_w1.weight"),
			unset("value rank missing", ".attention.value_residual_mix_lora_rank"),
			refusedKey("two token shifts", ".token_shift_count", uint32(2)),
			unset("token shift count missing (2 by default)", ".token_shift_count"),
			unsupportedTensor("with output_norm.bias", "output_norm.bias", 128),
			unsupportedTensor("with token_embd_norm", "token_embd_norm.weight", 128),
		),
		// smallthinker: every layer's router and experts are required (no
		// dense feed-forward, no shared expert), and so is the gating
		// function (llama.cpp's graph aborts without one); a window of 0
		// is none, and a missing output matrix is the tied embedding, as
		// llama.cpp loads them.
		family("smallthinker", testutil.TinySmallThinker(), requires{
			"experts' gate missing": "blk.0.ffn_gate_exps.weight",
		}.and("blk.3.ffn_gate_inp.weight"),
			misshapen("router one expert short", "blk.1.ffn_gate_inp.weight", 64, 7),
			misshapen("experts' up of another width", "blk.2.ffn_up_exps.weight", 64, 16, 8),
			unset("gating function missing", ".expert_gating_func"),
			unsupportedKey("gating function none", ".expert_gating_func", uint32(0)),
			on(testutil.TinySmallThinkerSWA(), refused("window as text", set(".attention.sliding_window", "wide"), ".attention.sliding_window")),
			on(testutil.TinySmallThinkerSWA(), loads("window 0", setU(".attention.sliding_window", 0))),
			on(testutil.TinySmallThinkerSWA(), loads("output tied", drop("output.weight"))),
			refusedKey("values of another head size", ".attention.value_length", uint32(8)),
		),
		// glm4: the norms after attention and the feed-forward are
		// required; multimodal RoPE is GLM-4.1V's.
		glmFamily("glm4", testutil.TinyGLM4(), testutil.TinyGLM4Fused(), requiresEach("blk.0.post_attention_norm.weight", "blk.1.post_ffw_norm.weight"),
			unsupportedKey("multimodal RoPE", ".rope.dimension_sections", []int32{2, 1, 1, 0}),
		),
		// chatglm: glm4's block without its norms after attention and the
		// feed-forward; a file without output.weight runs on token_embd,
		// as llama.cpp d32676d77 loads one.
		glmFamily("chatglm", testutil.TinyChatGLMApart(), testutil.TinyChatGLM(), nil,
			loads("tied (no output.weight)", drop("output.weight")),
		),
		// Qwen's vision-language text models: rope.dimension_sections as
		// llama.cpp's get_key_or_arr reads it (4 int32/uint32 counts or one
		// int32) and ggml's rope asserts it (a temporal, height or width
		// pair; no more than the head's dims); the whole head rotated, as
		// the graphs assert.
		family("qwen3vl", testutil.TinyQwen3VL(), requires{
			"without attn_k_norm": "blk.1.attn_k_norm.weight",
		},
			unset("rope sections missing", ".rope.dimension_sections"),
			refusedKey("three rope sections", ".rope.dimension_sections", []int32{8, 4, 4}),
			refusedKey("five rope sections", ".rope.dimension_sections", []int32{8, 4, 4, 0, 0}),
			refusedKey("rope sections past the head", ".rope.dimension_sections", []int32{16, 10, 10, 0}),
			refusedKey("rope sections extra only", ".rope.dimension_sections", []int32{0, 0, 0, 16}),
			refused("rope section negative", set(".rope.dimension_sections", []int32{-1, 9, 8, 0}), ".rope.dimension_sections[0]"),
			refused("rope section huge uint32", func(h *hmodel) { h.set(".rope.dimension_sections", []uint32{8, 4, 4, math.MaxUint32}) }, ".rope.dimension_sections[3]"),
			refusedKey("rope sections floats", ".rope.dimension_sections", []float32{8, 4, 4, 0}),
			refusedKey("rope sections one uint32", ".rope.dimension_sections", uint32(4)),
			loads("rope sections one int32", set(".rope.dimension_sections", int32(4))),
			loads("rope sections uint32", set(".rope.dimension_sections", []uint32{8, 4, 4, 0})),
			loads("rope sections short of the pairs", set(".rope.dimension_sections", []int32{2, 1, 1, 0})),
			refusedKey("half the head rotated", ".rope.dimension_count", uint32(16)),
			refusedKey("deepstack layers a string", ".n_deepstack_layers", "3"),
			loads("without deepstack layers", del(".n_deepstack_layers")),
			refusedKey("deepstack in every layer", ".n_deepstack_layers", uint32(2)),
		),
		family("qwen3vlmoe", testutil.TinyQwen3VLMoE(), nil,
			refusedKey("deepstack in every layer", ".n_deepstack_layers", uint32(5)),
			unset("expert count missing", ".expert_count"),
			unset("rope sections missing", ".rope.dimension_sections"),
			misshapen("experts of another width", "blk.0.ffn_up_exps.weight", 64, 64, 8),
		),
		family("qwen2vl", testutil.TinyQwen2VL(), nil,
			unset("rope sections missing", ".rope.dimension_sections"),
			withoutQKVBiases(0),
			refused("query narrower than the embedding", set(".attention.key_length", uint32(8), ".attention.value_length", uint32(8), ".rope.dimension_count", uint32(8)), ".embedding_length"),
			loads("with output.bias", add("output.bias", 320)),
		),
		// cohere2: Cohere's cases and its window, required (llama.cpp's
		// get_key).
		cohereFamily("cohere2", testutil.TinyCohere2(), requiresEach("blk.3.attn_norm.weight", "blk.1.ffn_gate.weight"),
			unset("sliding_window missing", ".attention.sliding_window"),
		),
		// command-r: Cohere's cases; Command R+'s per-head Q/K norms
		// required at 64 layers, a weight row a head, and refused below
		// (llama.cpp's loader takes them only from 64 layers on); the
		// query as wide as the embedding (its attn_q is [n_embd, n_embd]).
		cohereFamily("command-r", testutil.TinyCommandR(), requiresEach("blk.1.attn_norm.weight", "blk.0.ffn_up.weight"),
			on(testutil.TinyCommandRPlus(), missing("plus without attn_q_norm", "blk.63.attn_q_norm.weight")),
			on(testutil.TinyCommandRPlus(), missing("plus without attn_k_norm", "blk.5.attn_k_norm.weight")),
			on(testutil.TinyCommandRPlus(), misshapen("plus with one attn_k_norm row for every head", "blk.1.attn_k_norm.weight", 8)),
			unsupported("Q/K norms below 64 layers", func(h *hmodel) {
				h.put("blk.0.attn_q_norm.weight", quant.F32, 16, 4)
				h.put("blk.0.attn_k_norm.weight", quant.F32, 16, 2)
			}, "blk.0.attn_q_norm.weight"),
			refused("query narrower than the embedding", set(".attention.key_length", uint32(8), ".attention.value_length", uint32(8), ".rope.dimension_count", uint32(8)), ".embedding_length"),
		),
		// arcee: up and down, no gate; a bias llama.cpp's arcee graph would
		// not add is refused.
		family("arcee", testutil.TinyArcee(), requiresEach("blk.0.ffn_up.weight"),
			misshapen("ffn_down of the width of a gated block's halves", "blk.1.ffn_down.weight", 64, 64),
			unsupportedTensor("ffn_up.bias", "blk.0.ffn_up.bias", 128),
		),
		// apertus: the four xIELU keys are required, one number or one a
		// layer, finite; the per-head Q/K norms are required.
		family("apertus", testutil.TinyApertus(), requiresEach("blk.1.attn_k_norm.weight"),
			unset("xielu.beta missing", "xielu.beta"),
			// llama.cpp adds these biases to the normalised Q and K when the
			// file has them.
			unsupported("attn_q_norm.bias", add("blk.0.attn_q_norm.bias", 16), "blk.0.attn_q_norm.bias"),
			refusedKey("xielu.eps one short", "xielu.eps", []float32{-1e-6}),
			refusedKey("xielu.alpha_p NaN", "xielu.alpha_p", []float32{0.8, nan}),
			refusedKey("xielu.alpha_n a string", "xielu.alpha_n", "0.8"),
			loads("xielu.alpha_n one number for every layer", setF("xielu.alpha_n", 0.8)),
			unsupportedTensor("attn_q.bias", "blk.0.attn_q.bias", 64),
		),
		// hunyuan-dense: per-head Q/K norms required, and per head.
		family("hunyuan-dense", testutil.TinyHunyuanDense(), requiresEach("blk.0.attn_q_norm.weight"),
			misshapen("attn_k_norm across all heads", "blk.1.attn_k_norm.weight", 32),
			withQKVBiases(1, 64, 32),
		),
		// hunyuan-moe: llama.cpp d32676d77's loader requires the per-head
		// Q/K norms, the router, the experts and the shared expert, the
		// RMS epsilon and expert_feed_forward_length, which sizes nothing:
		// the experts are as wide as feed_forward_length; the shared
		// expert's width defaults to feed_forward_length (32 here, against
		// the file's 64); Q/K/V biases optional; no shared gate or
		// selection bias.
		family("hunyuan-moe", testutil.TinyHunyuanMoE(), requiring("blk.0.attn_q_norm.weight",
			"blk.1.ffn_gate_inp.weight", "blk.0.ffn_down_exps.weight", "blk.1.ffn_up_shexp.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("expert_feed_forward_length missing", ".expert_feed_forward_length"),
			loads("expert_feed_forward_length not read", setU(".expert_feed_forward_length", 64)),
			refused("shared width defaulted", del(".expert_shared_feed_forward_length"), "blk.0.ffn_gate_shexp.weight"),
			withQKVBiases(1, 64, 32),
			misshapen("attn_k_norm across all heads", "blk.1.attn_k_norm.weight", 32),
			refusedKey("half the head rotated", ".rope.dimension_count", uint32(8)),
			unsupported("a shared expert's gate", add("blk.0.ffn_gate_inp_shexp.weight", 64), "blk.0.ffn_gate_inp_shexp.weight"),
			unsupported("a selection bias", add("blk.0.exp_probs_b.bias", 8), "blk.0.exp_probs_b.bias"),
		),
		// dots1: llama.cpp d32676d77's loader requires the Q/K norms, the
		// leading dense layer's feed-forward, the router, experts and
		// shared experts, and the untied output; the selection bias and
		// Q/K/V biases optional; as many KV heads as query heads; the RMS
		// epsilon, leading_dense_block_count, expert_shared_count and
		// expert_weights_scale required, and expert_gating_func, without
		// which llama-bench aborts.
		family("dots1", testutil.TinyDots1(), requires{
			"dense layer's up missing": "blk.0.ffn_up.weight",
		}.and("output.weight", "blk.2.attn_k_norm.weight", "blk.2.ffn_gate_inp.weight", "blk.1.ffn_down_shexp.weight"),
			loads("without the selection bias", drop("blk.1.exp_probs_b.bias", "blk.2.exp_probs_b.bias")),
			withQKVBiases(0, 64, 64),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("leading_dense_block_count missing", ".leading_dense_block_count"),
			refused("two dense layers of one", setU(".leading_dense_block_count", 2), "leading_dense_block_count = 2"),
			unset("expert_shared_count missing", ".expert_shared_count"),
			unset("scale missing", ".expert_weights_scale"),
			unset("gating missing", ".expert_gating_func"),
			unsupportedKey("gating unknown", ".expert_gating_func", uint32(9)),
			refusedKey("grouped KV heads", ".attention.head_count_kv", uint32(2)),
		),
		// exaone: the RMS epsilon is required, as llama.cpp's loader
		// requires it; rope_freqs, when present, has a factor a rotated
		// pair; a bias llama.cpp's exaone loader does not take is refused.
		family("exaone", testutil.TinyExaone(), nil,
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			misshapen("rope_freqs a factor short", "rope_freqs.weight", 7),
			unsupportedTensor("attn_q.bias", "blk.0.attn_q.bias", 64),
		),
		// starcoder2: every bias and the LayerNorm epsilon are required,
		// as llama.cpp's loader requires them.
		layerNormFamily("starcoder2", testutil.TinyStarCoder2(), requiresEach("blk.0.ffn_norm.bias", "blk.0.attn_v.bias",
			"blk.1.attn_output.bias", "blk.0.ffn_up.bias"),
			misshapen("ffn_down.bias of the feed-forward's width", "blk.1.ffn_down.bias", 128),
		),
		// gemma: the output is the embedding, always; the RMS epsilon is
		// required; no gate-less block.
		family("gemma", testutil.TinyGemma(), requiresEach("blk.1.ffn_gate.weight"),
			misshapen("with an output matrix", "output.weight", 64, 320),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			misshapen("attn_q of width/heads heads", "blk.0.attn_q.weight", 64, 64),
		),
		// nemotron: the output matrix, the LayerNorms' biases and the
		// epsilon are required; the projections' biases are optional, but
		// of their projection's width.
		layerNormFamily("nemotron", testutil.TinyNemotron(), requiresEach("output.weight", "blk.1.ffn_norm.bias"),
			misshapen("attn_k.bias of the query's width", "blk.1.attn_k.bias", 64),
			misshapen("ffn_up.bias of the width", "blk.1.ffn_up.bias", 64),
			refusedKey("rope.dimension_count odd", ".rope.dimension_count", uint32(7)),
		),
		// jais2: every bias (Q, K, V and output projections, up and down,
		// every LayerNorm) and the epsilon required, the Q/K/V biases as
		// wide as the embedding (so grouped KV heads are refused, as
		// llama.cpp refuses their biases' shapes); Q, K and V apart, never
		// fused; RoPE over whole heads; no rope_freqs; the output tied
		// unless the file has output.weight.
		layerNormFamily("jais2", testutil.TinyJais2(), requiresEach("blk.0.attn_q.bias", "blk.1.attn_v.bias", "blk.0.attn_output.bias",
			"blk.1.ffn_up.bias", "blk.0.ffn_down.bias", "blk.1.ffn_norm.bias"),
			loads("with an output matrix", func(h *hmodel) { h.put("output.weight", quant.F32, 64, 320) }),
			refused("grouped KV heads", set(".attention.head_count_kv", uint32(2)), "blk.0.attn_k"),
			unsupported("a fused attn_qkv", edits(drop("blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight"), add("blk.0.attn_qkv.weight", 64, 192)),
				"blk.0.attn_qkv.weight"),
			refusedKey("half of each head rotated", ".rope.dimension_count", uint32(8)),
			unsupported("rope_freqs", add("rope_freqs.weight", 8), "rope_freqs.weight"),
		),
		// xverse: the untied output and the RMS epsilon required, the
		// query as wide as the embedding, heads whole, as llama.cpp's
		// loader and graph require them; Q, K and V fused or apart, each
		// bias optional (create_tensor_qkv); attn_output.bias and
		// rope_freqs refused, as llama-bench d32676d77 refuses them.
		family("xverse", testutil.TinyXverse(), requiresEach("output.weight", "output_norm.weight", "blk.0.ffn_norm.weight", "blk.1.ffn_gate.weight"),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			refused("query narrower than the embedding", set(".attention.key_length", uint32(8), ".attention.value_length", uint32(8),
				".rope.dimension_count", uint32(8)), ".embedding_length"),
			refusedKey("half of each head rotated", ".rope.dimension_count", uint32(8)),
			withQKVBiases(0, 64, 32),
			on(fusedQKV(testutil.TinyXverse()), loads("fused attn_qkv", func(*hmodel) {})),
			unsupported("attn_output.bias", add("blk.0.attn_output.bias", 64), "blk.0.attn_output.bias"),
			unsupported("rope_freqs", add("rope_freqs.weight", 8), "rope_freqs.weight"),
		),
		// orion: xverse's with LayerNorms whose every bias is required,
		// and the LayerNorm epsilon.
		layerNormFamily("orion", testutil.TinyOrion(), requiresEach("output.weight", "blk.1.ffn_norm.bias", "blk.0.ffn_up.weight"),
			refused("query narrower than the embedding", set(".attention.key_length", uint32(8), ".attention.value_length", uint32(8),
				".rope.dimension_count", uint32(8)), ".embedding_length"),
			refusedKey("half of each head rotated", ".rope.dimension_count", uint32(8)),
			withQKVBiases(1, 64, 32),
			on(fusedQKV(testutil.TinyOrion()), loads("fused attn_qkv", func(*hmodel) {})),
			misshapen("ffn_norm.bias of the wrong width", "blk.0.ffn_norm.bias", 32),
			unsupported("rope_freqs", add("rope_freqs.weight", 8), "rope_freqs.weight"),
		),
		// refact: the RMS epsilon required; the output tied when absent;
		// Q, K and V fused or apart, each bias optional; no RoPE key
		// needed (ALiBi). llama-bench d32676d77 loads attn_output.bias
		// and rope_freqs but its graph applies neither: refused here as
		// tensors this package would not run.
		family("refact", testutil.TinyRefact(), requiresEach("output_norm.weight", "blk.1.attn_norm.weight", "blk.0.ffn_down.weight"),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			loads("with an output matrix", add("output.weight", 96, 320)),
			loads("without rope.freq_base", del(".rope.freq_base")),
			withQKVBiases(0, 96, 16),
			on(fusedQKV(testutil.TinyRefact()), loads("fused attn_qkv", func(*hmodel) {})),
			unsupported("attn_output.bias (loaded, never applied by llama.cpp)", add("blk.0.attn_output.bias", 96), "blk.0.attn_output.bias"),
			unsupported("rope_freqs (loaded, never applied by llama.cpp)", add("rope_freqs.weight", 8), "rope_freqs.weight"),
		),
		// baichuan: the untied output and the RMS epsilon required, heads
		// whole at every depth (llama.cpp asserts it), Q, K and V fused
		// or apart, each bias optional; rope_freqs refused, as
		// llama-bench d32676d77 refuses it.
		family("baichuan", testutil.TinyBaichuan(), requiresEach("output.weight", "blk.31.ffn_norm.weight", "blk.0.attn_output.weight"),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			refusedKey("half of each head rotated", ".rope.dimension_count", uint32(4)),
			on(testutil.TinyBaichuan13B(), refusedKey("13B: half of each head rotated", ".rope.dimension_count", uint32(4))),
			withQKVBiases(0, 32, 32),
			on(fusedQKV(testutil.TinyBaichuan()), loads("fused attn_qkv", func(*hmodel) {})),
			unsupported("rope_freqs", add("rope_freqs.weight", 4), "rope_freqs.weight"),
		),
		// codeshell: the output projection's, up's and down's biases, every
		// LayerNorm's, the untied output and the epsilon required, the
		// Q/K/V biases optional, Q, K and V fused or apart, heads whole, as
		// llama-bench d32676d77 takes them; rope_freqs refused. A file
		// without token_embd, which llama.cpp runs on output.weight, is
		// refused.
		layerNormFamily("codeshell", testutil.TinyCodeShell(), requiresEach("output.weight", "token_embd.weight", "blk.0.attn_output.bias",
			"blk.1.ffn_up.bias", "blk.0.ffn_down.bias", "blk.1.ffn_norm.bias"),
			withoutQKVBiases(0),
			on(fusedQKV(testutil.TinyCodeShell()), loads("fused attn_qkv", func(*hmodel) {})),
			refusedKey("half of each head rotated", ".rope.dimension_count", uint32(8)),
			refused("query narrower than the embedding", set(".attention.key_length", uint32(8), ".attention.value_length", uint32(8),
				".rope.dimension_count", uint32(8)), ".embedding_length"),
			unsupported("rope_freqs", add("rope_freqs.weight", 8), "rope_freqs.weight"),
		),
		// bailingmoe: what llama-bench d32676d77 was seen requiring on
		// probe files — the shared experts' count, the experts' width,
		// output.weight — and loading: no leading_dense_block_count, no
		// expert_weights_scale, Q/K/V biases.
		family("bailingmoe", testutil.TinyBailingMoE(), requiresEach("output.weight", "blk.0.ffn_gate_inp.weight", "blk.1.ffn_up_shexp.weight"),
			loads("without leading_dense_block_count", func(h *hmodel) { h.del(".leading_dense_block_count") }),
			loads("without expert_weights_scale", func(h *hmodel) { h.del(".expert_weights_scale") }),
			withQKVBiases(0, 64, 32),
			unset("expert_shared_count missing", ".expert_shared_count"),
			unset("expert_feed_forward_length missing", ".expert_feed_forward_length"),
		),
		// cohere2moe: what llama-bench d32676d77 was seen requiring on
		// probe files — the window, its pattern, logit_scale, the dense
		// lead and the experts' width, one norm epsilon, the NextN block's
		// tensors when it has nextn.eh_proj — and loading: a trunk-only
		// file (the NextN block declared, its tensors absent), Q/K/V
		// biases.
		family("cohere2moe", testutil.TinyCohere2MoE(), requiresEach("blk.0.attn_norm.weight", "blk.0.ffn_gate.weight", "blk.1.ffn_gate_inp.weight",
			"blk.2.ffn_down_shexp.weight", "blk.5.nextn.enorm.weight", "output_norm.weight"),
			loads("trunk only", drop("blk.5.nextn.eh_proj.weight", "blk.5.nextn.enorm.weight", "blk.5.nextn.hnorm.weight", "blk.5.nextn.shared_head_norm.weight")),
			withQKVBiases(0, 64, 32),
			unset("sliding_window missing", ".attention.sliding_window"),
			unset("sliding_window_pattern missing", ".attention.sliding_window_pattern"),
			unset("logit_scale missing", ".logit_scale"),
			unset("leading_dense_block_count missing", ".leading_dense_block_count"),
			unset("expert_feed_forward_length missing", ".expert_feed_forward_length"),
			unset("no norm epsilon", ".attention.layer_norm_epsilon"),
		),
		// nanbeige: llama's block run num_loops times (default 1), the
		// RMS epsilon and output_norm (which the runs share) required. As
		// llama-bench d32676d77 showed on probe files: num_loops 0 and
		// block_count × num_loops above 512 abort it (refused here), a
		// skip_loop_final_norm not a bool is refused, each Q/K/V bias and
		// rope_freqs are optional, attention.scale is taken (and unread).
		family("nanbeige", testutil.TinyNanbeige(), requiresEach("output_norm.weight", "blk.0.attn_norm.weight", "blk.1.ffn_norm.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			loads("num_loops missing (one run)", del(".num_loops")),
			refusedKey("num_loops 0", ".num_loops", uint32(0)),
			refusedKey("block_count × num_loops above 512", ".num_loops", uint32(300)),
			refusedKey("skip_loop_final_norm a number", ".skip_loop_final_norm", uint32(1)),
			loads("without one Q bias", drop("blk.0.attn_q.bias")),
			loads("with rope_freqs", add("rope_freqs.weight", 8)),
			loads("attention.scale unread", setF(".attention.scale", 0.5)),
			unsupported("attn_output.bias", add("blk.0.attn_output.bias", 64), "blk.0.attn_output.bias"),
		),
		// talkie: as llama-bench d32676d77 showed on probe files, the RMS
		// epsilon, logit_scale, output.weight and each block's attn_q_norm
		// (one gain a head) and layer_output_scale are required; a norm
		// weight (output_norm, attn_k_norm) or rope_freqs is refused as a
		// tensor it does not load; a Q bias and a fused attn_qkv load;
		// rotating part of each head aborts it. A logit_scale of 0, which
		// it runs, is refused here.
		family("talkie", testutil.TinyTalkie(), requiresEach("output.weight", "blk.0.attn_q_norm.weight", "blk.1.layer_output_scale.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("logit_scale missing", ".logit_scale"),
			refusedKey("logit_scale 0", ".logit_scale", float32(0)),
			refusedKey("half of each head rotated", ".rope.dimension_count", uint32(8)),
			misshapen("attn_q_norm a head wide", "blk.0.attn_q_norm.weight", 16),
			unsupported("with output_norm", add("output_norm.weight", 64), "output_norm.weight"),
			unsupported("with attn_k_norm", add("blk.0.attn_k_norm.weight", 16), "blk.0.attn_k_norm.weight"),
			unsupported("rope_freqs", add("rope_freqs.weight", 8), "rope_freqs.weight"),
			loads("with a Q bias", add("blk.0.attn_q.bias", 64)),
			on(fusedQKV(testutil.TinyTalkie()), loads("fused attn_qkv", func(h *hmodel) {})),
		),
		// deci: as llama-bench d32676d77 loads TinyDeci edited (probed):
		// every layer's tensors by its own heads and width, a layer
		// without a feed-forward still with its attention, none of
		// attn_norm on the attention-free layer or ffn_norm on the
		// feed-forward-free one; attn_output alone Embd × Embd, its
		// optional bias taken; the RMS epsilon required; RoPE over whole
		// heads ("invalid n_rot").
		family("deci", testutil.TinyDeci(), requiresEach("blk.0.attn_q.weight", "blk.3.attn_norm.weight", "blk.3.attn_k.weight",
			"blk.2.attn_norm.weight", "blk.2.attn_output.weight", "blk.1.ffn_norm.weight", "blk.4.ffn_down.weight", "output_norm.weight"),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			refusedKey("half of each head rotated", ".rope.dimension_count", uint32(8)),
			unsupported("attn_norm on the attention-free layer", add("blk.1.attn_norm.weight", 64), "blk.1.attn_norm.weight"),
			unsupported("ffn_norm on the layer without a feed-forward", add("blk.3.ffn_norm.weight", 64), "blk.3.ffn_norm.weight"),
			misshapen("attn_output alone narrower than the embedding", "blk.2.attn_output.weight", 32, 64),
			misshapen("attn_k of layer 3 as wide as the largest KV heads", "blk.3.attn_k.weight", 64, 32),
			misshapen("ffn_up of layer 1 as wide as the largest", "blk.1.ffn_up.weight", 64, 160),
			loads("attn_output.bias on the attn_output-alone layer", add("blk.2.attn_output.bias", 64)),
			loads("without rope_freqs", drop("rope_freqs.weight")),
			refused("KV heads without query heads", set(".attention.head_count_kv", []int32{2, 1, 0, 1, 2}), ".attention.head_count_kv"),
		),
		// openelm: as llama-bench d32676d77 loads TinyOpenELM edited
		// (probed): the fused attn_qkv and the Q/K norms required, each
		// layer's sized by its own heads and width, none without KV heads,
		// the output always the embedding, the RMS epsilon required.
		family("openelm", testutil.TinyOpenELM(), requiresEach("blk.0.attn_qkv.weight", "blk.1.attn_q_norm.weight", "blk.2.attn_k_norm.weight",
			"blk.0.ffn_gate.weight", "output_norm.weight"),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			misshapen("with an output matrix", "output.weight", 64, 320),
			misshapen("attn_qkv of layer 1 sized as layer 2's", "blk.1.attn_qkv.weight", 64, 160),
			misshapen("ffn_gate of layer 0 as wide as the largest", "blk.0.ffn_gate.weight", 64, 128),
			refused("a layer without KV heads", set(".attention.head_count_kv", []int32{0, 2, 2}), ".attention.head_count_kv"),
			// llama.cpp divides the width by layer 0's 2 heads (and then
			// refuses attn_qkv's shape); the common keys refuse the width
			// no multiple of the largest, 6, first.
			refused("without the head size", del(".attention.key_length", ".attention.value_length"), ".attention.key_length"),
		),
		// stablelm: the output matrix, the LayerNorms' biases (but
		// ffn_norm's) and the epsilon are required, as llama.cpp's loader
		// requires them; the Q/K/V biases, ffn_norm and the Q/K norms are
		// optional, the norms a weight row a head and in pairs; the query
		// as wide as the embedding.
		layerNormFamily("stablelm", testutil.TinyStableLM(), requiresEach("output.weight", "blk.0.ffn_gate.weight"),
			loads("without its biases", drop("blk.0.attn_q.bias", "blk.0.attn_k.bias", "blk.0.attn_v.bias")),
			loads("ffn_norm without its bias", drop("blk.1.ffn_norm.bias")),
			misshapen("attn_v.bias of the query's width", "blk.1.attn_v.bias", 64),
			refused("query narrower than the embedding", set(".attention.key_length", uint32(8), ".attention.value_length", uint32(8)), ".embedding_length"),
			on(testutil.TinyStableLM12B(), misshapen("attn_q_norm one row for every head", "blk.0.attn_q_norm.weight", 16)),
			on(testutil.TinyStableLM12B(), missing("attn_q_norm without attn_k_norm", "blk.1.attn_k_norm.weight")),
		),
		// phi2: the untied output and its bias, every LayerNorm's bias,
		// every projection's bias (attn_qkv's beside a fused attn_qkv)
		// and the LayerNorm epsilon are required, as llama.cpp's phi2
		// graph adds them all.
		layerNormFamily("phi2", testutil.TinyPhi2(), requiresEach("output.weight", "output.bias", "blk.0.attn_k.bias",
			"blk.1.attn_output.bias", "blk.0.ffn_down.bias"),
			misshapen("output.bias of the width", "output.bias", 64),
			on(testutil.TinyPhi2Fused(), missing("attn_qkv.bias missing", "blk.1.attn_qkv.bias")),
			on(testutil.TinyPhi2Fused(), misshapen("attn_qkv.bias of the query's width", "blk.0.attn_qkv.bias", 64)),
		),
		// gpt2 and starcoder: position_embd (a row for each position of
		// context_length), the fused attn_qkv, every LayerNorm's and
		// projection's bias and the LayerNorm epsilon are required, as
		// llama.cpp's loaders require them; without output.weight the
		// output is the embedding; starcoder's attn_qkv is as wide as its
		// KV heads say (one: Embd + 2 head sizes).
		layerNormFamily("gpt2", testutil.TinyGPT2(), requiresEach("position_embd.weight", "blk.0.attn_qkv.weight",
			"blk.1.attn_qkv.bias", "blk.0.attn_output.bias", "blk.1.ffn_norm.bias", "blk.0.ffn_up.bias"),
			refused("context past position_embd's rows", set(".context_length", uint32(512)), "position_embd.weight"),
			on(testutil.TinyStarCoder(), misshapen("attn_qkv of a KV head a query head", "blk.0.attn_qkv.weight", 64, 192)),
			on(testutil.TinyStarCoder(), loads("without output, tied", drop("output.weight"))),
		),
		// gptneox: the untied output, every LayerNorm's and projection's
		// bias, the fused attn_qkv, the LayerNorm epsilon and
		// use_parallel_residual are required, as llama.cpp's loader
		// requires them.
		layerNormFamily("gptneox", testutil.TinyGPTNeoX(), requiresEach("output.weight", "blk.0.attn_qkv.bias",
			"blk.1.ffn_norm.bias", "blk.1.ffn_down.bias"),
			unset("use_parallel_residual missing", ".use_parallel_residual"),
			refusedKey("rope.dimension_count past the head", ".rope.dimension_count", uint32(18)),
		),
		// bitnet: every tensor of llama.cpp's bitnet loader is required
		// but the projections' scales, which are of one element when
		// present; the output is always token_embd (llama.cpp refuses an
		// output matrix); the RMS epsilon is required; a hidden_activation
		// llama.cpp would not run as bitnet's gated feed-forward is
		// refused.
		family("bitnet", testutil.TinyBitnetScales(), requiresEach("token_embd.weight", "output_norm.weight",
			"blk.0.attn_norm.weight", "blk.0.attn_sub_norm.weight", "blk.0.attn_q.weight", "blk.1.attn_k.weight", "blk.0.attn_v.weight", "blk.1.attn_output.weight",
			"blk.0.ffn_norm.weight", "blk.1.ffn_sub_norm.weight", "blk.0.ffn_gate.weight", "blk.1.ffn_up.weight", "blk.0.ffn_down.weight"),
			misshapen("attn_sub_norm of the feed-forward's width", "blk.0.attn_sub_norm.weight", 128),
			misshapen("ffn_sub_norm of the width", "blk.1.ffn_sub_norm.weight", 64),
			misshapen("attn_q.scale of two", "blk.0.attn_q.scale", 2),
			misshapen("ffn_down.scale a row", "blk.1.ffn_down.scale", 64),
			misshapen("with an output matrix", "output.weight", 64, 320),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unsupportedKey("hidden_activation gelu", ".hidden_activation", "gelu"),
			unsupportedKey("hidden_activation unknown", ".hidden_activation", "squared_relu"),
			loads("one scale left out", drop("blk.0.attn_v.scale")),
			on(testutil.TinyBitnet(), loads("relu2 without scales", func(*hmodel) {})),
		),
		// internlm2: the untied output, Q, K and V apart (the converter
		// splits wqkv) and the RMS epsilon are required, and the query is
		// as wide as the embedding, as llama.cpp's loader requires them;
		// a bias it does not take is refused.
		family("internlm2", testutil.TinyInternLM2(), requiring("output.weight", "blk.0.attn_q.weight", "blk.1.attn_v.weight", "blk.0.ffn_norm.weight"),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			refused("query narrower than the embedding", set(".attention.key_length", uint32(8), ".attention.value_length", uint32(8),
				".rope.dimension_count", uint32(8)), ".embedding_length"),
			unsupportedTensor("attn_q.bias", "blk.0.attn_q.bias", 64),
		),
		// olmo: Q, K, V, the output projection and the feed-forward are
		// required and the LayerNorm epsilon, as llama.cpp's loader
		// requires them; clamp_kqv is optional and must be finite;
		// without output.weight the output is the embedding.
		family("olmo", testutil.TinyOlmoClamp(), requiresEach("blk.1.attn_k.weight", "blk.0.attn_output.weight", "blk.1.ffn_gate.weight"),
			unset("layer_norm_epsilon missing", ".attention.layer_norm_epsilon"),
			refusedKey("clamp_kqv NaN", ".attention.clamp_kqv", nan),
			refused("query narrower than the embedding", set(".attention.key_length", uint32(8), ".attention.value_length", uint32(8),
				".rope.dimension_count", uint32(8)), ".embedding_length"),
			loads("without clamp_kqv", del(".attention.clamp_kqv")),
			loads("without output, tied", drop("output.weight")),
			unsupportedTensor("ffn_down.bias", "blk.1.ffn_down.bias", 64),
		),
		// afmoe: the output gate, the four norms around attention and the
		// feed-forward, the Q/K norms and the selection bias are required,
		// as llama.cpp's loader requires them, and so are the RMS epsilon,
		// leading_dense_block_count and expert_shared_count (0: no shared
		// expert); expert_gating_func 0
		// (none) is sigmoid; a window of 0 is none, and a missing output
		// matrix the tied embedding.
		family("afmoe", testutil.TinyAfmoe(), requires{
			"dense layer's gate missing": "blk.0.ffn_gate.weight",
		}.and("blk.2.attn_gate.weight", "blk.0.post_attention_norm.weight", "blk.3.post_ffw_norm.weight",
			"blk.1.ffn_norm.weight", "blk.3.attn_k_norm.weight", "blk.1.exp_probs_b.bias", "blk.2.ffn_down_shexp.weight"),
			misshapen("attn_gate a head short", "blk.1.attn_gate.weight", 64, 48),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("leading_dense_block_count missing", ".leading_dense_block_count"),
			refusedKey("leading_dense_block_count past the layers", ".leading_dense_block_count", uint32(5)),
			refused("two dense layers of one", setU(".leading_dense_block_count", 2), "leading_dense_block_count = 2"),
			unset("expert_shared_count missing", ".expert_shared_count"),
			loads("expert_shared_count 0, no shared experts", func(h *hmodel) {
				h.set(".expert_shared_count", uint32(0))
				for il := 1; il < 4; il++ {
					for _, m := range []string{"gate", "up", "down"} {
						h.drop(fmt.Sprintf("blk.%d.ffn_%s_shexp.weight", il, m))
					}
				}
			}),
			loads("gating function none", setU(".expert_gating_func", 0)),
			loads("gating function softmax", setU(".expert_gating_func", 1)),
			unsupported("gating function unknown", setU(".expert_gating_func", 9), ".expert_gating_func = 9"),
			refusedKey("values of another head size", ".attention.value_length", uint32(8)),
			refusedKey("window as text", ".attention.sliding_window", "wide"),
			loads("window 0", setU(".attention.sliding_window", 0)),
			loads("output tied", drop("output.weight")),
			unsupportedTensor("attn_q.bias", "blk.0.attn_q.bias", 64),
		),
		// llama4: every expert layer's router and shared expert, and the
		// RMS epsilon, interleave_moe_layer_step and the experts' width
		// are required, as llama.cpp requires them; a window of 0
		// (llama.cpp's unchunked graph, which asserts on its unrotated
		// last layer) and more than one expert a token are refused as
		// unsupported; any other window is llama.cpp's fixed chunk; Q, K
		// and V biases are each optional, attn_output's refused (as
		// llama.cpp d32676d77 loads and refuses them).
		family("llama4", testutil.TinyLlama4(), requires{
			"expert gates missing":     "blk.3.ffn_gate_exps.weight",
			"global layer's V missing": "blk.3.attn_v.weight",
		}.and("blk.1.ffn_gate_inp.weight", "blk.2.ffn_down_shexp.weight", "blk.0.ffn_norm.weight"),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("interleave_moe_layer_step missing", ".interleave_moe_layer_step"),
			unset("expert_feed_forward_length missing", ".expert_feed_forward_length"),
			refused("experts every second layer", setU(".interleave_moe_layer_step", 2), "interleave_moe_layer_step"),
			unsupported("window 0", setU(".attention.sliding_window", 0), ".attention.sliding_window = 0"),
			loads("window 8192", setU(".attention.sliding_window", 8192)),
			unsupported("two experts a token", setU(".expert_used_count", 2), ".expert_used_count = 2"),
			refusedKey("values of another head size", ".attention.value_length", uint32(8)),
			loads("output tied", drop("output.weight")),
			loads("rope_freqs missing", drop("rope_freqs.weight")),
			loads("one K bias", func(h *hmodel) { h.put("blk.2.attn_k.bias", quant.F32, 32) }),
			unsupportedTensor("attn_output.bias", "blk.0.attn_output.bias", 64),
		),
		// laguna: the output gate (a row a head or a row an element,
		// layer by layer, as llama.cpp reads it from the tensor), the Q/K
		// norms, the selection bias and the shared expert are required, as
		// llama-bench d32676d77 requires them, and so are the RMS epsilon
		// and leading_dense_block_count; each layer's query tensors are
		// its own heads' width; the KV heads are one count for every
		// layer; expert_shared_count sizes the shared expert only without
		// expert_shared_feed_forward_length; expert_gating_func 0 is
		// sigmoid; rope_freqs, which llama.cpp does not load, is refused.
		family("laguna", testutil.TinyLaguna(), requiresEach("blk.1.attn_gate.weight", "blk.2.attn_q_norm.weight", "blk.3.ffn_norm.weight",
			"blk.1.exp_probs_b.bias", "blk.3.ffn_up_shexp.weight", "blk.0.ffn_gate.weight"),
			misshapen("attn_gate neither a head nor an element", "blk.1.attn_gate.weight", 64, 8),
			misshapen("the global layer's attn_q of the windowed layers' heads", "blk.0.attn_q.weight", 64, 64),
			misshapen("a windowed layer's attn_output of the global layer's heads", "blk.2.attn_output.weight", 32, 64),
			loads("attn_gate an element in one layer", func(h *hmodel) { h.put("blk.2.attn_gate.weight", quant.Q8_0, 64, 64) }),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("leading_dense_block_count missing", ".leading_dense_block_count"),
			loads("expert_weights_norm and expert_weights_scale missing", del(".expert_weights_norm", ".expert_weights_scale")),
			refused("expert_shared_feed_forward_length missing, 1 shared of the experts' 32", del(".expert_shared_feed_forward_length"), "blk.1.ffn_gate_shexp.weight"),
			loads("expert_shared_feed_forward_length missing, 2 shared of the experts' 32", edits(del(".expert_shared_feed_forward_length"), setU(".expert_shared_count", 2))),
			unsupportedTensor("rope_freqs", "rope_freqs.weight", 4),
			unsupported("per-layer KV heads", set(".attention.head_count_kv", []int32{2, 1, 2, 1}), ".attention.head_count_kv"),
			refused("heads not a multiple of the KV heads", set(".attention.head_count", []int32{3, 4, 4, 4}), ".attention.head_count"),
			loads("expert_shared_count 0 beside the width", setU(".expert_shared_count", 0)),
			loads("gating function none", setU(".expert_gating_func", 0)),
			refusedKey("window as text", ".attention.sliding_window", "wide"),
			loads("output tied", drop("output.weight")),
		),
		// mimo2, as llama-bench d32676d77 loads and refuses probe files:
		// the RMS epsilon, expert_feed_forward_length, the window and its
		// pattern (one flag a layer, or one integer every layer's, not a
		// bool) are required; attn_sinks and the selection bias are
		// optional on any layer; output.weight is required; each layer's
		// K and V are its own KV heads' width and V's heads narrower than
		// K's; rope_freqs, which llama.cpp does not load, is refused. A
		// window of 0 and a block without a router or a dense
		// feed-forward, which llama-bench runs, are refused (mimo2Hparams).
		family("mimo2", testutil.TinyMimo2(), requiresEach("output.weight", "blk.0.attn_k.weight", "blk.1.attn_v.weight",
			"blk.0.ffn_gate.weight", "blk.1.ffn_up_exps.weight", "blk.2.ffn_norm.weight", "blk.3.attn_output.weight"),
			unset("layer_norm_rms_epsilon missing", ".attention.layer_norm_rms_epsilon"),
			unset("expert_feed_forward_length missing", ".expert_feed_forward_length"),
			unset("sliding_window missing", ".attention.sliding_window"),
			unset("sliding_window_pattern missing", ".attention.sliding_window_pattern"),
			refused("window 0", setU(".attention.sliding_window", 0), ".attention.sliding_window"),
			refused("pattern a bool", set(".attention.sliding_window_pattern", true), ".attention.sliding_window_pattern"),
			refused("pattern a flag short", set(".attention.sliding_window_pattern", []bool{false, true, true}), ".attention.sliding_window_pattern"),
			loads("pattern one integer", setU(".attention.sliding_window_pattern", 4)),
			loads("no sinks on a windowed layer", drop("blk.1.attn_sinks.weight")),
			loads("sinks on a global layer", func(h *hmodel) { h.put("blk.0.attn_sinks.weight", quant.F32, 4) }),
			loads("no selection bias", drop("blk.1.exp_probs_b.bias")),
			loads("one NextN block", setU(".nextn_predict_layers", 1)),
			refused("a block without a router or ffn_gate", drop("blk.1.ffn_gate_inp.weight"), "blk.1.ffn_gate.weight"),
			misshapen("the global layer's attn_k of the windowed layers' KV heads", "blk.0.attn_k.weight", 64, 32),
			misshapen("attn_v of the keys' head size", "blk.1.attn_v.weight", 64, 32),
			misshapen("attn_sinks of one head", "blk.1.attn_sinks.weight", 1),
			on(testutil.TinyMimo2Fused(), misshapen("the global layer's attn_qkv of the windowed layers' rows", "blk.0.attn_qkv.weight", 64, 112)),
			unsupported("rope_freqs", func(h *hmodel) { h.put("rope_freqs.weight", quant.F32, 4) }, "rope_freqs.weight"),
			refused("KV heads not dividing a layer's heads", set(".attention.head_count_kv", []int32{1, 3, 2, 1}), ".attention.head_count_kv"),
		),
		family("gemma2", testutil.TinyGemma2(), requires{
			"post norm missing": "blk.0.post_ffw_norm.weight",
		},
			refused("softcap NaN", setF(".attn_logit_softcapping", nan), "attn_logit_softcapping"),
			refused("final softcap negative", setF(".final_logit_softcapping", -30), "final_logit_softcapping"),
			refused("sliding window huge", setU(".attention.sliding_window", 1<<30), "attention.sliding_window"),
		),
		family("bert", testutil.TinyBert(), requiresEach("token_embd_norm.bias", "position_embd.weight",
			"blk.1.attn_output_norm.bias", "blk.0.layer_output_norm.weight"),
			misshapen("position_embd shorter than the context", "position_embd.weight", 64, 100),
			unset("layer_norm_epsilon missing", ".attention.layer_norm_epsilon"),
			refusedKey("causal a string", ".attention.causal", "no"),
			refused("token_type_count missing", del("tokenizer.ggml.token_type_count"), "token_types.weight", "tokenizer.ggml.token_type_count"),
			misshapen("token_types of the wrong count", "token_types.weight", 64, 3),
			// llama.cpp takes the biases as optional, but one present must
			// fit: without them (as without token_types) the model loads
			// and embeds.
			misshapen("attn_q.bias of the wrong size", "blk.0.attn_q.bias", 32),
			misshapen("ffn_up.bias of the wrong size", "blk.1.ffn_up.bias", 64),
			loads("with a classification head, pooled by mean", edits(add("cls.weight", 64, 64), add("cls.bias", 64), add("cls.output.weight", 64, 1), add("cls.output.bias", 1))),
			loads("without biases or token types", func(h *hmodel) {
				for _, n := range []string{"attn_q.bias", "attn_k.bias", "attn_v.bias", "attn_output.bias", "ffn_up.bias", "ffn_down.bias"} {
					h.drop("blk.0." + n)
				}
				h.drop("token_types.weight")
			}),
		),
		family("nomic-bert", testutil.TinyNomicBert(), requiresEach("blk.1.ffn_gate.weight"),
			refused("attn_qkv narrow", func(h *hmodel) { h.put("blk.0.attn_qkv.weight", quant.Q8_0, 64, 128) }, "blk.0.attn_qkv.weight"),
			unset("pooling_type missing", ".pooling_type"),
		),
		// modern-bert: LayerNorms, block 0 without attn_norm.
		family("modern-bert", testutil.TinyModernBert(), requiresEach("token_embd_norm.weight", "blk.1.attn_norm.weight"),
			unset("layer_norm_epsilon missing", ".attention.layer_norm_epsilon"),
			unset("causal missing", ".attention.causal"),
			// A classifier's head, which llama.cpp loads whatever the pooling
			// and reads (its norm included) only to pool by rank.
			loads("with a classification head, pooled by mean", edits(add("cls.weight", 64, 64), add("cls.output.weight", 64, 1), add("cls.output.bias", 1), add("cls.norm.weight", 64))),
			unsupported("ranking with cls.norm", edits(setU(".pooling_type", 4), add("cls.weight", 64, 64), add("cls.output.weight", 64, 1), add("cls.norm.weight", 64)), "cls.norm.weight"),
			refusedKey("sliding_window_pattern of the wrong length", ".attention.sliding_window_pattern", []bool{true, false}),
			misshapen("ffn_up not fused", "blk.2.ffn_up.weight", 64, 128),
		),
		// nomic-bert-moe: experts on the layers il mod moe_every_n_layers = 1.
		family("nomic-bert-moe", testutil.TinyNomicBertMoE(), requiresEach("blk.1.ffn_up_exps.weight"),
			unset("expert_used_count missing", ".expert_used_count"),
			refused("more experts used than there are", set(".expert_used_count", uint32(9)), ".expert_used_count", ".expert_count"),
			refusedKey("moe_every_n_layers a string", ".moe_every_n_layers", "two"),
			// Every third layer from layer 1 would leave layer 3's router unused.
			refusedAtLoad("router on a dense layer", set(".moe_every_n_layers", uint32(3)), "blk.3.ffn_gate_inp.weight", "moe_every_n_layers = 3"),
			misshapen("ffn_down_exps of the wrong width", "blk.3.ffn_down_exps.weight", 64, 64, 8),
		),
		// jina-bert-v3: bert's block with NEOX RoPE in place of positions;
		// every bias and the token types optional, no classification head.
		family("jina-bert-v3", testutil.TinyJinaBertV3(), requiresEach("token_embd_norm.bias", "blk.1.attn_output_norm.weight", "blk.1.layer_output_norm.bias", "blk.1.ffn_down.weight"),
			unset("layer_norm_epsilon missing", ".attention.layer_norm_epsilon"),
			loads("without the optional biases and token types", drop("blk.0.attn_qkv.bias", "blk.0.attn_output.bias", "blk.0.ffn_up.bias", "blk.0.ffn_down.bias", "token_types.weight")),
			loads("without pooling_type", del("jina-bert-v3.pooling_type")),
			misshapen("attn_qkv narrow", "blk.0.attn_qkv.weight", 64, 128),
			unsupported("learned positions", add("position_embd.weight", 64, 2048), "position_embd.weight"),
			unsupported("a classification head", edits(add("cls.weight", 64, 64), add("cls.bias", 64)), "cls.weight"),
			unsupported("a gated feed-forward", add("blk.0.ffn_gate.weight", 64, 128), "blk.0.ffn_gate.weight"),
		),
		// eurobert and neo-bert: a decoder's blocks over the whole text,
		// no output matrix (llama-bench d32676d77 refuses a eurobert file
		// with one: a tensor it does not create).
		family("eurobert", testutil.TinyEuroBert(), requiresEach("output_norm.weight", "blk.1.ffn_gate.weight", "blk.1.ffn_norm.weight", "blk.1.attn_k.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			loads("causal", set(".attention.causal", true)),
			unsupported("an output matrix", add("output.weight", 64, 320), "output.weight"),
			unsupported("a Q bias", add("blk.0.attn_q.bias", 64), "blk.0.attn_q.bias"),
		),
		// llama-embed: llama's blocks and loader, the logits never made:
		// output.weight optional and passed over, attention.causal
		// optional (absent: causal), a classification head refused
		// (llama-bench d32676d77: "wrong number of tensors").
		family("llama-embed", testutil.TinyLlamaEmbed(), requiresEach("output_norm.weight", "blk.1.ffn_gate.weight", "blk.1.ffn_norm.weight", "blk.0.attn_v.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			loads("without output.weight", drop("output.weight")),
			loads("over the whole text", set(".attention.causal", false)),
			unsupported("a classification head", add("cls.output.weight", 64, 1), "cls.output.weight"),
			refusedKey("attention.causal a number", ".attention.causal", uint32(0)),
		),
		family("neo-bert", testutil.TinyNeoBert(), requiresEach("enc.output_norm.weight", "blk.1.attn_qkv.weight", "blk.1.ffn_norm.weight"),
			unset("RMS epsilon missing", ".attention.layer_norm_rms_epsilon"),
			misshapen("ffn_up not fused", "blk.1.ffn_up.weight", 64, 128),
			refused("output_norm in enc.output_norm's place", edits(drop("enc.output_norm.weight"), add("output_norm.weight", 64)), "enc.output_norm.weight"),
			loads("with a classification head, pooled by CLS", edits(add("cls.weight", 64, 64), add("cls.bias", 64), add("cls.output.weight", 64, 1), add("cls.output.bias", 1))),
		),
		// The released file's XLM-R Unigram ("t5") vocabulary loads (below:
		// an edit that changes nothing); its precompiled charsmap cut short,
		// or a key whose replacement lies past the map, does not.
		family("nomic-bert-moe", unigram(testutil.TinyNomicBertMoE()), nil,
			loads("t5 tokenizer", func(h *hmodel) {}),
			refusedAtLoad("t5 charsmap truncated", set("tokenizer.ggml.precompiled_charsmap", []uint8{0xff, 0, 0}), "precompiled charsmap", "4-byte trie size"),
			refusedAtLoad("t5 charsmap size past its end", set("tokenizer.ggml.precompiled_charsmap", []uint8{0, 1, 0, 0, 'a', 0}), "precompiled charsmap", "trie of 256 bytes"),
			refusedAtLoad("t5 charsmap replacement past its end", func(h *hmodel) {
				cm, _ := testutil.Charsmap(map[string]string{"a": "b"})
				size := int(binary.LittleEndian.Uint32(cm))
				h.set("tokenizer.ggml.precompiled_charsmap", cm[:4+size+1]) // "b" without its NUL
			}, "precompiled charsmap", "no terminating NUL"),
			refusedAtLoad("t5 charsmap of strings", set("tokenizer.ggml.precompiled_charsmap", []string{"a"}), "tokenizer.ggml.precompiled_charsmap", "array of uint8"),
		),
		// jina-bert-v2: llama.cpp fixes the ALiBi maximum bias at 8 and reads
		// no key for it, so a file's max_alibi_bias, even negative, changes
		// nothing (model.TestJinaMaxALiBiBiasIgnored: the same bits).
		family("jina-bert-v2", testutil.TinyJinaBertV2(), requires{
			"attn_k_norm missing beside attn_q_norm": "blk.0.attn_k_norm.weight",
		}.and("blk.0.attn_q.bias", "blk.1.attn_output.bias", "blk.1.attn_q_norm.bias", "blk.0.ffn_down.bias", "blk.1.layer_output_norm.bias"),
			loads("max_alibi_bias negative", setF(".attention.max_alibi_bias", -1)),
			loads("max_alibi_bias NaN", setF(".attention.max_alibi_bias", nan)),
			refusedKey("causal", ".attention.causal", true),
			// Absent, llama.cpp attends causally: refused as true is.
			refused("attention.causal missing", del(".attention.causal"), ".attention.causal"),
			// Without ffn_gate, ffn_up must hold the gate and up rows both.
			refused("ffn_gate missing", drop("blk.0.ffn_gate.weight"), "blk.0.ffn_up.weight"),
			misshapen("attn_q_norm of one head", "blk.0.attn_q_norm.weight", 16),
			loads("with a classification head, pooled by mean", edits(add("cls.weight", 96, 1), add("cls.bias", 1))),
			unsupported("with a fused attn_qkv", edits(drop("blk.1.attn_q.weight"), add("blk.1.attn_qkv.weight", 96, 288)), "blk.1.attn_qkv.weight", "fused"),
		),
	)
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
