package engine

import (
	"slices"
	"strings"

	"github.com/lowmem/llm/internal/ops"
)

// Kernels lists the tile variant chosen for each weight type among the
// model's matrices ("Q4_0=avx512vnni-row-nta Q6_K=avx512vnni-rowdot"),
// types by name.
func (e *Engine) Kernels() string {
	mm := e.Model
	seen := map[string]string{}
	add := func(ms ...*ops.Matrix) {
		for _, m := range ms {
			if m != nil {
				seen[m.T.Type.String()] = m.Kernel
			}
		}
	}
	add(mm.Output)
	for i := range mm.Blocks {
		l := &mm.Blocks[i]
		add(l.Wq, l.Wk, l.Wv, l.Wqkv, l.Wo, l.Gate, l.Up, l.GateUp, l.Down, l.Router)
		for j := range l.Experts {
			add(l.Experts[j].Gate, l.Experts[j].Up, l.Experts[j].Down)
		}
	}
	names := make([]string, 0, len(seen))
	for t := range seen {
		names = append(names, t)
	}
	slices.Sort(names)
	for i, t := range names {
		names[i] = t + "=" + seen[t]
	}
	return strings.Join(names, " ")
}
