package memplan_test

import (
	"reflect"
	"testing"

	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/memplan"
	"github.com/lowmem/llm/quant"
)

// A file with Q, K and V fused in attn_qkv (and their biases in
// attn_qkv.bias) has the shape of the file with them apart: the same
// bytes in each block, the same parameters and heap, so the same plan.
// In F32 the fused tensor is exactly the three's bytes; quantized, a row
// is quantized alone, so it is too.
func TestShapeFusedQKV(t *testing.T) {
	for _, w := range []quant.Type{quant.F32, quant.Q8_0} {
		spec := testutil.TinyQwen2()
		spec.WeightType = w
		shapes := make([]*memplan.Shape, 2)
		for i, fuse := range []bool{false, true} {
			spec.FuseQKV = fuse
			data, err := testutil.ModelBytes(spec)
			g, _ := testutil.Parse(t, data, err)
			if shapes[i], err = memplan.ShapeOf(g, int64(len(data))); err != nil {
				t.Fatal(err)
			}
		}
		apart, fused := shapes[0], shapes[1]
		if !reflect.DeepEqual(apart.LayerBytes, fused.LayerBytes) || apart.Params != fused.Params || apart.HeapBytes != fused.HeapBytes ||
			apart.OtherBytes != fused.OtherBytes || apart.FileBytes-fused.FileBytes > 1024 || fused.FileBytes-apart.FileBytes > 1024 {
			t.Errorf("%v: fused shape %+v, apart %+v", w, fused, apart)
		}
	}
}
