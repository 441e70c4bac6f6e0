package main

// perLayerPlan lists block l's tensors (prefix p) of a deci or openelm
// shape, sized by its own heads and width as llama.cpp's loaders ask: a
// deci block without attention has no attn_norm, one of attn_output alone
// an Embd × Embd attn_output, one without a feed-forward no ffn_norm or
// ffn_*; openelm's attention is a fused attn_qkv with per-head Q and K
// norms.
func perLayerPlan(s shape, p string, l int, add func(name string, kind tensorKind, dims ...int64)) {
	e, hd := int64(s.Embd), int64(s.headDim())
	q, kv, f := int64(s.PerLayer.Heads[l])*hd, int64(s.PerLayer.HeadsKV[l])*hd, int64(s.PerLayer.FFN[l])
	if q > 0 {
		add(p+"attn_norm.weight", kindNorm, e)
	}
	switch {
	case q == 0:
	case kv == 0:
		add(p+"attn_output.weight", kindWeight, e, e)
	case s.Arch == "openelm":
		add(p+"attn_qkv.weight", kindWeight, e, q+2*kv)
		add(p+"attn_q_norm.weight", kindNorm, hd)
		add(p+"attn_k_norm.weight", kindNorm, hd)
		add(p+"attn_output.weight", kindWeight, q, e)
	default:
		attnPlan(add, p, e, q, kv)
	}
	if f > 0 {
		add(p+"ffn_norm.weight", kindNorm, e)
		gatedFFN(add, p, "", e, f)
	}
}

// attnPlan adds attention's q, k, v and output matrices apart (prefix
// p): q query and kv key (and value) rows of width e.
func attnPlan(add func(name string, kind tensorKind, dims ...int64), p string, e, q, kv int64) {
	add(p+"attn_q.weight", kindWeight, e, q)
	add(p+"attn_k.weight", kindWeight, e, kv)
	add(p+"attn_v.weight", kindWeight, e, kv)
	add(p+"attn_output.weight", kindWeight, q, e)
}
