package snapshot

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/model"
)

// ErrBadState: the stream is not a saved session, is damaged or truncated,
// or was saved by another model or with another KV type. llm.ErrBadState
// is the same value.
var ErrBadState = errors.New("llm: bad saved session")

// The format, little-endian throughout:
//
//	magic        8 bytes "LOWMEMSS"
//	version      uint32 (2: the KV rows in kv's KVC2 order or later, and
//	             kv.Int4; kv's own magic says which: KVC3 adds Int4's F16 slots, KVC4 their sink count)
//	model        uint16 length + architecture name; uint32 layers, embedding,
//	             heads, KV heads, key and value head sizes, vocabulary, rope
//	             dimensions, sliding window; 32-byte SHA-256 of the GGUF
//	             header and of the first 256 bytes of every tensor
//	kv type      uint8 (kv.F16 0, kv.Int8 1, kv.Int4 2)
//	tokens       uint32 count, then int32 ids
//	logits       vocabulary × float32: the logits after the last token
//	kv cache     what kv.Cache.WriteTo writes: the stored rows only
//	conv state   (version 3) uint32 floats n of one state (0 without conv
//	             layers), uint32 checkpoints k; n float32: the state after
//	             the tokens; k × uint32 checkpoint positions, ascending;
//	             k × n float32: their states (model.ConvState)
//	checksum     uint32 CRC-32C (Castagnoli) of every byte before it
//
// Version 2 is version 3 without the conv state, written before models
// with conv layers ran; Read reads both. A Mamba-2 model's state
// (granitehybrid) is the same record, only longer: its layout did not
// change the format.
const (
	magic   = "LOWMEMSS"
	version = 3
)

// maxCheckpoints bounds a saved conv state's checkpoints before anything
// is allocated for them; the model refuses more than it keeps.
const maxCheckpoints = 1 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Model identifies the model a snapshot belongs to: its architecture and
// dimensions, and a fingerprint of its file.
type Model struct {
	Arch string
	Dims [9]uint32 // layers, embedding, heads, KV heads, head sizes K and V, vocabulary, rope dims, window
	Sum  [32]byte  // SHA-256 of the GGUF header and of the first 256 bytes of every tensor
}

// Identify describes m, whose GGUF file is file. The fingerprint hashes the
// header (metadata and tensor table) and a sample of every tensor's data,
// so that two files of the same shape but other weights differ.
func Identify(m *model.Model, file []byte) (Model, error) {
	c := &m.Config
	id := Model{Arch: c.Arch, Dims: [9]uint32{uint32(c.Layers), uint32(c.Embd), uint32(c.Heads),
		uint32(c.HeadsKV), uint32(c.HeadDimK), uint32(c.HeadDimV), uint32(m.Vocab), uint32(c.RopeDim), uint32(c.Window)}}
	r := bytes.NewReader(file)
	f, err := gguf.Read(r, int64(len(file)))
	if err == nil {
		id.Sum, err = Fingerprint(r, f)
	}
	if err != nil {
		return id, fmt.Errorf("llm: fingerprinting the model: %w", err)
	}
	return id, nil
}

// Fingerprint is the SHA-256 of a GGUF file's header (metadata and
// tensor table) and of the first 256 bytes of every tensor's data: two
// files of one shape but other weights differ. r reads the file f was
// parsed from (a model, or a LoRA adapter whose sessions' snapshots it
// marks).
func Fingerprint(r io.ReaderAt, f *gguf.File) ([32]byte, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(r, 0, min(f.DataOffset, f.Size))); err != nil {
		return [32]byte{}, err
	}
	for _, t := range f.Tensors {
		if _, err := io.Copy(h, io.NewSectionReader(r, t.Offset, min(t.Size, 256))); err != nil {
			return [32]byte{}, err
		}
	}
	return [32]byte(h.Sum(nil)), nil
}

// String describes the model's shape for error messages.
func (id Model) String() string {
	d := id.Dims
	return fmt.Sprintf("%s (%d layers, embedding %d, %d heads, %d KV heads, head size %d/%d, vocabulary %d, rope %d, window %d)",
		id.Arch, d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8])
}

