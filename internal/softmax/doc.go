// Package softmax is ggml_soft_max's arithmetic in pure Go: each
// exponential computed in float64 and rounded to float32, the float32
// exponentials summed in float64, and the results scaled by the float32
// reciprocal of the sum. Attention (kv, as the twin of its assembly) and
// mixture-of-experts routing (model) both use it, so both round as
// llama.cpp does.
//
// It imports nothing of this module.
//
// Example: router probabilities in place.
//
//	softmax.InPlace(logits, 1)
package softmax
