package llm

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sync"

	"github.com/lowmem/llm/internal/gguf"
)

// ErrBadState: Restore was given a stream that is not a saved session, is
// damaged or truncated, or was saved by another model or with another KV
// type.
var ErrBadState = errors.New("llm: bad saved session")

// The saved-session format, little-endian throughout:
//
//	magic        8 bytes "LOWMEMSS"
//	version      uint32 (2: the KV rows in kv's KVC2 order, and KVInt4)
//	model        uint16 length + architecture name; uint32 layers, embedding,
//	             heads, KV heads, key and value head sizes, vocabulary, rope
//	             dimensions, sliding window; 32-byte SHA-256 of the GGUF
//	             header and of the first 256 bytes of every tensor
//	kv type      uint8 (KVF16 0, KVInt8 1, KVInt4 2)
//	tokens       uint32 count, then int32 ids
//	logits       vocabulary × float32: the logits after the last token
//	kv cache     what kv.Cache.WriteTo writes: the stored rows only
//	checksum     uint32 CRC-32C (Castagnoli) of every byte before it
const (
	stateMagic   = "LOWMEMSS"
	stateVersion = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// modelFingerprint identifies a model file in saved sessions; it is
// computed on first use.
type modelFingerprint struct {
	once sync.Once
	sum  [32]byte
	err  error
}

// fingerprint hashes the GGUF header (metadata and tensor table) and a
// sample of every tensor's data, so that two files with the same shape but
// other weights differ.
func (m *Model) fingerprint() ([32]byte, error) {
	m.fp.once.Do(func() {
		data := m.mapping.Bytes()
		f, err := gguf.Read(m.mapping.ReaderAt(), int64(len(data)))
		if err != nil {
			m.fp.err = fmt.Errorf("llm: fingerprinting the model: %w", err)
			return
		}
		h := sha256.New()
		h.Write(data[:f.DataOffset])
		for _, t := range f.Tensors {
			h.Write(data[t.Offset : t.Offset+min(t.Size, 256)])
		}
		h.Sum(m.fp.sum[:0])
	})
	return m.fp.sum, m.fp.err
}

// stateShape is the model description a saved session carries.
type stateShape struct {
	arch string
	dims [9]uint32
	sum  [32]byte
}

func (m *Model) stateShape() (stateShape, error) {
	sum, err := m.fingerprint()
	c := &m.m.Config
	return stateShape{arch: c.Arch, sum: sum, dims: [9]uint32{uint32(c.Layers), uint32(c.Embd), uint32(c.Heads),
		uint32(c.HeadsKV), uint32(c.HeadDimK), uint32(c.HeadDimV), uint32(m.m.Vocab), uint32(c.RopeDim), uint32(c.Window)}}, err
}

func (sh stateShape) String() string {
	d := sh.dims
	return fmt.Sprintf("%s (%d layers, embedding %d, %d heads, %d KV heads, head size %d/%d, vocabulary %d, rope %d, window %d)",
		sh.arch, d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8])
}

// Logits returns the logits after the session's last token, as the last
// Eval returned them or Restore brought them back; zeros before any. The
// slice is owned by the session and overwritten by the next Eval.
func (s *Session) Logits() []float32 { return s.logits }

