package gguf

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/lowmem/llm/quant"
)

// TestReadHostile corrupts a valid file in one place at a time. Each copy
// must fail with ErrBadFile, an error naming the problem, and without a
// large allocation.
func TestReadHostile(t *testing.T) {
	good := sampleFile(t)
	if _, err := Read(bytes.NewReader(good), int64(len(good))); err != nil {
		t.Fatalf("sample file does not read: %v", err)
	}
	for _, tc := range hostileMutations(t) {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.mutate(bytes.Clone(good))
			err := readLimited(t, b, int64(len(b)))
			if err == nil {
				t.Fatal("Read succeeded")
			}
			if !errors.Is(err, ErrBadFile) {
				t.Errorf("error does not wrap ErrBadFile: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "gguf: ") {
				t.Errorf("error %q, want one starting \"gguf: \" and containing %q", err, tc.want)
			}
		})
	}
}

type hostileMutation struct {
	name   string
	mutate func(b []byte) []byte // of a copy of sampleFile
	want   string                // in the error text
}

// hostileMutations corrupts sampleFile in one place at a time; FuzzRead
// takes them as seeds too.
func hostileMutations(t testing.TB) []hostileMutation {
	// dims offset of a tensor descriptor (after n_dims) and its type offset.
	dimsAt := func(b []byte, name string) int { return after(t, b, name) + 4 }
	typeAt := func(b []byte, name string, nd int) int { return dimsAt(b, name) + 8*nd }
	offAt := func(b []byte, name string, nd int) int { return typeAt(b, name, nd) + 4 }

	return []hostileMutation{
		{"empty", func(b []byte) []byte { return nil }, "shorter than a GGUF header"},
		{"bad magic", func(b []byte) []byte { copy(b, "GGML"); return b }, "bad magic"},
		{"version 1", func(b []byte) []byte { put32(b, 4, 1); return b }, "version 1 is not supported"},
		{"version 99", func(b []byte) []byte { put32(b, 4, 99); return b }, "unsupported version 99"},
		{"big-endian", func(b []byte) []byte { put32(b, 4, 3<<24); return b }, "big-endian"},
		{"huge kv count", func(b []byte) []byte { put64(b, 16, 1<<62); return b }, "metadata keys"},
		{"huge tensor count", func(b []byte) []byte { put64(b, 8, 1<<62); return b }, "tensors"},
		{"max counts", func(b []byte) []byte { put64(b, 8, ^uint64(0)); put64(b, 16, ^uint64(0)); return b }, "metadata keys"},
		{"kv count one too many", func(b []byte) []byte { put64(b, 16, 9); return b }, ""},
		{"huge key length", func(b []byte) []byte { put64(b, 24, 1<<62); return b }, "string of 4611686018427387904 bytes"},
		{"huge string length", func(b []byte) []byte { put64(b, after(t, b, "general.name")+4, 1<<60); return b }, `key "general.name": string of`},
		{"string of 4 GiB", func(b []byte) []byte { put64(b, after(t, b, "general.name")+4, 4<<30); return b }, `key "general.name": string of 4294967296 bytes`},
		{"array of 2^60", func(b []byte) []byte {
			put64(b, after(t, b, "tokenizer.ggml.scores")+8, 1<<60)
			return b
		}, `key "tokenizer.ggml.scores": array of 1152921504606846976 float32 values`},
		{"huge array length", func(b []byte) []byte {
			put64(b, after(t, b, "tokenizer.ggml.tokens")+8, 1<<61)
			return b
		}, `key "tokenizer.ggml.tokens": array of 2305843009213693952 string values`},
		{"huge nested array length", func(b []byte) []byte {
			put64(b, after(t, b, "test.nested")+16+4, 1<<61) // the first inner array's count
			return b
		}, `key "test.nested": element 0: array of`},
		{"unknown value type", func(b []byte) []byte { put32(b, after(t, b, "test.a"), 13); return b }, "unknown value type 13"},
		{"unknown element type", func(b []byte) []byte { put32(b, after(t, b, "tokenizer.ggml.tokens")+4, 99); return b }, "array of unknown value type 99"},
		{"duplicate key", func(b []byte) []byte { b[after(t, b, "test.b")-1] = 'a'; return b }, `key "test.a": duplicate key`},
		{"alignment 0", func(b []byte) []byte { put32(b, after(t, b, "general.alignment")+4, 0); return b }, "0 is not a power of two"},
		{"alignment 3", func(b []byte) []byte { put32(b, after(t, b, "general.alignment")+4, 3); return b }, "3 is not a power of two"},
		{"alignment 2^31", func(b []byte) []byte { put32(b, after(t, b, "general.alignment")+4, 1<<31); return b }, "not a power of two"},
		{"alignment string", func(b []byte) []byte {
			put32(b, after(t, b, "general.alignment"), uint32(typeFloat32))
			return b
		}, "want an unsigned integer"},
		{"n_dims 5", func(b []byte) []byte { put32(b, after(t, b, "blk.0.attn_q.weight"), 5); return b }, `tensor "blk.0.attn_q.weight": 5 dimensions`},
		{"n_dims 0", func(b []byte) []byte { put32(b, after(t, b, "blk.0.attn_q.weight"), 0); return b }, "0 dimensions"},
		{"n_dims huge", func(b []byte) []byte { put32(b, after(t, b, "blk.0.attn_q.weight"), 1<<31); return b }, "dimensions, want 1 to 4"},
		{"dim above int64", func(b []byte) []byte { put64(b, dimsAt(b, "blk.0.attn_q.weight")+8, 1<<63); return b }, "dimension 1 is 9223372036854775808"},
		{"element count overflows", func(b []byte) []byte {
			put64(b, dimsAt(b, "blk.0.cube.weight")+8, 1<<40)
			put64(b, dimsAt(b, "blk.0.cube.weight")+16, 1<<40)
			return b
		}, "element count overflows"},
		{"byte size overflows", func(b []byte) []byte { put64(b, dimsAt(b, "blk.0.attn_q.weight")+8, 1<<56); return b }, "byte size overflows"},
		{"unknown type id", func(b []byte) []byte { put32(b, typeAt(b, "blk.0.attn_q.weight", 2), 99); return b }, `tensor "blk.0.attn_q.weight": unknown tensor type id 99`},
		{"removed type id 4", func(b []byte) []byte { put32(b, typeAt(b, "blk.0.attn_q.weight", 2), 4); return b }, "unknown tensor type id 4"},
		{"partial block", func(b []byte) []byte { put64(b, dimsAt(b, "token_embd.weight"), 48); return b }, "row of 48 elements is not a multiple of the Q8_0 block size 32"},
		{"misaligned offset", func(b []byte) []byte {
			at := offAt(b, "blk.0.attn_q.weight", 2)
			put64(b, at, bytesU64(b[at:])+32)
			return b
		}, `tensor "blk.0.attn_q.weight": offset`},
		{"offset past end", func(b []byte) []byte { put64(b, offAt(b, "output_norm.weight", 1), 1<<40); return b }, `tensor "output_norm.weight": offset 1099511627776 past end of file`},
		{"data past end", func(b []byte) []byte {
			put64(b, offAt(b, "output_norm.weight", 1), uint64(len(b))/64*64-64) // data starts before the end, ends after it
			return b
		}, `tensor "output_norm.weight": data [`},
		{"offset above int64", func(b []byte) []byte { put64(b, offAt(b, "output_norm.weight", 1), 1<<63); return b }, "past end of file"},
		{"size past end", func(b []byte) []byte { put64(b, dimsAt(b, "blk.0.cube.weight")+16, 1000); return b }, `tensor "blk.0.cube.weight": 48000 bytes of data, more than the whole file`},
		{"tensor data shared", func(b []byte) []byte {
			q := bytesU64(b[offAt(b, "blk.0.attn_q.weight", 2):])
			put64(b, offAt(b, "blk.0.attn_k.weight", 2), q)
			return b
		}, `tensor "blk.0.attn_k.weight": data [`},
		{"tensor data overlaps the end of another", func(b []byte) []byte {
			// attn_q is 64×8 F32 = 2048 bytes; attn_k starts 64 bytes before its end.
			q := bytesU64(b[offAt(b, "blk.0.attn_q.weight", 2):])
			put64(b, offAt(b, "blk.0.attn_k.weight", 2), q+2048-64)
			return b
		}, `overlaps tensor "blk.0.attn_q.weight"`},
		{"tensor data inside a long one", func(b []byte) []byte {
			// output_norm (256 bytes) placed inside token_embd (Q8_0 64×10 = 680 bytes).
			e := bytesU64(b[offAt(b, "token_embd.weight", 2):])
			put64(b, offAt(b, "output_norm.weight", 1), e+384)
			return b
		}, `tensor "output_norm.weight": data [`},
		{"duplicate tensor", func(b []byte) []byte {
			b[after(t, b, "blk.0.attn_k.weight")-len("k.weight")] = 'q'
			return b
		}, `tensor "blk.0.attn_q.weight": duplicate tensor name`},
		{"arrays nested 1000 deep", func([]byte) []byte {
			var body []byte
			body = append(body, rawStr("bomb")...)
			body = append(body, rawU32(uint32(typeArray))...)
			for range 1000 {
				body = append(body, rawU32(uint32(typeArray))...)
				body = append(body, rawU64(1)...)
			}
			body = append(body, rawU32(uint32(typeUint8))...)
			body = append(body, rawU64(0)...)
			return raw(3, 0, 1, body)
		}, "arrays nested more than 8 deep"},
		{"wide bomb", func([]byte) []byte { // many empty arrays: allowed sizes, but truncated
			body := append(rawStr("bomb"), rawU32(uint32(typeArray))...)
			body = append(body, rawU32(uint32(typeArray))...)
			body = append(body, rawU64(1000)...)
			for range 999 {
				body = append(body, rawU32(uint32(typeUint8))...)
				body = append(body, rawU64(0)...)
			}
			return raw(3, 0, 1, body)
		}, "array of 1000 array values at offset 40 cannot fit"},
	}
}

