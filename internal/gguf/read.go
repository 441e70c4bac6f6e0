package gguf

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"strings"

	"github.com/lowmem/llm/quant"
)

const (
	magic            = "GGUF"
	defaultAlignment = 32
	maxDims          = 4
	// maxArrayDepth bounds nesting of arrays of arrays, so a hostile file
	// cannot drive the parser's recursion deep. Real files nest at most 2.
	maxArrayDepth = 8
	// maxAlignment keeps the data-offset arithmetic far from overflow; real
	// files use 32 (or a few KiB at most).
	maxAlignment = 1 << 30
	headerBytes  = 24 // magic, version, tensor count, kv count
	// The smallest encodings of one key/value pair (empty key, type, one
	// byte) and one tensor descriptor (empty name, n_dims, one dim, type,
	// offset). Declared counts are bounded by these before any allocation.
	minKVBytes     = 8 + 4 + 1
	minTensorBytes = 8 + 4 + 8 + 4 + 8
	bufSize        = 64 << 10
	// maxPrealloc caps how many slots are reserved from a declared count.
	// Slices grow past it only as elements are actually parsed, so memory
	// stays proportional to the bytes read even when a huge file's size
	// would allow an absurd count.
	maxPrealloc = 1 << 12
)

// ReadFile is Read on the file at path: it reads the header and closes
// the file. An error from Read is returned prefixed with the path.
func ReadFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	f, err := Read(fh, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Read parses the header of a GGUF file of size bytes: version, metadata
// and tensor descriptors. It does not read tensor data. size must be the
// true size of the file; every count, length, shape, type and offset is
// checked against it before it is trusted. Any problem with the file yields
// an error wrapping ErrBadFile that names the key or tensor at fault; an
// error from r itself is returned wrapped as is.
//
// Tensors whose data regions overlap are refused, as ggml refuses them.
// Tensors of types ggml defines but package quant cannot compute with (such
// as TQ1_0) are accepted here; callers check TensorInfo.Type.Supported.
func Read(r io.ReaderAt, size int64) (*File, error) {
	if size < 0 {
		return nil, fmt.Errorf("gguf: negative file size %d: %w", size, ErrBadFile)
	}
	d := &decoder{r: r, size: size}
	if size < headerBytes {
		return nil, fmt.Errorf("gguf: file is %d bytes, shorter than a GGUF header (%d): %w", size, headerBytes, ErrBadFile)
	}
	h, err := d.next(headerBytes)
	if err != nil {
		return nil, wrap("header", err)
	}
	if string(h[:4]) != magic {
		return nil, fmt.Errorf("gguf: bad magic %q, want %q: %w", h[:4], magic, ErrBadFile)
	}
	f := &File{Size: size, Alignment: defaultAlignment}
	f.Version = binary.LittleEndian.Uint32(h[4:])
	switch v := f.Version; {
	case v == 2 || v == 3:
	case v == 1:
		return nil, fmt.Errorf("gguf: version 1 is not supported (it predates 64-bit counts; reconvert the model with a current llama.cpp): %w", ErrBadFile)
	case bits.ReverseBytes32(v) == 2 || bits.ReverseBytes32(v) == 3:
		return nil, fmt.Errorf("gguf: big-endian GGUF files are not supported: %w", ErrBadFile)
	default:
		return nil, fmt.Errorf("gguf: unsupported version %d (want 2 or 3): %w", v, ErrBadFile)
	}
	nTensors := binary.LittleEndian.Uint64(h[8:])
	nKV := binary.LittleEndian.Uint64(h[16:])
	left := uint64(size - headerBytes)
	if nKV > left/minKVBytes {
		return nil, fmt.Errorf("gguf: header declares %d metadata keys, more than the %d bytes after the header can hold: %w", nKV, left, ErrBadFile)
	}
	if nTensors > left/minTensorBytes || nKV*minKVBytes+nTensors*minTensorBytes > left {
		return nil, fmt.Errorf("gguf: header declares %d tensors and %d metadata keys, more than the %d bytes after the header can hold: %w", nTensors, nKV, left, ErrBadFile)
	}

	f.KV = make([]KV, 0, min(nKV, maxPrealloc))
	f.kvIndex = make(map[string]int, min(nKV, maxPrealloc))
	for i := range nKV {
		key, err := d.newName(f.kvIndex, i, "metadata key %d", "key", "key")
		if err != nil {
			return nil, err
		}
		b, err := d.next(4)
		if err != nil {
			return nil, wrap(fmt.Sprintf("key %q", key), err)
		}
		v, err := d.value(valueType(binary.LittleEndian.Uint32(b)), 0)
		if err != nil {
			return nil, wrap(fmt.Sprintf("key %q", key), err)
		}
		f.kvIndex[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: v})
	}
	if v, ok := f.Get("general.alignment"); ok {
		a, ok := toInt[uint64](v)
		if !ok {
			return nil, fmt.Errorf("gguf: key \"general.alignment\": want an unsigned integer, have %T: %w", v, ErrBadFile)
		}
		if a == 0 || a&(a-1) != 0 || a > maxAlignment {
			return nil, fmt.Errorf("gguf: key \"general.alignment\": %d is not a power of two between 1 and %d: %w", a, maxAlignment, ErrBadFile)
		}
		f.Alignment = int64(a)
	}

	f.Tensors = make([]TensorInfo, 0, min(nTensors, maxPrealloc))
	f.tensorIndex = make(map[string]int, min(nTensors, maxPrealloc))
	rel := make([]uint64, 0, min(nTensors, maxPrealloc)) // offsets relative to the data section
	for i := range nTensors {
		name, err := d.newName(f.tensorIndex, i, "tensor %d name", "tensor", "tensor name")
		if err != nil {
			return nil, err
		}
		t, off, err := d.tensorInfo(name)
		if err != nil {
			return nil, wrap(fmt.Sprintf("tensor %q", name), err)
		}
		f.tensorIndex[name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
		rel = append(rel, off)
	}

	f.DataOffset = (d.pos + f.Alignment - 1) / f.Alignment * f.Alignment
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if rel[i]%uint64(f.Alignment) != 0 {
			return nil, fmt.Errorf("gguf: tensor %q: offset %d is not a multiple of the alignment %d: %w", t.Name, rel[i], f.Alignment, ErrBadFile)
		}
		if rel[i] > uint64(size) {
			return nil, fmt.Errorf("gguf: tensor %q: offset %d past end of file (%d bytes): %w", t.Name, rel[i], size, ErrBadFile)
		}
		if t.Size > size {
			return nil, fmt.Errorf("gguf: tensor %q: %d bytes of data, more than the whole file (%d bytes): %w", t.Name, t.Size, size, ErrBadFile)
		}
		if start := f.DataOffset + int64(rel[i]); start > size-t.Size {
			return nil, fmt.Errorf("gguf: tensor %q: data [%d, %d) past end of file (%d bytes): %w",
				t.Name, start, start+t.Size, size, ErrBadFile)
		}
		t.Offset = f.DataOffset + int64(rel[i])
	}
	if err := checkOverlap(f.Tensors); err != nil {
		return nil, err
	}
	return f, nil
}