// Write writes a snapshot of a session of model id: its KV type, tokens,
// the logits after the last token, the rows the cache holds and the conv
// state with its checkpoints (empty for a model without conv layers), which
// must follow all of tokens.
func Write(w io.Writer, id Model, kvt kv.Type, tokens []int32, logits []float32, c *kv.Cache, conv *model.ConvState) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	crc := crc32.New(castagnoli)
	out := io.MultiWriter(bw, crc)

	le := binary.LittleEndian
	b := make([]byte, 0, 128+4*(len(tokens)+len(logits)))
	b = append(b, magic...)
	b = le.AppendUint32(b, version)
	b = le.AppendUint16(b, uint16(len(id.Arch)))
	b = append(b, id.Arch...)
	for _, d := range id.Dims {
		b = le.AppendUint32(b, d)
	}
	b = append(b, id.Sum[:]...)
	b = append(b, byte(kvt))
	b = le.AppendUint32(b, uint32(len(tokens)))
	for _, t := range tokens {
		b = le.AppendUint32(b, uint32(t))
	}
	b = appendFloats(b, logits)
	if _, err := out.Write(b); err != nil {
		return fmt.Errorf("llm: save: %w", err)
	}
	if _, err := c.WriteTo(out); err != nil {
		return fmt.Errorf("llm: save: %w", err)
	}
	b = b[:0]
	b = le.AppendUint32(b, uint32(len(conv.Cur)))
	b = le.AppendUint32(b, uint32(len(conv.Marks)))
	b = appendFloats(b, conv.Cur)
	for _, p := range conv.Marks {
		b = le.AppendUint32(b, uint32(p))
	}
	b = appendFloats(b, conv.Saved)
	if _, err := out.Write(b); err != nil {
		return fmt.Errorf("llm: save: %w", err)
	}
	if _, err := bw.Write(le.AppendUint32(nil, crc.Sum32())); err != nil {
		return fmt.Errorf("llm: save: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("llm: save: %w", err)
	}
	return nil
}

// appendFloats appends xs to b, little-endian.
func appendFloats(b []byte, xs []float32) []byte {
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// Expect is what Read checks a snapshot against.
type Expect struct {
	Model     Model   // the model it must come from
	KVType    kv.Type // the cache type it must hold
	MaxTokens int     // the context it must fit
	// ConvFloats is the size of the model's conv state
	// (model.ConvStateFloats): 0 for a model without conv layers.
	ConvFloats int
}

// Read decodes a snapshot that Write wrote, reading exactly its bytes. Once
// the header checks out against want, newCache is asked for an empty cache
// to hold the given number of tokens, which Read fills. Errors wrap
// ErrBadState (another model or KV type, a damaged or truncated stream;
// with kv.ErrFull too when it holds more tokens than want.MaxTokens), or
// are newCache's. conv is the conv state, which follows all of tokens
// (from a version 2 stream, empty).
func Read(r io.Reader, want Expect, newCache func(tokens int) (*kv.Cache, error)) (tokens []int32, logits []float32, c *kv.Cache, conv *model.ConvState, err error) {
	crc := crc32.New(castagnoli)
	br := bufio.NewReaderSize(r, 64<<10)
	in := &input{r: io.TeeReader(br, crc)}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("llm: restore: "+format+": %w", append(args, ErrBadState)...)
	}

	if m := string(in.bytes(len(magic))); in.err == nil && m != magic {
		return nil, nil, nil, nil, bad("not a saved session (starts with %q)", m)
	}
	v := in.u32()
	if in.err == nil && v != version && v != 2 {
		return nil, nil, nil, nil, bad("format version %d, this library reads versions 2 and %d", v, version)
	}
	var got Model
	got.Arch = string(in.bytes(int(in.u16())))
	for i := range got.Dims {
		got.Dims[i] = in.u32()
	}
	copy(got.Sum[:], in.bytes(32))
	if in.err != nil {
		return nil, nil, nil, nil, in.fail()
	}
	if got.Arch != want.Model.Arch || got.Dims != want.Model.Dims {
		return nil, nil, nil, nil, bad("saved by a %v model, this session's model is %v", got, want.Model)
	}
	if got.Sum != want.Model.Sum {
		return nil, nil, nil, nil, bad("saved by another model file of the same shape (fingerprint %x, this model %x)", got.Sum[:6], want.Model.Sum[:6])
	}
	if t := kv.Type(in.u8()); in.err == nil && t != want.KVType {
		return nil, nil, nil, nil, bad("saved with a %v KV cache, this session's is %v", t, want.KVType)
	}
	n := int(in.u32())
	if in.err != nil {
		return nil, nil, nil, nil, in.fail()
	}
	if n > want.MaxTokens {
		return nil, nil, nil, nil, fmt.Errorf("llm: restore: the saved session holds %d tokens, more than this session's context of %d (or the stream is damaged): %w: %w",
			n, want.MaxTokens, kv.ErrFull, ErrBadState)
	}
	vocab := int(want.Model.Dims[6])
	raw := in.bytes(4 * n)
	if in.err != nil {
		return nil, nil, nil, nil, in.fail()
	}
	tokens = make([]int32, n)
	for i := range tokens {
		tokens[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		if tokens[i] < 0 || int(tokens[i]) >= vocab {
			return nil, nil, nil, nil, bad("token %d at %d is not in the vocabulary of %d", tokens[i], i, vocab)
		}
	}
	if logits = in.floats(vocab); in.err != nil {
		return nil, nil, nil, nil, in.fail()
	}

	if c, err = newCache(n); err != nil {
		return nil, nil, nil, nil, err
	}
	if _, err := c.ReadFrom(in.r); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("llm: restore: %w: %w", err, ErrBadState)
	}
	if c.Len() != n {
		return nil, nil, nil, nil, bad("the KV cache holds %d positions for %d tokens", c.Len(), n)
	}
	conv = &model.ConvState{At: n}
	if v >= 3 {
		if conv, err = in.conv(n, want.ConvFloats); err != nil {
			return nil, nil, nil, nil, err
		}
	} else if want.ConvFloats != 0 {
		return nil, nil, nil, nil, bad("a version %d stream has no conv state for this model's conv layers", v)
	}
	sum := crc.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(br, tail[:]); err != nil {
		return nil, nil, nil, nil, bad("checksum missing: %v", err)
	}
	if stored := binary.LittleEndian.Uint32(tail[:]); stored != sum {
		return nil, nil, nil, nil, bad("checksum %08x, the data sums to %08x: the stream is damaged", stored, sum)
	}
	return tokens, logits, c, conv, nil
}

