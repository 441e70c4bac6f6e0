// Package sampler picks the next token from a logits vector the way
// llama.cpp's default sampler chain does, reproducibly under a seed.
//
// The chain, in order:
//
//  1. penalties: for every token in the last PenaltyLastN history entries,
//     the repeat penalty divides a positive logit and multiplies a
//     non-positive one, then count*FrequencyPenalty + PresencePenalty is
//     subtracted;
//  2. top-k: keep the TopK highest logits;
//  3. top-p: keep the smallest most-likely set with probability >= TopP;
//  4. min-p: keep tokens with probability >= MinP times the best one's;
//  5. temperature: divide the logits by Temperature;
//  6. draw from the softmax with the Sampler's own PCG generator.
//
// Temperature 0 is greedy: the highest penalized logit, ties to the lowest
// token id. The filters cannot change that choice, so they are skipped.
//
// # Cost
//
// Sample allocates nothing. Penalties cost O(PenaltyLastN). Top-k is a
// bounded heap over the logits, O(n + k log k) in practice, so the common
// top-k 40 setting never sorts the vocabulary. Without top-k, min-p is a
// linear cut, and top-p sorts the best candidates in chunks of 64, 256,
// 1024, ... until their mass reaches TopP, so only about as many tokens as
// survive get sorted. One exp per vocabulary entry (top-p's normalizer,
// on the order of a millisecond at 128K tokens) is paid only when top-k is
// off and top-p is on; with top-k on, exps are computed for the k
// survivors only.
//
// Ties are broken by the lower token id everywhere, so the surviving set
// does not depend on the sort algorithm. The random draws use math/rand/v2's
// PCG, not llama.cpp's mt19937, so sampled (non-greedy) output matches
// llama.cpp in distribution, not token for token.
//
// # Example
//
//	s, err := sampler.New(sampler.DefaultConfig(42), vocabSize)
//	if err != nil {
//		return err
//	}
//	for !done {
//		logits := model.Forward(tok)      // []float32, one per token id
//		tok = s.Sample(logits, history)   // may modify logits
//		history = append(history, tok)
//	}
package sampler
