// Package snapshot is the format of a saved session (llm.Session.Save and
// Restore): a versioned, checksummed stream of the model's identity, the
// KV type, the tokens, the logits after the last one, the KV cache rows
// in use and the recurrent state of a model with short-convolution layers
// (lfm2) or Mamba-2 layers (granitehybrid) with its checkpoints. Identify fingerprints a model file so that a snapshot is only
// restored into the model that wrote it.
//
//	id, err := snapshot.Identify(m, fileBytes)
//	err = snapshot.Write(w, id, kv.F16, tokens, logits, cache, state.Conv())
//	tokens, logits, cache, conv, err := snapshot.Read(r, snapshot.Expect{Model: id, KVType: kv.F16, MaxTokens: 4096},
//		func(n int) (*kv.Cache, error) { return kv.New(cfg) }) // an empty cache for n tokens
//
// Errors wrap ErrBadState (llm.ErrBadState): a stream that is not a
// snapshot, is damaged or truncated, or belongs to another model or KV
// type. Read reads exactly what Write wrote, so snapshots can follow each
// other in one stream.
package snapshot