// checkOverlap refuses tensors whose data regions share bytes, which
// ggml's reader refuses too (it wants each tensor to start where the one
// before it ends, padded to the alignment). An empty tensor holds no
// bytes, but ggml still wants it where the tensors before it end, so one
// placed strictly inside another's data is refused as well; at either
// end of it, it is not. With the regions sorted by start (an empty one
// before a tensor starting where it does), any overlap shows against the
// tensor reaching furthest so far.
func checkOverlap(ts []TensorInfo) error {
	if len(ts) < 2 {
		return nil
	}
	order := make([]int32, len(ts))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(ts[a].Offset, ts[b].Offset), cmp.Compare(min(ts[a].Size, 1), min(ts[b].Size, 1)), cmp.Compare(a, b))
	})
	for k, far := 1, order[0]; k < len(order); k++ {
		p, t := &ts[far], &ts[order[k]]
		if t.Offset < p.Offset+p.Size {
			return fmt.Errorf("gguf: tensor %q: data [%d, %d) overlaps tensor %q at [%d, %d): %w",
				t.Name, t.Offset, t.Offset+t.Size, p.Name, p.Offset, p.Offset+p.Size, ErrBadFile)
		}
		if t.Offset+t.Size >= p.Offset+p.Size {
			far = order[k]
		}
	}
	return nil
}

