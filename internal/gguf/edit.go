package gguf

// Edits of a parsed header, for readers that meet the same model under
// another converter's names (model translates Ollama's dialects into
// llama.cpp's before anything reads them). They change the File only,
// never the file: tensor offsets and data stay where they are.

// Set gives key the value v, replacing its value or appending the pair.
func (f *File) Set(key string, v any) {
	if i, ok := f.kvAt(key); ok {
		f.KV[i].Value = v
		return
	}
	if f.kvIndex != nil {
		f.kvIndex[key] = len(f.KV)
	}
	f.KV = append(f.KV, KV{Key: key, Value: v})
}

// RenameKey renames the metadata key from to to. It reports false, and
// changes nothing, when from is missing or to is taken.
func (f *File) RenameKey(from, to string) bool {
	return rename(f.KV, f.kvIndex, kvKey, from, to)
}

// RenameTensor renames the tensor from to to. It reports false, and
// changes nothing, when from is missing or to is taken.
func (f *File) RenameTensor(from, to string) bool {
	return rename(f.Tensors, f.tensorIndex, tensorName, from, to)
}

func (f *File) kvAt(key string) (int, bool) { return find(f.KV, f.kvIndex, kvKey, key) }

func (f *File) tensorAt(name string) (int, bool) {
	return find(f.Tensors, f.tensorIndex, tensorName, name)
}

func kvKey(kv *KV) *string             { return &kv.Key }
func tensorName(t *TensorInfo) *string { return &t.Name }

// find is the position of the item named name in items: from index, the
// one Read builds, or by a search when the File was built by hand.
func find[T any](items []T, index map[string]int, nameOf func(*T) *string, name string) (int, bool) {
	if index != nil {
		i, ok := index[name]
		return i, ok
	}
	for i := range items {
		if *nameOf(&items[i]) == name {
			return i, true
		}
	}
	return 0, false
}

// rename renames the item from to to in items and index, unless from is
// missing or to is taken.
func rename[T any](items []T, index map[string]int, nameOf func(*T) *string, from, to string) bool {
	i, ok := find(items, index, nameOf, from)
	if _, taken := find(items, index, nameOf, to); !ok || taken {
		return false
	}
	*nameOf(&items[i]) = to
	if index != nil {
		delete(index, from)
		index[to] = i
	}
	return true
}
