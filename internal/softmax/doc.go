// Package softmax is ggml_soft_max's arithmetic in pure Go: each
// exponential in float32 (Expf, within 2 ulps, as ggml's own float32
// exponential is an approximation too), the float32 exponentials summed in
// float64, and the results scaled by the float32 reciprocal of the sum.
// Attention (kv, as the twin of its assembly, which computes Expf lane by
// lane to the same bits) and mixture-of-experts routing (model) both use
// it, and internal/ssm's Mamba-1 scan takes Expf for its decays.
//
// It imports nothing of this module.
//
// Example: router probabilities in place.
//
//	softmax.InPlace(logits, 1)
package softmax
