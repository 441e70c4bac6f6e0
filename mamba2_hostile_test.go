package llm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/quant"
)

// A mamba2 file (TinyMamba2: inner 128 in 8 heads, 2 groups, state 16,
// kernel 4, so a block's convolution is 192 channels wide and ssm_in
// 328) that lacks one of the tensors llama.cpp's loader requires, has one
// of another size, or whose ssm.* sizes are missing or another file's:
// Load and Plan both refuse it with ErrBadModel naming the key or tensor
// at fault.
func TestHostileMamba2(t *testing.T) {
	base := modelBytes(t, testutil.TinyMamba2())
	dir := t.TempDir()
	drop := func(name string) func(*hmodel) { return func(h *hmodel) { h.drop(name) } }
	put := func(name string, dims ...int64) func(*hmodel) {
		return func(h *hmodel) { h.put(name, quant.F32, dims...) }
	}
	set := func(k string, v uint32) func(*hmodel) { return func(h *hmodel) { h.set(k, v) } }
	del := func(k string) func(*hmodel) { return func(h *hmodel) { h.del(k) } }
	for i, c := range []struct {
		name, mention string
		edit          func(*hmodel)
	}{
		{"without ssm_norm", "blk.1.ssm_norm.weight", drop("blk.1.ssm_norm.weight")},
		{"without the kernel's bias", "blk.0.ssm_conv1d.bias", drop("blk.0.ssm_conv1d.bias")},
		{"without the time steps' bias", "blk.2.ssm_dt.bias", drop("blk.2.ssm_dt.bias")},
		{"without ssm_a", "blk.1.ssm_a", drop("blk.1.ssm_a")},
		{"without output_norm", "output_norm.weight", drop("output_norm.weight")},
		{"kernel of 3 taps", "blk.1.ssm_conv1d.weight", put("blk.1.ssm_conv1d.weight", 3, 192)},
		{"A of one value a group", "blk.0.ssm_a", put("blk.0.ssm_a", 1, 2)},
		{"ssm_norm of one group", "blk.2.ssm_norm.weight", put("blk.2.ssm_norm.weight", 128, 1)},
		{"ssm_in without dt", "blk.0.ssm_in.weight", put("blk.0.ssm_in.weight", 64, 320)},
		{"group count missing", "mamba2.ssm.group_count", del(".ssm.group_count")},
		{"group count of another file", "blk.0.ssm_in.weight", set(".ssm.group_count", 4)},
		{"heads of another file", "blk.0.ssm_in.weight", set(".ssm.time_step_rank", 16)},
		{"heads not dividing the inner size", "mamba2.ssm.time_step_rank", set(".ssm.time_step_rank", 6)},
		{"kernel huge", "mamba2.ssm.conv_kernel", set(".ssm.conv_kernel", 1<<20)},
		{"norm epsilon missing", "mamba2.attention.layer_norm_rms_epsilon", del(".attention.layer_norm_rms_epsilon")},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := parseModel(t, base)
			c.edit(h)
			path := filepath.Join(dir, fmt.Sprintf("mamba2-%d.gguf", i))
			if err := os.WriteFile(path, h.bytes(t), 0o644); err != nil {
				t.Fatal(err)
			}
			checkHostile(t, path, hostileCase{name: c.name, want: llm.ErrBadModel, mention: []string{c.mention}, plan: true})
		})
	}
}
