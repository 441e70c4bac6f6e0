package testutil

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/quant"
)

// LoRASpec is a LoRA adapter of random low-rank factors for some of a
// model's matrices, written as llama.cpp's convert_lora_to_gguf.py
// writes one: general.type "adapter", adapter.type "lora",
// adapter.lora.alpha, and per adapted tensor W "W.lora_a" ([W's columns,
// rank]) and "W.lora_b" ([rank, W's rows]); token_embd.weight's lora_a
// is [rank, vocabulary] and its lora_b [rank, embedding].
type LoRASpec struct {
	Tensors []string // the model tensors to adapt, e.g. "blk.0.attn_q.weight"
	Rank    int
	Alpha   float32 // 0: no alpha key at all
	Seed    uint64
	Type    quant.Type // of lora_a and lora_b (F32, F16, BF16, Q8_0 …); zero value F32
	Arch    string     // general.architecture; "" takes the model's
	// Amplitude bounds the factors' uniform values (0: 0.1).
	Amplitude float32
}

// BlockMatrices names f's 2-D tensors inside its blocks (blk.*): what an
// adapter of every block's matrices lists in LoRASpec.Tensors.
func BlockMatrices(f *gguf.File) []string {
	var names []string
	for _, ti := range f.Tensors {
		if len(ti.Dims) == 2 && strings.HasPrefix(ti.Name, "blk.") {
			names = append(names, ti.Name)
		}
	}
	return names
}

// LoRABytes writes the adapter of s for the model file model (its shapes
// and architecture are read from it).
func LoRABytes(model []byte, s LoRASpec) ([]byte, error) {
	f, err := gguf.Read(bytes.NewReader(model), int64(len(model)))
	if err != nil {
		return nil, fmt.Errorf("testutil: %w", err)
	}
	if s.Arch == "" {
		s.Arch = f.Arch()
	}
	var out bytes.Buffer
	err = WriteLoRA(&out, s, func(name string) []int64 {
		if ti, ok := f.Tensor(name); ok {
			return ti.Dims
		}
		return nil
	})
	return out.Bytes(), err
}

// WriteLoRA writes the adapter of s to w; dims gives each adapted model
// tensor's dimensions (nil: the model has no such tensor). s.Arch must
// be set.
func WriteLoRA(w io.Writer, s LoRASpec, dims func(name string) []int64) error {
	g := gguf.NewWriter()
	g.AddKV("general.architecture", s.Arch)
	g.AddKV("general.type", "adapter")
	g.AddKV("adapter.type", "lora")
	if s.Alpha != 0 {
		g.AddKV("adapter.lora.alpha", s.Alpha)
	}
	amp := s.Amplitude
	if amp == 0 {
		amp = 0.1
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x10ca))
	R := int64(s.Rank)
	for _, name := range s.Tensors {
		d := dims(name)
		if len(d) != 2 {
			return fmt.Errorf("testutil: the model has no matrix %q", name)
		}
		cols, rows := d[0], d[1]
		aDims, bDims := []int64{cols, R}, []int64{R, rows}
		if name == "token_embd.weight" {
			aDims, bDims = []int64{R, rows}, []int64{R, cols}
		}
		for _, t := range []struct {
			suffix string
			dims   []int64
		}{{".lora_a", aDims}, {".lora_b", bDims}} {
			v := make([]float32, t.dims[0]*t.dims[1])
			for i := range v {
				v[i] = amp * (2*rng.Float32() - 1)
			}
			data, err := encodeRows(s.Type, v, int(t.dims[0]))
			if err != nil {
				return err
			}
			if err := g.AddTensor(name+t.suffix, s.Type, t.dims, data); err != nil {
				return fmt.Errorf("testutil: %w", err)
			}
		}
	}
	if _, err := g.WriteTo(w); err != nil {
		return fmt.Errorf("testutil: %w", err)
	}
	return nil
}