// Save writes the session's state to w: its tokens, the logits after the
// last one and the KV cache rows in use (not empty capacity), in a
// versioned binary format with the model's fingerprint and a checksum.
// Restore on a session of the same model file and KV type continues
// exactly where this one stands.
func (s *Session) Save(w io.Writer) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.m.release()
	sh, err := s.m.stateShape()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	crc := crc32.New(castagnoli)
	out := io.MultiWriter(bw, crc)

	le := binary.LittleEndian
	b := make([]byte, 0, 128+4*(len(s.history)+len(s.logits)))
	b = append(b, stateMagic...)
	b = le.AppendUint32(b, stateVersion)
	b = le.AppendUint16(b, uint16(len(sh.arch)))
	b = append(b, sh.arch...)
	for _, d := range sh.dims {
		b = le.AppendUint32(b, d)
	}
	b = append(b, sh.sum[:]...)
	b = append(b, byte(s.set.kvType))
	b = le.AppendUint32(b, uint32(len(s.history)))
	for _, t := range s.history {
		b = le.AppendUint32(b, uint32(t))
	}
	for _, x := range s.logits {
		b = le.AppendUint32(b, math.Float32bits(x))
	}
	if _, err := out.Write(b); err != nil {
		return fmt.Errorf("llm: save: %w", err)
	}
	if _, err := s.st.Cache().WriteTo(out); err != nil {
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

// Restore replaces the session's state with one written by Save: tokens,
// logits (see Logits) and KV cache, so that generation continues exactly
// as it would have in the saved session. It reads exactly what Save wrote.
//
// The state must come from the same model file (its fingerprint is
// checked) and the same KV type, and fit the session's context. Errors
// wrap ErrBadState (another model or KV type, a damaged or truncated
// stream; with ErrContextFull too when it holds more tokens than the
// context) or ErrOutOfMemoryBudget; after an error the session is unchanged. Restore
// builds the new cache before dropping the old one, so it briefly needs
// memory for both.
func (s *Session) Restore(r io.Reader) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.m.release()
	want, err := s.m.stateShape()
	if err != nil {
		return err
	}
	crc := crc32.New(castagnoli)
	br := bufio.NewReaderSize(r, 64<<10)
	sr := &stateInput{r: io.TeeReader(br, crc)}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("llm: restore: "+format+": %w", append(args, ErrBadState)...)
	}

	if magic := string(sr.bytes(len(stateMagic))); sr.err == nil && magic != stateMagic {
		return bad("not a saved session (starts with %q)", magic)
	}
	if v := sr.u32(); sr.err == nil && v != stateVersion {
		return bad("format version %d, this library reads version %d", v, stateVersion)
	}
	var got stateShape
	got.arch = string(sr.bytes(int(sr.u16())))
	for i := range got.dims {
		got.dims[i] = sr.u32()
	}
	copy(got.sum[:], sr.bytes(32))
	if sr.err != nil {
		return sr.fail()
	}
	if got.arch != want.arch || got.dims != want.dims {
		return bad("saved by a %v model, this session's model is %v", got, want)
	}
	if got.sum != want.sum {
		return bad("saved by another model file of the same shape (fingerprint %x, this model %x)", got.sum[:6], want.sum[:6])
	}
	if t := KVType(sr.u8()); sr.err == nil && t != s.set.kvType {
		return bad("saved with a %v KV cache, this session's is %v", t, s.set.kvType)
	}
	n := int(sr.u32())
	if sr.err != nil {
		return sr.fail()
	}
	if n > s.set.context {
		return fmt.Errorf("llm: restore: the saved session holds %d tokens, more than this session's context of %d (or the stream is damaged): %w: %w",
			n, s.set.context, ErrContextFull, ErrBadState)
	}
	vocab := s.m.m.Vocab
	raw := sr.bytes(4 * n)
	if sr.err != nil {
		return sr.fail()
	}
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		if toks[i] < 0 || int(toks[i]) >= vocab {
			return bad("token %d at %d is not in the vocabulary of %d", toks[i], i, vocab)
		}
	}
	raw = sr.bytes(4 * vocab)
	if sr.err != nil {
		return sr.fail()
	}
	logits := make([]float32, vocab)
	for i := range logits {
		logits[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}

	cells := s.set.context
	if !s.set.kvPrealloc {
		cells = kvNextCells(kvInitialCells(s.set), n, s.set.context, kvStepCells(&s.m.m.Config, s.set.kvType, kvStepBytes))
	}
	nb := kvBytes(&s.m.m.Config, s.set.kvType, cells)
	if !s.m.kvReserve(nb, false) {
		return fmt.Errorf("llm: restore: a KV cache of %d cells (%s) does not fit the memory budget beside the current one: %w",
			cells, fmtBytes(nb), ErrOutOfMemoryBudget)
	}
	ok := false
	defer func() {
		if !ok {
			s.m.kvRelease(nb)
		}
	}()
	c, err := s.st.NewCache(cells)
	if err != nil {
		return fmt.Errorf("llm: restore: %w", err)
	}
	if s.set.kvPrealloc {
		c.Touch()
	}
	if _, err := c.ReadFrom(sr.r); err != nil {
		return fmt.Errorf("llm: restore: %w: %w", err, ErrBadState)
	}
	if c.Len() != n {
		return bad("the KV cache holds %d positions for %d tokens", c.Len(), n)
	}
	sum := crc.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(br, tail[:]); err != nil {
		return bad("checksum missing: %v", err)
	}
	if stored := binary.LittleEndian.Uint32(tail[:]); stored != sum {
		return bad("checksum %08x, the data sums to %08x: the stream is damaged", stored, sum)
	}
	if err := s.st.SetCache(c); err != nil {
		return fmt.Errorf("llm: restore: %w", err)
	}
	ok = true
	s.m.kvRelease(s.kv.bytes)
	s.kv.bytes = nb
	s.history = append(s.history[:0], toks...)
	copy(s.logits, logits)
	return nil
}

// stateInput decodes little-endian values and remembers the first error.
type stateInput struct {
	r   io.Reader
	err error
}

func (s *stateInput) bytes(n int) []byte {
	b := make([]byte, n)
	if s.err == nil {
		_, s.err = io.ReadFull(s.r, b)
	}
	return b
}

func (s *stateInput) u8() uint8   { return s.bytes(1)[0] }
func (s *stateInput) u16() uint16 { return binary.LittleEndian.Uint16(s.bytes(2)) }
func (s *stateInput) u32() uint32 { return binary.LittleEndian.Uint32(s.bytes(4)) }

// fail reports the input's error: a stream that ends early as truncated.
func (s *stateInput) fail() error {
	if errors.Is(s.err, io.EOF) || errors.Is(s.err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("llm: restore: the stream ends early (truncated): %w: %w", io.ErrUnexpectedEOF, ErrBadState)
	}
	return fmt.Errorf("llm: restore: %w: %w", s.err, ErrBadState)
}