func bytesU64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// countingReader counts the bytes Read asks of the file.
type countingReader struct {
	r     io.ReaderAt
	bytes int64
	calls int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.bytes += int64(len(p))
	c.calls++
	return c.r.ReadAt(p, off)
}

// readLimited reads b and fails the test if Read allocated more than twice
// the file's size plus 16 KiB (the decoder's window is at most the file,
// and what it keeps is at most what it parsed), or asked the reader for
// more than twice the file's bytes: hostile counts and lengths must be
// refused before anything is sized from them, and the work Read does is
// bounded by the bytes it reads, so it cannot spin either.
func readLimited(t *testing.T, b []byte, size int64) error {
	t.Helper()
	cr := &countingReader{r: bytes.NewReader(b)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read(cr, size)
	runtime.ReadMemStats(&after)
	if d, limit := after.TotalAlloc-before.TotalAlloc, 2*uint64(len(b))+16<<10; d > limit {
		t.Errorf("Read allocated %d bytes for a %d-byte file, more than %d", d, len(b), limit)
	}
	if cr.bytes > 2*int64(len(b))+bufSize {
		t.Errorf("Read asked for %d bytes in %d calls of a %d-byte file", cr.bytes, cr.calls, len(b))
	}
	return err
}

// TestReadTruncated cuts the file at every length up to the end of the
// header and at many lengths inside the tensor data, and also lies about
// the size (the reader holds fewer bytes than size says).
func TestReadTruncated(t *testing.T) {
	good := sampleFile(t)
	f, err := Read(bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	var end int64 // end of the last tensor's data; the padding after it is optional
	for _, ti := range f.Tensors {
		end = max(end, ti.Offset+ti.Size)
	}
	var cuts []int64
	for n := int64(0); n <= f.DataOffset; n++ {
		cuts = append(cuts, n)
	}
	for n := f.DataOffset + 1; n < end; n += 13 {
		cuts = append(cuts, n)
	}
	cuts = append(cuts, end-1)
	for _, n := range cuts {
		b := good[:n]
		if _, err := Read(bytes.NewReader(b), n); err == nil || !errors.Is(err, ErrBadFile) {
			t.Fatalf("cut at %d: error %v, want ErrBadFile", n, err)
		}
		if n < f.DataOffset {
			if _, err := Read(bytes.NewReader(b), int64(len(good))); err == nil || !errors.Is(err, ErrBadFile) {
				t.Fatalf("cut at %d, size %d: error %v, want ErrBadFile", n, len(good), err)
			}
		}
	}
	if _, err := Read(bytes.NewReader(good[:end]), end); err != nil {
		t.Errorf("file without trailing padding: %v", err)
	}
}

// TestReadUnsupportedType: a type ggml defines but quant cannot compute
// with reads fine; the model layer rejects it with a better message.
func TestReadUnsupportedType(t *testing.T) {
	w := NewWriter()
	dims := []int64{256, 2}
	size, err := TensorBytes(quant.F64, dims)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("w", quant.F64, dims, make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	f := writeRead(t, w)
	if ti, _ := f.Tensor("w"); ti.Type != quant.F64 || ti.Type.Supported() || ti.Size != size {
		t.Errorf("got %v (supported %v) of %d bytes, want F64 of %d", ti.Type, ti.Type.Supported(), ti.Size, size)
	}
}

type failingReader struct{ err error }

func (r failingReader) ReadAt([]byte, int64) (int, error) { return 0, r.err }

func TestReadIOError(t *testing.T) {
	boom := errors.New("disk on fire")
	_, err := Read(failingReader{boom}, 1000)
	if !errors.Is(err, boom) || errors.Is(err, ErrBadFile) {
		t.Errorf("error %v, want the reader's error and not ErrBadFile", err)
	}
}

func TestReadLargeStringArray(t *testing.T) {
	tokens := make([]string, 32000)
	for i := range tokens {
		tokens[i] = strings.Repeat("▁", i%5) + string(rune('a'+i%26))
	}
	w := NewWriter()
	w.AddKV("tokenizer.ggml.tokens", tokens)
	f := writeRead(t, w)
	got, _ := f.Strings("tokenizer.ggml.tokens")
	if len(got) != len(tokens) || got[31999] != tokens[31999] {
		t.Errorf("read %d tokens", len(got))
	}
}

func BenchmarkReadTokens(b *testing.B) {
	tokens := make([]string, 32000)
	for i := range tokens {
		tokens[i] = "▁token" + string(rune('a'+i%26))
	}
	w := NewWriter()
	w.AddKV("tokenizer.ggml.tokens", tokens)
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
	}
}

// zeroTail serves a file's bytes followed by zeros up to limit, and then
// fails: it stands for a huge file whose header declares huge counts.
type zeroTail struct {
	head  []byte
	limit int64
}

func (z zeroTail) ReadAt(p []byte, off int64) (int, error) {
	for i := range p {
		o := off + int64(i)
		switch {
		case o >= z.limit:
			return i, errors.New("read beyond the test's limit")
		case o < int64(len(z.head)):
			p[i] = z.head[o]
		default:
			p[i] = 0
		}
	}
	return len(p), nil
}

// TestReadHugeFile: in a file of 1 TiB, the size bound allows counts and
// lengths in the billions (a 4 GiB string, 2^30 strings). Read must not
// reserve memory for them up front: it stops at the first byte it cannot
// read, having allocated a small multiple of what it parsed.
func TestReadHugeFile(t *testing.T) {
	good := sampleFile(t)
	const size = 1 << 40
	tests := []struct {
		name   string
		mutate func(b []byte)
	}{
		{"kv count", func(b []byte) { put64(b, 16, 1<<36) }},
		{"tensor count", func(b []byte) { put64(b, 8, 1<<34) }},
		{"string length", func(b []byte) { put64(b, after(t, b, "general.name")+4, 1<<39) }},
		{"string of 4 GiB", func(b []byte) { put64(b, after(t, b, "general.name")+4, 4<<30) }},
		{"array of 2^30 strings", func(b []byte) { put64(b, after(t, b, "tokenizer.ggml.tokens")+8, 1<<30) }},
		{"string array", func(b []byte) { put64(b, after(t, b, "tokenizer.ggml.tokens")+8, 1<<36) }},
		{"float array", func(b []byte) { put64(b, after(t, b, "tokenizer.ggml.scores")+8, 1<<37) }},
		{"nested array", func(b []byte) { put64(b, after(t, b, "test.nested")+8, 1<<35) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := bytes.Clone(good)
			tc.mutate(b)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Read(zeroTail{b, 1 << 20}, size)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("Read succeeded")
			}
			// An empty string costs a 16-byte header for its 8 bytes in
			// the file, and slices grow by doubling: about 5 bytes kept
			// or discarded per byte read is the worst case.
			if d := after.TotalAlloc - before.TotalAlloc; d > 6<<20 {
				t.Errorf("Read allocated %d bytes after reading at most 1 MiB", d)
			}
		})
	}
}
