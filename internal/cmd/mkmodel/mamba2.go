package main

// mixersOnly reports whether s is a model without attention whose every
// block is attn_norm and a Mamba mixer (mamba: Mamba-1; mamba2: Mamba-2
// of SSM's sizes): the converter writes attention.head_count and
// feed_forward_length 0, no RoPE key, and no feed-forward tensors.
func (s shape) mixersOnly() bool { return s.Arch == "mamba" || s.Arch == "mamba2" }