// tensorInfo reads the rest of a tensor descriptor after its name and
// validates the shape and type. It returns the offset relative to the data
// section, which is checked once that section's start is known.
func (d *decoder) tensorInfo(name string) (TensorInfo, uint64, error) {
	t := TensorInfo{Name: name}
	b, err := d.next(4)
	if err != nil {
		return t, 0, err
	}
	nd := binary.LittleEndian.Uint32(b)
	if nd < 1 || nd > maxDims {
		return t, 0, fmt.Errorf("%d dimensions, want 1 to %d", nd, maxDims)
	}
	if b, err = d.next(8*int64(nd) + 4 + 8); err != nil {
		return t, 0, err
	}
	t.Dims = make([]int64, nd)
	empty := false
	for j := range t.Dims {
		v := binary.LittleEndian.Uint64(b[8*j:])
		if v > math.MaxInt64 {
			return t, 0, fmt.Errorf("dimension %d is %d, want 0 to 2^63-1", j, v)
		}
		t.Dims[j] = int64(v)
		empty = empty || v == 0
	}
	// A dimension of 0 makes a tensor of no elements and no bytes, which
	// ggml's reader takes (Ollama's converter writes Phi-3's absent rope
	// factors so); its other dimensions then multiply to nothing, so only
	// a tensor with elements can overflow.
	elems := int64(0)
	if !empty {
		elems = 1
		for _, n := range t.Dims {
			if elems > math.MaxInt64/n {
				return t, 0, fmt.Errorf("dimensions %v: element count overflows", dimsOf(b, int(nd)))
			}
			elems *= n
		}
	}
	b = b[8*nd:]
	t.Type = quant.Type(binary.LittleEndian.Uint32(b))
	if !t.Type.Known() {
		return t, 0, fmt.Errorf("unknown tensor type id %d", uint32(t.Type))
	}
	if be := int64(t.Type.BlockElems()); t.Dims[0]%be != 0 {
		return t, 0, fmt.Errorf("row of %d elements is not a multiple of the %v block size %d", t.Dims[0], t.Type, be)
	}
	rowBytes, err := t.Type.RowBytes(t.Dims[0])
	if err != nil {
		return t, 0, err
	}
	if elems > 0 {
		rows := elems / t.Dims[0]
		if rowBytes > math.MaxInt64/rows {
			return t, 0, fmt.Errorf("%v tensor of dimensions %v: byte size overflows", t.Type, t.Dims)
		}
		t.Size = rowBytes * rows
	}
	return t, binary.LittleEndian.Uint64(b[4:]), nil
}

func dimsOf(b []byte, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out
}

// ioError marks a failure of the underlying reader, which is not the file's
// fault and so is not reported as ErrBadFile.
type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }

// newName reads the name of the i'th metadata key or tensor, which index
// (names to positions) must not hold yet. A read error says where with
// at (a format taking i); a duplicate is "gguf: <kind> "name": duplicate
// <what>".
func (d *decoder) newName(index map[string]int, i uint64, at, kind, what string) (string, error) {
	name, err := d.str()
	if err != nil {
		return "", wrap(fmt.Sprintf(at, i), err)
	}
	if _, dup := index[name]; dup {
		return "", fmt.Errorf("gguf: %s %q: duplicate %s: %w", kind, name, what, ErrBadFile)
	}
	return name, nil
}

// wrap adds context to a decoding error and marks it as ErrBadFile unless
// the reader itself failed.
func wrap(ctx string, err error) error {
	if ioe, ok := err.(*ioError); ok {
		return fmt.Errorf("gguf: %s: %w", ctx, ioe.err)
	}
	return fmt.Errorf("gguf: %s: %v: %w", ctx, err, ErrBadFile)
}

// decoder reads sequentially through a window buffered from an io.ReaderAt,
// so the many small fields of a header cost one ReadAt per bufSize bytes.
type decoder struct {
	r      io.ReaderAt
	size   int64
	pos    int64 // absolute offset of the next byte
	buf    []byte
	bufOff int64 // absolute offset of buf[0]
}

// next returns the next n bytes, valid until the following call, after
// checking that the file holds them.
func (d *decoder) next(n int64) ([]byte, error) {
	if n > d.size-d.pos {
		return nil, fmt.Errorf("%d bytes at offset %d run past the end of the file (%d bytes)", n, d.pos, d.size)
	}
	start := d.pos - d.bufOff
	if start < 0 || start+n > int64(len(d.buf)) {
		if err := d.fill(n); err != nil {
			return nil, err
		}
		start = 0
	}
	d.pos += n
	return d.buf[start : start+n], nil
}

func (d *decoder) fill(n int64) error {
	want := min(max(n, bufSize), d.size-d.pos)
	if int64(cap(d.buf)) < want {
		d.buf = make([]byte, want)
	}
	d.buf = d.buf[:want]
	d.bufOff = d.pos
	k, err := d.r.ReadAt(d.buf, d.pos)
	if int64(k) == want {
		return nil
	}
	d.buf = d.buf[:0]
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("file ends at offset %d, before the %d bytes its size claims", d.pos+int64(k), d.size)
	}
	return &ioError{fmt.Errorf("reading %d bytes at offset %d: %w", want, d.pos, err)}
}