// conv reads a version 3 stream's conv state, which must have the size
// want and follow all n tokens: its checkpoints ascend and none is past n.
func (s *input) conv(n, want int) (*model.ConvState, error) {
	size, k := int(s.u32()), int(s.u32())
	if s.err != nil {
		return nil, s.fail()
	}
	if size != want || k > maxCheckpoints || (size == 0 && k != 0) {
		return nil, fmt.Errorf("llm: restore: a conv state of %d floats with %d checkpoints, this model's is %d floats: %w", size, k, want, ErrBadState)
	}
	cs := &model.ConvState{At: n, Cur: s.floats(size), Marks: make([]int, k)}
	for i := range cs.Marks {
		cs.Marks[i] = int(s.u32())
		if s.err == nil && (cs.Marks[i] > n || (i > 0 && cs.Marks[i] <= cs.Marks[i-1])) {
			return nil, fmt.Errorf("llm: restore: conv checkpoint %d at position %d (of %d tokens): %w", i, cs.Marks[i], n, ErrBadState)
		}
	}
	cs.Saved = s.floats(k * size)
	if s.err != nil {
		return nil, s.fail()
	}
	return cs, nil
}

// floats reads n little-endian float32s.
func (s *input) floats(n int) []float32 {
	raw := s.bytes(4 * n)
	if s.err != nil {
		return nil
	}
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return xs
}

// input decodes little-endian values and remembers the first error.
type input struct {
	r   io.Reader
	err error
}

func (s *input) bytes(n int) []byte {
	b := make([]byte, n)
	if s.err == nil {
		_, s.err = io.ReadFull(s.r, b)
	}
	return b
}

func (s *input) u8() uint8   { return s.bytes(1)[0] }
func (s *input) u16() uint16 { return binary.LittleEndian.Uint16(s.bytes(2)) }
func (s *input) u32() uint32 { return binary.LittleEndian.Uint32(s.bytes(4)) }

// fail reports the input's error: a stream that ends early as truncated.
func (s *input) fail() error {
	if errors.Is(s.err, io.EOF) || errors.Is(s.err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("llm: restore: the stream ends early (truncated): %w: %w", io.ErrUnexpectedEOF, ErrBadState)
	}
	return fmt.Errorf("llm: restore: %w: %w", s.err, ErrBadState)
}
