package main

import "github.com/lowmem/llm/internal/gguf"

// mimo2Shape is what a mimo2 file says beyond its experts: the global
// layers' KV heads (HeadsKV is the windowed layers'), the values' head
// size (HeadDim is the keys'), the global layers' period (layers 0,
// GlobalEvery, 2·GlobalEvery … global, the others windowed with Window,
// sinks and base RopeBaseSWA) and the attention's output scale.
type mimo2Shape struct {
	GlobalKV, HeadDimV, GlobalEvery int
	RopeBaseSWA, ValueScale         float32
}

// mimo2Windowed reports whether a mimo2's layer l is windowed.
func (s shape) mimo2Windowed(l int) bool { return l%s.Mimo2.GlobalEvery != 0 }

// mimo2KV is a mimo2's layer l's KV heads.
func (s shape) mimo2KV(l int) int {
	if s.mimo2Windowed(l) {
		return s.HeadsKV
	}
	return s.Mimo2.GlobalKV
}

// addMimo2KV writes a mimo2's own keys over the common ones: the
// per-layer KV heads, the values' head size, the window flags, the
// windowed layers' base and the output scale.
func (s shape) addMimo2KV(g *gguf.Writer) {
	a, m := s.Arch+".", s.Mimo2
	kvs, flags := make([]int32, s.Layers), make([]bool, s.Layers)
	for l := range kvs {
		kvs[l], flags[l] = int32(s.mimo2KV(l)), s.mimo2Windowed(l)
	}
	g.AddKV(a+"attention.head_count_kv", kvs)
	g.AddKV(a+"attention.key_length", uint32(s.headDim()))
	g.AddKV(a+"attention.value_length", uint32(m.HeadDimV))
	g.AddKV(a+"attention.sliding_window", uint32(s.Window))
	g.AddKV(a+"attention.sliding_window_pattern", flags)
	g.AddKV(a+"rope.freq_base_swa", m.RopeBaseSWA)
	g.AddKV(a+"attention.value_scale", m.ValueScale)
}

// mimo2Plan adds a mimo2 block's attention tensors after its attn_norm
// (prefix p): Q, K and V at layer l's KV heads, attn_output of the
// values' width, and the windowed layers' attn_sinks.
func mimo2Plan(s shape, p string, l int, add func(name string, kind tensorKind, dims ...int64)) {
	e, hd, hv := int64(s.Embd), int64(s.headDim()), int64(s.Mimo2.HeadDimV)
	h, hkv := int64(s.Heads), int64(s.mimo2KV(l))
	add(p+"attn_q.weight", kindWeight, e, h*hd)
	add(p+"attn_k.weight", kindWeight, e, hkv*hd)
	add(p+"attn_v.weight", kindWeight, e, hkv*hv)
	add(p+"attn_output.weight", kindWeight, h*hv, e)
	if s.mimo2Windowed(l) {
		add(p+"attn_sinks.weight", kindBias, h)
	}
}