func (d *decoder) str() (string, error) {
	b, err := d.next(8)
	if err != nil {
		return "", err
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(d.size-d.pos) {
		return "", fmt.Errorf("string of %d bytes at offset %d runs past the end of the file (%d bytes)", n, d.pos-8, d.size)
	}
	if n <= bufSize {
		if b, err = d.next(int64(n)); err != nil {
			return "", err
		}
		return string(b), nil
	}
	// A long string is copied a buffer at a time, so memory follows the
	// bytes actually present rather than the declared length.
	var sb strings.Builder
	for left := int64(n); left > 0; {
		k := min(left, bufSize)
		if b, err = d.next(k); err != nil {
			return "", err
		}
		sb.Write(b)
		left -= k
	}
	return sb.String(), nil
}

// value reads one value of type t; depth counts enclosing arrays.
func (d *decoder) value(t valueType, depth int) (any, error) {
	if t == typeString {
		return d.str()
	}
	if t == typeArray {
		return d.array(depth + 1)
	}
	m := t.minBytes()
	if m == 0 {
		return nil, fmt.Errorf("unknown value type %d", uint32(t))
	}
	b, err := d.next(m)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	switch t {
	case typeUint8:
		return b[0], nil
	case typeInt8:
		return int8(b[0]), nil
	case typeBool:
		return b[0] != 0, nil
	case typeUint16:
		return le.Uint16(b), nil
	case typeInt16:
		return int16(le.Uint16(b)), nil
	case typeUint32:
		return le.Uint32(b), nil
	case typeInt32:
		return int32(le.Uint32(b)), nil
	case typeFloat32:
		return math.Float32frombits(le.Uint32(b)), nil
	case typeUint64:
		return le.Uint64(b), nil
	case typeInt64:
		return int64(le.Uint64(b)), nil
	default: // typeFloat64
		return math.Float64frombits(le.Uint64(b)), nil
	}
}

// array reads an array header and its elements into a typed slice. depth
// is this array's nesting level, 1 for an array that is a key's value.
func (d *decoder) array(depth int) (any, error) {
	if depth > maxArrayDepth {
		return nil, fmt.Errorf("arrays nested more than %d deep", maxArrayDepth)
	}
	b, err := d.next(12)
	if err != nil {
		return nil, err
	}
	et := valueType(binary.LittleEndian.Uint32(b))
	count := binary.LittleEndian.Uint64(b[4:])
	m := et.minBytes()
	if m == 0 {
		return nil, fmt.Errorf("array of unknown value type %d", uint32(et))
	}
	if count > uint64((d.size-d.pos)/m) || count > math.MaxInt {
		return nil, fmt.Errorf("array of %d %v values at offset %d cannot fit in the %d bytes left in the file", count, et, d.pos-12, d.size-d.pos)
	}
	n := int(count)
	if read, ok := arrayReaders[et]; ok {
		return read(d, n, m)
	}
	switch et {
	case typeString:
		out := make([]string, 0, min(n, maxPrealloc))
		for i := range n {
			s, err := d.str()
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out = append(out, s)
		}
		return out, nil
	default: // typeArray
		out := make([]any, 0, min(n, maxPrealloc))
		for i := range n {
			a, err := d.array(depth + 1)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out = append(out, a)
		}
		return out, nil
	}
}

// arrayReaders read arrays of the fixed-size value types, each element
// decoded from its minBytes bytes.
var arrayReaders = map[valueType]func(d *decoder, n int, size int64) (any, error){
	typeUint8:   arrayReader(func(b []byte) uint8 { return b[0] }),
	typeInt8:    arrayReader(func(b []byte) int8 { return int8(b[0]) }),
	typeBool:    arrayReader(func(b []byte) bool { return b[0] != 0 }),
	typeUint16:  arrayReader(binary.LittleEndian.Uint16),
	typeInt16:   arrayReader(func(b []byte) int16 { return int16(binary.LittleEndian.Uint16(b)) }),
	typeUint32:  arrayReader(binary.LittleEndian.Uint32),
	typeInt32:   arrayReader(func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) }),
	typeFloat32: arrayReader(func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }),
	typeUint64:  arrayReader(binary.LittleEndian.Uint64),
	typeInt64:   arrayReader(func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) }),
	typeFloat64: arrayReader(func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }),
}

// arrayReader is readArray for decode's element type.
func arrayReader[T any](decode func([]byte) T) func(*decoder, int, int64) (any, error) {
	return func(d *decoder, n int, size int64) (any, error) { return readArray(d, n, size, decode) }
}

// readArray decodes n fixed-size elements a buffer-full at a time, with no
// per-element boxing. The slice grows as chunks arrive, so a declared
// length the file does not back costs no memory.
func readArray[T any](d *decoder, n int, size int64, decode func([]byte) T) ([]T, error) {
	out := make([]T, 0, min(n, maxPrealloc))
	per := int(bufSize / size)
	for i := 0; i < n; i += per {
		k := min(per, n-i)
		b, err := d.next(int64(k) * size)
		if err != nil {
			return nil, err
		}
		out = slices.Grow(out, k)
		for j := range k {
			out = append(out, decode(b[int64(j)*size:]))
		}
	}
	return out, nil
}
