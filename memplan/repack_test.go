package memplan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lowmem/llm/expertcache"
	"github.com/lowmem/llm/internal/testutil"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/quant"
)

// TestPlanRepack: a resident plan with Repack moves the repackable
// matrices' bytes from the mapped weights to the "repacked weights"
// component, exactly: whole 4096-byte buffers in, the whole pages of each
// range out, the total and the residency's pool moved by the difference.
// Streaming plans, plans whose Auto chose streaming and requests without
// Repack repack nothing.
func TestPlanRepack(t *testing.T) {
	testutil.NeedX8(t)
	spec := testutil.TinyLlama()
	spec.Embd, spec.FFN, spec.WeightType = 256, 512, quant.Q4_0
	sh, err := ReadShape(testutil.TempModel(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	// 7 matrices a block, and the output.
	if len(sh.Repack) != 7*spec.Layers+1 {
		t.Fatalf("%d repackable tensors, want %d", len(sh.Repack), 7*spec.Layers+1)
	}
	var bytes, anon, released int64
	for _, r := range sh.Repack {
		bytes += r.Len
		anon += (r.X8 + mem.DirectAlign - 1) / mem.DirectAlign * mem.DirectAlign
		end := (r.Off + r.Len) &^ 4095
		if r.Off+r.Len == sh.FileBytes {
			end = (sh.FileBytes + 4095) &^ 4095 // the file's last page is the range's own (mem.Mapping.Release)
		}
		released += max(0, end-(r.Off+4095)&^4095)
	}
	req := Request{Limit: 1 << 30, Context: 200, Batch: 32, Threads: 2}
	base, err := Make(sh, req)
	if err != nil {
		t.Fatal(err)
	}
	req.Repack = true
	p, err := Make(sh, req)
	if err != nil {
		t.Fatal(err)
	}
	comp := func(p Plan, name string) int64 {
		for _, c := range p.Components {
			if c.Name == name {
				return c.Bytes
			}
		}
		return -1
	}
	switch {
	case base.Repacked != 0 || comp(base, RepackedComponent) != -1:
		t.Errorf("without Repack: %d bytes repacked", base.Repacked)
	case p.Repacked != bytes:
		t.Errorf("repacked %d bytes, the matrices hold %d", p.Repacked, bytes)
	case comp(p, RepackedComponent) != anon:
		t.Errorf("repacked weights %d, want %d", comp(p, RepackedComponent), anon)
	case comp(p, WeightsComponent) != comp(base, WeightsComponent)-released:
		t.Errorf("mapped weights %d, want %d - %d", comp(p, WeightsComponent), comp(base, WeightsComponent), released)
	case p.Total != total(p.Components) || p.Total != base.Total+anon-released:
		t.Errorf("total %d, components %d, want %d", p.Total, total(p.Components), base.Total+anon-released)
	case p.PeakAt(200) != base.PeakAt(200)+anon-released:
		t.Errorf("peak at the full context %d, want %d", p.PeakAt(200), base.PeakAt(200)+anon-released)
	case !p.Fits || p.Weights != WeightsResident:
		t.Errorf("plan %+v", p)
	}
	for _, r := range []Request{
		{Limit: 1 << 30, Context: 200, Batch: 32, Threads: 2, Repack: true, Weights: WeightsStreaming},
		// Room for the fixed weights and a few blocks only: Auto streams.
		{Limit: base.Total - base.Residency.Weights(0)/2, Context: 200, Batch: 32, Threads: 2, Repack: true},
	} {
		q, err := Make(sh, r)
		if err != nil {
			t.Fatal(err)
		}
		if q.Weights != WeightsStreaming || q.Repacked != 0 || comp(q, RepackedComponent) != -1 {
			t.Errorf("limit %d, weights %v: %v weights, %d bytes repacked", r.Limit, r.Weights, q.Weights, q.Repacked)
		}
	}
}

// TestShapeRepackBytes: the shape sizes each repackable matrix in the X8
// layout of its type, whose block column of eight rows takes extra bytes
// more than the file's: Q4_K's, Q5_K's and Q3_K's scales unpacked to
// bytes, IQ4_XS's too, and IQ3_S held in IQ4_XS's layout (four bits an
// element against the file's 3.25, and a byte a scale: 1104 bytes for
// the file's 880); MXFP4 keeps its E8M0 bytes, the file's size, and Q5_0
// its fifth bits (reordered within each row's dword). The
// types of 32-element blocks also at widths that are not a multiple of
// 256 (160, FFN 288), which their layout takes without padding.
func TestShapeRepackBytes(t *testing.T) {
	for _, c := range []struct {
		typ   quant.Type
		extra int64
	}{
		{quant.Q4_0, 0}, {quant.Q8_0, 0}, {quant.Q4_K, 32}, {quant.Q5_K, 32}, {quant.Q6_K, 0},
		{quant.IQ4_XS, 16}, {quant.Q3_K, 32}, {quant.Q2_K, 0}, {quant.IQ4_NL, 0}, {quant.MXFP4, 0}, {quant.Q5_0, 0}, {quant.IQ3_S, 224},
		{quant.IQ2_XXS, 1168 - 528}, {quant.IQ2_XS, 1168 - 592}, {quant.IQ2_S, 1168 - 656},
		{quant.IQ3_XXS, 1168 - 784}, {quant.IQ1_S, 1168 - 400}, {quant.IQ1_M, 1168 - 448},
	} {
		typ := c.typ
		if _, ok := quant.X8(typ, 256); !ok {
			continue
		}
		if raceEnabled && typ != quant.Q4_0 && typ != quant.Q4_K {
			// Byte arithmetic on one goroutine: the race detector has
			// nothing to find, and makes the low-bit quantizers that
			// write the models take half a minute.
			continue
		}
		widths := [][2]int{{256, 512}}
		if typ.BlockElems() == quant.QK {
			widths = append(widths, [2]int{160, 288})
		}
		for _, wd := range widths {
			t.Run(fmt.Sprintf("%v/%d", typ, wd[0]), func(t *testing.T) {
				spec := testutil.TinyLlama()
				spec.Embd, spec.FFN, spec.WeightType = wd[0], wd[1], typ
				sh, err := ReadShape(testutil.TempModel(t, spec))
				if err != nil {
					t.Fatal(err)
				}
				if len(sh.Repack) != 7*spec.Layers+1 {
					t.Fatalf("%d repackable tensors, want %d", len(sh.Repack), 7*spec.Layers+1)
				}
				group := int64(8 * typ.BlockBytes()) // a group's block column in the file
				if got := int64(quant.X8BlockBytes(typ)); got != group+c.extra {
					t.Errorf("X8BlockBytes %d, want %d + %d", got, group, c.extra)
				}
				for _, r := range sh.Repack {
					if r.Len%group != 0 || r.X8 != r.Len/group*(group+c.extra) {
						t.Errorf("range %+v: %d bytes repacked, want %d a %d-byte block column of 8 rows", r.Range, r.X8, group+c.extra, group)
					}
				}
			})
		}
	}
}

// TestShapeRepackExperts: a mixture-of-experts model's 3-D expert tensors
// are repackable whole, their X8 size every expert's rows' (Q4_K: 32 bytes
// more a group's super-block), beside the attention and the output.
func TestShapeRepackExperts(t *testing.T) {
	if _, ok := quant.X8(quant.Q4_K, 256); !ok {
		t.Skip("no X8 kernels for Q4_K here")
	}
	spec := testutil.TinyQwen3MoE()
	spec.Embd, spec.HeadDim, spec.ExpertFFN, spec.WeightType, spec.TiedOutput = 256, 64, 256, quant.Q4_K, false
	sh, err := ReadShape(testutil.TempModel(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	if want := 7*spec.Layers + 1; len(sh.Repack) != want {
		t.Fatalf("%d repackable tensors, want %d (q, k, v, o, three expert tensors a block, the output)", len(sh.Repack), want)
	}
	var experts int64
	for _, b := range sh.ExpertBytes {
		experts += b
	}
	var covered int64
	group := int64(8 * quant.Q4_K.BlockBytes())
	for _, r := range sh.Repack {
		if r.Len%group != 0 || r.X8 != r.Len/group*(group+32) {
			t.Errorf("range %+v: %d bytes repacked, want %d a %d-byte block column of 8 rows", r.Range, r.X8, group+32, group)
		}
		covered += r.Len
	}
	if covered <= experts {
		t.Errorf("repackable ranges cover %d bytes, the experts alone %d", covered, experts)
	}
}

// TestPlanRepackExperts: a mixture-of-experts model whose experts are read
// from disk plans its expert cache in the X8 layout with Repack when the
// budget holds every expert so, in the file's layout otherwise (a cache
// that misses keeps its slots), and says which (Plan.RepackExperts, the
// component's note).
func TestPlanRepackExperts(t *testing.T) {
	if _, ok := quant.X8(quant.Q4_K, 256); !ok {
		t.Skip("no X8 kernels for Q4_K here")
	}
	spec := testutil.TinyQwen3MoE()
	spec.Embd, spec.HeadDim, spec.ExpertFFN, spec.WeightType = 256, 64, 256, quant.Q4_K
	sh, err := ReadShape(testutil.TempModel(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	if !sh.ExpertsX8() || sh.ExpertFloor <= 0 {
		t.Fatalf("X8 %v, floor %d", sh.ExpertsX8(), sh.ExpertFloor)
	}
	base := Request{Limit: 1 << 40, Context: 64, Batch: 32, Threads: 2, Weights: WeightsStreaming}
	all, err := Make(sh, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		limit        int64
		repack, want bool
	}{
		{1 << 40, false, false}, {1 << 40, true, true},
		{all.Total - all.Residency.Experts + sh.Experts()/2, true, false}, // half the experts: the file's layout
	} {
		req := base
		req.Limit, req.Repack = c.limit, c.repack
		p, err := Make(sh, req)
		if err != nil {
			t.Fatal(err)
		}
		var note string
		var held int64
		for _, c := range p.Components {
			if c.Name == ExpertsComponent {
				note, held = c.Note, c.Bytes
			}
		}
		// The component is the cache's footprint (expertcache.Size), not
		// the pool it could have taken; with room for every expert the
		// budget is that footprint too.
		sz, err := expertcache.Size(sh.expertLayout, p.Residency.Experts, expertcache.WithRepack(c.repack))
		if err != nil || held != sz.Bytes() || (c.limit == 1<<40) != (p.Residency.Experts == held && sz.Slots == sz.Experts) {
			t.Errorf("limit %d, Repack %v: expert cache component %d bytes, budget %d, the cache %d bytes (%d of %d experts), %v",
				c.limit, c.repack, held, p.Residency.Experts, sz.Bytes(), sz.Slots, sz.Experts, err)
		}
		if p.RepackExperts != c.want || p.Residency.Experts <= 0 || strings.Contains(note, "repacked as read") != c.want || p.Repacked != 0 {
			t.Errorf("limit %d, Repack %v: RepackExperts %v, experts %d, note %q, %d bytes repacked at load; want %v",
				c.limit, c.repack, p.RepackExperts, p.Residency.Experts, note, p.Repacked, c.want)
		}
	}
}