// encodeRows encodes v, rows of cols floats, in type t.
func encodeRows(t quant.Type, v []float32, cols int) ([]byte, error) {
	rb, err := t.RowBytes(int64(cols))
	if err != nil {
		return nil, fmt.Errorf("testutil: %w", err)
	}
	rows := len(v) / cols
	out := make([]byte, int(rb)*rows)
	for r := range rows {
		if err := quant.QuantizeRow(t, out[r*int(rb):(r+1)*int(rb)], v[r*cols:(r+1)*cols]); err != nil {
			return nil, fmt.Errorf("testutil: %w", err)
		}
	}
	return out, nil
}

// MergeLoRA returns the model file model with each adapter's corrections
// merged into its weights offline, W + scale·alpha/rank·B·A (scale alone
// without alpha), computed in float64: the file a run-time adapter must
// match. The adapted tensors must be F32 in the model.
func MergeLoRA(model []byte, adapters [][]byte, scales []float32) ([]byte, error) {
	f, err := gguf.Read(bytes.NewReader(model), int64(len(model)))
	if err != nil {
		return nil, fmt.Errorf("testutil: %w", err)
	}
	weights := map[string][]float64{}
	for i, ad := range adapters {
		a, err := gguf.Read(bytes.NewReader(ad), int64(len(ad)))
		if err != nil {
			return nil, fmt.Errorf("testutil: adapter %d: %w", i, err)
		}
		alpha, _ := a.Float("adapter.lora.alpha")
		for _, ti := range a.Tensors {
			const sfx = ".lora_a"
			if len(ti.Name) <= len(sfx) || ti.Name[len(ti.Name)-len(sfx):] != sfx {
				continue
			}
			name := ti.Name[:len(ti.Name)-len(sfx)]
			bi, _ := a.Tensor(name + ".lora_b")
			wi, ok := f.Tensor(name)
			if !ok || wi.Type != quant.F32 {
				return nil, fmt.Errorf("testutil: merge %q: not an F32 tensor of the model", name)
			}
			A, err := floats(ad, &ti)
			if err != nil {
				return nil, err
			}
			B, err := floats(ad, bi)
			if err != nil {
				return nil, err
			}
			w, ok := weights[name]
			if !ok {
				w32, err := floats(model, wi)
				if err != nil {
					return nil, err
				}
				w = make([]float64, len(w32))
				for j, v := range w32 {
					w[j] = float64(v)
				}
				weights[name] = w
			}
			R := int(bi.Dims[0])
			s := float64(scales[i])
			if alpha != 0 {
				s *= alpha / float64(R)
			}
			cols, rows := int(wi.Dims[0]), int(wi.Dims[1])
			for r := range rows {
				for c := range cols {
					var d float64
					for k := range R {
						if name == "token_embd.weight" {
							// lora_a [R, vocab], lora_b [R, embd]: row r is a token, c an element.
							d += float64(B[c*R+k]) * float64(A[r*R+k])
						} else {
							d += float64(B[r*R+k]) * float64(A[k*cols+c])
						}
					}
					w[r*cols+c] += s * d
				}
			}
		}
	}
	g := gguf.NewWriter()
	for _, kv := range f.KV {
		g.AddKV(kv.Key, kv.Value)
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		data := model[ti.Offset : ti.Offset+ti.Size]
		if w, ok := weights[ti.Name]; ok {
			data = make([]byte, 4*len(w))
			for j, v := range w {
				binary.LittleEndian.PutUint32(data[4*j:], math.Float32bits(float32(v)))
			}
		}
		if err := g.AddTensor(ti.Name, ti.Type, ti.Dims, data); err != nil {
			return nil, fmt.Errorf("testutil: %w", err)
		}
	}
	var out bytes.Buffer
	if _, err := g.WriteTo(&out); err != nil {
		return nil, fmt.Errorf("testutil: %w", err)
	}
	return out.Bytes(), nil
}

// floats decodes tensor ti of file to float32.
func floats(file []byte, ti *gguf.TensorInfo) ([]float32, error) {
	out := make([]float32, ti.Elems())
	if err := quant.Dequantize(ti.Type, out, file[ti.Offset:ti.Offset+ti.Size]); err != nil {
		return nil, fmt.Errorf("testutil: %q: %w", ti.Name, err)
	}
	return out, nil
}
