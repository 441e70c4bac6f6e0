// Package model holds the transformer architectures lowmem/llm runs —
// llama (Llama 2/3/3.1, Mistral, TinyLlama, SmolLM), qwen2, qwen3,
// qwen3moe (mixture of experts), gemma2, gemma3 and phi3 (Phi-3, Phi-3.5,
// Phi-4-mini), and the embedding encoders bert and nomic-bert — as one
// forward pass (the encoders' post-norm variant of it) configured entirely
// from GGUF metadata: nothing is hard-coded per model file.
//
// Each architecture is a description in a registry (Arch, Supported):
// its RoPE pairing, norms, activation, how its Q/K/V and feed-forward
// weights are laid out, and a hook for the metadata keys only it has.
// ConfigFromGGUF turns the description and the metadata into a Config,
// the loader checks and views the tensors the Config implies, and Forward
// reads only the Config and the Layers.
//
// A Model is built from a parsed GGUF file and the bytes of the mapped
// file; weight matrices are views into those bytes. A State holds one
// sequence's KV cache and scratch arena and runs tokens through the model:
//
//	m, err := model.New(f, data)
//	st, err := m.NewState(ops.NewExec(pool), model.StateOptions{Batch: 512, Cells: 4096})
//	logits := make([]float32, m.Vocab)
//	err = st.Forward(tokens, 0, logits) // logits of the last token
//
// An encoder (Config.Encoder) computes no logits: State.Hidden gives its
// last block's output, every token's, for embeddings.
//
// For weights larger than memory, Model.Source supplies the blocks during
// a pass instead of Blocks: DiskSource serves some blocks from the
// mapping and the rest from a SlotReader (mem.RangeReader) that reads them
// from disk ahead of use into reused buffers. The experts of a
// mixture-of-experts block are separate byte ranges of the file
// (Layer.Experts[e].Ranges), and Model.ExpertSource can supply them one by
// one, for an expert cache.
//
// Quantized weights are multiplied with activations quantized to the
// weight type's VecDotType, and every operation follows llama.cpp's order
// and rounding, so that logits agree with llama.cpp's on the same file.
package model
