package main

import (
	"bytes"
	"io"
	"strings"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// loraTargets are the matrices an adapter of a fine-tune usually adapts
// (PEFT's q, k, v, o, gate, up and down projections), by their name after
// "blk.<i>.".
var loraTargets = []string{"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_qkv.weight",
	"attn_output.weight", "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"}

// writeLoRA writes a LoRA adapter of rank for m's blocks' 2-D target
// matrices: random F16 factors, alpha = rank (a scale of 1 is the factors'
// product as it is).
func (m *model) writeLoRA(out io.Writer, rank int, seed uint64) (int64, error) {
	dims := map[string][]int64{}
	var names []string
	for _, t := range m.tensors {
		_, rest, ok := strings.Cut(strings.TrimPrefix(t.Name, "blk."), ".")
		if !strings.HasPrefix(t.Name, "blk.") || !ok || len(t.Dims) != 2 {
			continue
		}
		for _, target := range loraTargets {
			if rest == target {
				dims[t.Name] = t.Dims
				names = append(names, t.Name)
			}
		}
	}
	// Built whole, then written: the adapter is small (rank × the
	// matrices' sides), and its size is then what the buffer holds.
	var buf bytes.Buffer
	if err := testutil.WriteLoRA(&buf, testutil.LoRASpec{Tensors: names, Rank: rank, Alpha: float32(rank), Seed: seed,
		Type: quant.F16, Arch: m.shape.Arch, Amplitude: 0.02}, func(name string) []int64 { return dims[name] }); err != nil {
		return 0, err
	}
	return buf.WriteTo(out)
}
