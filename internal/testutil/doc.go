// Package testutil builds small synthetic GGUF models and vocabularies for
// tests and examples, laid out exactly as llama.cpp's converters lay out
// real ones: the same metadata keys, tensor names, ggml dimension order and
// an SPM-style tokenizer.
//
// Weights are seeded random numbers (math/rand/v2 PCG), so the same
// ModelSpec always gives the same bytes, and each tensor depends only on
// the seed and its name: a Q8_0 model and an F32 model with the same seed
// hold the same weights up to quantization. Tensors are generated row by
// row while the file is written, so a spec of any size needs little memory.
//
// Each Tiny constructor is one architecture (or variant) made small;
// TinySpecs lists them all, once, for the tests that mean "every
// architecture" (TinyDecoders and TinyRecurrent for those that mean every
// decoder, or every model with a recurrent state): a new architecture joins
// those tests by being added to its group there.
//
// Example: a tiny llama model in memory, read back with package gguf.
//
//	b, err := testutil.ModelBytes(testutil.TinyLlama())
//	if err != nil { … }
//	f, err := gguf.Read(bytes.NewReader(b), int64(len(b)))
//	fmt.Println(f.Arch(), len(f.Tensors)) // llama 21
package testutil
