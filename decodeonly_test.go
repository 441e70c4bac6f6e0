package llm_test

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// TestDecodeOnlyTypes runs a model whose matrices are each of the types
// the library decodes but cannot write (llama-quantize makes them only
// with an importance matrix), and compares its logits with those of the
// same model whose matrices are stored as the float32s they decode to.
// The two differ only by the activations' 8-bit quantization in the
// quantized dot products.
func TestDecodeOnlyTypes(t *testing.T) {
	checkDecodedTwin(t, quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ1_S, quant.IQ1_M)
}

// TestTernaryTypes is TestDecodeOnlyTypes for TQ1_0 and TQ2_0, which
// testutil writes with quant's encoders.
func TestTernaryTypes(t *testing.T) { checkDecodedTwin(t, quant.TQ1_0, quant.TQ2_0) }

// checkDecodedTwin compares, for each type, the logits of a model whose
// matrices are of that type with those of its F32 twin.
func checkDecodedTwin(t *testing.T, types ...quant.Type) {
	ctx := context.Background()
	prompt := []int32{1, 40, 41, 42, 100, 7, 250, 3, 19, 64, 65, 66}
	for _, typ := range types {
		t.Run(typ.String(), func(t *testing.T) {
			spec := testutil.ModelSpec{Vocab: 320, Embd: 256, Layers: 2, Heads: 4, HeadsKV: 2, FFN: 512,
				Context: 64, WeightType: typ, Seed: uint64(typ)}
			file := modelBytes(t, spec)
			h := parseModel(t, file)
			n := 0
			for i := range h.tensors {
				ht := &h.tensors[i]
				if ht.typ != typ {
					continue
				}
				n++
				elems := 1
				for _, d := range ht.dims {
					elems *= int(d)
				}
				f := make([]float32, elems)
				if err := quant.Dequantize(typ, f, ht.data); err != nil {
					t.Fatal(err)
				}
				b := make([]byte, 4*elems)
				for j, v := range f {
					binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(v))
				}
				ht.typ, ht.data = quant.F32, b
			}
			if n < 7 {
				t.Fatalf("%d tensors of type %v, want the 2-D weights", n, typ)
			}
			dir := t.TempDir()
			paths := [2]string{filepath.Join(dir, "q.gguf"), filepath.Join(dir, "f32.gguf")}
			for i, b := range [][]byte{file, h.bytes(t)} {
				if err := os.WriteFile(paths[i], b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var logits [2][]float32
			for i, p := range paths {
				all := mustEval(t, ctx, session(t, load(t, p)).EvalAll, prompt)
				logits[i] = all
			}
			q, f := logits[0], logits[1]
			var num, den float64
			for j := range f {
				if math.IsNaN(float64(q[j])) || math.IsInf(float64(q[j]), 0) {
					t.Fatalf("logit %d (position %d) is %v", j%320, j/320, q[j])
				}
				d := float64(q[j] - f[j])
				num += d * d
				den += float64(f[j]) * float64(f[j])
			}
			// 8-bit activations move logits by about 1% of their RMS.
			if rel := math.Sqrt(num / den); !(rel < 0.05) {
				t.Errorf("logits differ from the F32 twin's by %.3g of their RMS, want < 0.05", rel)
			} else {
				t.Logf("relative RMS difference %.4f", rel)
			}
			for p := range prompt {
				qa := testutil.Argmax(q[p*320 : (p+1)*320])
				fa := testutil.Argmax(f[p*320 : (p+1)*320])
				if qa != fa {
					t.Logf("position %d: top token %d, F32 twin's %d", p, qa, fa)
				}
			}
		})
	}
}
