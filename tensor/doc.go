// Package tensor holds the one data structure the model code passes around:
// a typed, shaped run of bytes, either owned or borrowed from a mapped file.
//
// Weights are borrowed views: the bytes stay in the mapped GGUF file and are
// never copied to the Go heap.
//
//	w, err := tensor.View("blk.0.attn_q.weight", quant.Q4_K, []int{4096, 4096}, fileBytes[off:off+size])
//	row := w.Row(17) // the 17th output unit's quantized weights
package tensor
