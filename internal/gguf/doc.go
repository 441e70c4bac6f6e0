// Package gguf reads and writes GGUF files, the container llama.cpp uses
// for model weights and their metadata.
//
// Read parses the header, the metadata key/value pairs and the tensor
// descriptors, and validates all of them against the size of the file
// before it allocates anything, so a truncated or hostile file yields an
// error wrapping ErrBadFile instead of a panic or a huge allocation. It does
// not read tensor data: TensorInfo gives the absolute offset and byte size of
// each tensor so the caller can map or read it.
//
// Versions 2 and 3 (little-endian) are accepted. Metadata values keep their
// GGUF types as Go types: uint8 … int64, float32, float64, bool and string;
// arrays become typed slices ([]uint8 … []string), and arrays of arrays
// become []any holding typed slices.
//
// Writer produces GGUF v3 files. Tensor data may be given as bytes or as a
// function that writes it, so files larger than memory can be generated.
//
// Example:
//
//	f, err := os.Open("model.gguf")
//	if err != nil { … }
//	st, _ := f.Stat()
//	g, err := gguf.Read(f, st.Size())
//	if err != nil { … } // errors.Is(err, gguf.ErrBadFile) for malformed files
//	layers, _ := g.Uint(g.Arch() + ".block_count")
//	emb, _ := g.Tensor("token_embd.weight")
//	fmt.Println(layers, emb.Type, emb.Dims, emb.Offset, emb.Size)
package gguf
