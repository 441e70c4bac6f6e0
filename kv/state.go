package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// ErrBadState reports a serialized cache that does not fit this cache (other
// dimensions, type or windows) or is malformed.
var ErrBadState = errors.New("kv: bad saved state")

// stateMagic starts the serialized form of a cache. KVC1 saved each run of
// ring cells as keys then values, so a ring renumbered by Shift came back
// with keys and values mixed up; KVC2 saves whole arrays in position order;
// KVC3 adds an Int4 cache's Recent and its F16 slots; KVC4 the number of
// sinks among the slots (KVC3's were 4); KVC5 each layer's KV heads and
// head sizes (Config.Geometry). ReadFrom still reads KVC2 to KVC4 (whose
// layers all have the header's geometry), and slots saved by a cache
// keeping another number of positions in F16 (or none); its slots then
// stay empty.
const (
	stateMagic   = "KVC5"
	stateMagicV4 = "KVC4"
	stateMagicV3 = "KVC3"
	stateMagicV2 = "KVC2"
)

// v3Sinks is the number of sinks a KVC3 stream's slots begin with.
const v3Sinks = 4

// WriteTo writes the stored rows of every layer, and only those: for each
// layer the positions it holds (lo..hi; for a windowed layer the part of the
// ring still held) and where its ring starts, little-endian, after a header
// with the cache's type and dimensions. Per layer and KV head come the keys of those positions in
// position order, then their values, then (Int8) the key scales and the
// value scales, so the stream does not depend on where the cells sit in a
// ring. An Int4 cache writes its
// q4_0 blocks as they are, still rotated, and its header also holds the
// key and value rotation orders, so that a cache rotating otherwise refuses
// them. Empty capacity is not written. ReadFrom reads it back into a cache
// of the same Config.
func (c *Cache) WriteTo(w io.Writer) (int64, error) {
	sw := &stateWriter{w: w, buf: make([]byte, 0, 64<<10)}
	sw.bytes([]byte(stateMagic))
	for _, v := range []int{int(c.cfg.Type), c.cfg.Layers, c.cfg.KVHeads, c.cfg.HeadDimK, c.cfg.HeadDimV} {
		sw.u32(uint32(v))
	}
	if c.cfg.Type == Int4 {
		sw.u32(uint32(c.rotK))
		sw.u32(uint32(c.rotV))
		sw.u32(uint32(c.recent))
		sw.u32(recentSinks)
	}
	for i := range c.layers {
		l := &c.layers[i]
		sw.u32(uint32(l.window))
		sw.u64(uint64(int64(l.lo)))
		sw.u64(uint64(int64(l.hi)))
		sw.u32(uint32(l.cells))
		sw.u32(uint32(l.off))
		sw.u32(uint32(l.nh))
		sw.u32(uint32(l.dk))
		sw.u32(uint32(l.dv))
	}
	for i := range c.layers {
		l := &c.layers[i]
		parts := c.stateParts(l)
		for h := range l.nh {
			for _, p := range parts {
				l.rows(l.lo, l.hi-l.lo+1, func(cell, run int) { p.write(sw, h*l.cells+cell, run) })
			}
		}
		if len(l.rec.pos) > 0 {
			for _, p := range l.rec.pos {
				sw.u32(uint32(p))
			}
			sw.u16s(l.rec.rk)
			sw.u16s(l.rec.rv)
		}
	}
	sw.flush()
	return sw.n, sw.err
}

// ReadFrom replaces the cache's contents with rows written by WriteTo from
// a cache of the same type, dimensions and windows, growing the cache if
// the rows need more cells than it has (up to MaxCells). It reads exactly
// what WriteTo wrote, no further. Errors wrap ErrBadState, or
// io.ErrUnexpectedEOF for a stream that ends early; the cache is empty
// after an error.
func (c *Cache) ReadFrom(r io.Reader) (int64, error) {
	sr := &stateReader{r: r, buf: make([]byte, 64<<10)}
	n, err := c.readFrom(sr)
	if err != nil {
		c.Truncate(0)
		for i := range c.layers {
			c.layers[i].lo, c.layers[i].off = 0, 0
		}
	}
	return n, err
}

func (c *Cache) readFrom(sr *stateReader) (int64, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("kv: read state: "+format+": %w", append(args, ErrBadState)...)
	}
	magic := make([]byte, len(stateMagic))
	sr.read(magic)
	if sr.err != nil {
		return sr.n, sr.fail()
	}
	v2, v3, v4 := string(magic) == stateMagicV2, string(magic) == stateMagicV3, string(magic) == stateMagicV4
	if string(magic) != stateMagic && !v2 && !v3 && !v4 {
		return sr.n, bad("magic %q, want %q", magic, stateMagic)
	}
	var hdr [5]uint32
	for i := range hdr {
		hdr[i] = sr.u32()
	}
	if sr.err != nil {
		return sr.n, sr.fail()
	}
	want := [5]uint32{uint32(c.cfg.Type), uint32(c.cfg.Layers), uint32(c.cfg.KVHeads), uint32(c.cfg.HeadDimK), uint32(c.cfg.HeadDimV)}
	if hdr[0] != want[0] {
		return sr.n, bad("saved with KV type %v, this cache is %v", Type(hdr[0]), c.cfg.Type)
	}
	if hdr != want {
		return sr.n, bad("saved layers/heads/dims %v, this cache has %v", hdr[1:], want[1:])
	}
	// Int4: the recent positions the saved cache kept in F16, and the
	// sinks before them.
	var savedRecent, savedSinks int64
	if c.cfg.Type == Int4 {
		rk, rv := sr.u32(), sr.u32()
		if sr.err != nil {
			return sr.n, sr.fail()
		}
		if int64(rk) != int64(c.rotK) || int64(rv) != int64(c.rotV) {
			return sr.n, bad("saved with Walsh–Hadamard rotation orders %d (keys) and %d (values), this cache uses %d and %d (0: none)", rk, rv, c.rotK, c.rotV)
		}
		if !v2 {
			savedRecent = int64(sr.u32())
			if sr.err != nil {
				return sr.n, sr.fail()
			}
			savedSinks = v3Sinks
			if !v3 {
				savedSinks = int64(sr.u32())
			}
			if sr.err != nil {
				return sr.n, sr.fail()
			}
			if savedRecent > math.MaxInt32/2 || savedSinks > math.MaxInt32/2 {
				return sr.n, bad("saved with %d recent positions and %d sinks in F16", savedRecent, savedSinks)
			}
		}
	}
	type span struct{ lo, hi, cells, off int }
	spans := make([]span, len(c.layers))
	need := 0
	for i := range c.layers {
		l := &c.layers[i]
		win := sr.u32()
		lo, hi := int64(sr.u64()), int64(sr.u64())
		cells, off := sr.u32(), sr.u32()
		g := [3]uint32{hdr[2], hdr[3], hdr[4]}
		if !v2 && !v3 && !v4 {
			g = [3]uint32{sr.u32(), sr.u32(), sr.u32()}
		}
		if sr.err != nil {
			return sr.n, sr.fail()
		}
		switch {
		case int(win) != l.window:
			return sr.n, bad("layer %d has window %d, this cache %d", i, win, l.window)
		case g != [3]uint32{uint32(l.nh), uint32(l.dk), uint32(l.dv)}:
			return sr.n, bad("layer %d has %d KV heads of %d and %d floats, this cache %d of %d and %d", i, g[0], g[1], g[2], l.nh, l.dk, l.dv)
		case lo < 0 || hi < lo-1 || hi >= int64(c.cfg.Cells):
			return sr.n, bad("layer %d holds positions %d..%d, outside 0..%d", i, lo, hi, c.cfg.Cells-1)
		case l.window == 0 && lo != 0:
			return sr.n, bad("full-attention layer %d starts at position %d, not 0", i, lo)
		case l.window > 0 && hi-lo+1 > int64(c.cfg.Cells):
			return sr.n, bad("windowed layer %d holds %d positions", i, hi-lo+1)
		case cells == 0 || off >= cells:
			return sr.n, bad("layer %d has cell offset %d in a ring of %d cells", i, off, cells)
		}
		spans[i] = span{int(lo), int(hi), int(cells), int(off)}
		need = max(need, int(hi)+1)
	}
	for i := range spans {
		if spans[i].hi != need-1 {
			return sr.n, bad("layer %d holds positions up to %d, others up to %d", i, spans[i].hi, need-1)
		}
	}
	c.Truncate(0)
	if err := c.Grow(max(need, c.cells)); err != nil {
		return sr.n, bad("%v", err)
	}
	for i := range c.layers {
		l := &c.layers[i]
		sp := spans[i]
		// A ring smaller than the one saved keeps the newest positions.
		skip := max(0, (sp.hi-sp.lo+1)-l.cells)
		lo := sp.lo + skip
		l.off, l.lo, l.hi = 0, lo, sp.hi
		if l.cells == sp.cells {
			// The rows go back in the cells they came from, so attention
			// adds them in the same order and gives the same bits.
			l.off = sp.off
		}
		parts := c.stateParts(l)
		for h := range l.nh {
			for _, p := range parts {
				sr.discard(int64(skip) * p.rowBytes)
				l.rows(lo, sp.hi-lo+1, func(cell, run int) { p.read(sr, h*l.cells+cell, run) })
			}
			if sr.err != nil {
				return sr.n, sr.fail()
			}
		}
		if c.cfg.Type == Int8 {
			for _, s := range [][]float32{l.ks, l.vs} {
				for _, x := range s {
					if !(x >= 0) || math.IsInf(float64(x), 0) {
						return sr.n, bad("layer %d has scale %v", i, x)
					}
				}
			}
		}
		// A saved cache kept slots only when it kept recent positions.
		slots := int64(0)
		if savedRecent > 0 {
			slots = savedSinks + savedRecent
		}
		if slots > 0 && (savedRecent != int64(c.recent) || savedSinks != recentSinks) {
			// Another plan (or build) kept other F16 copies: they are
			// skipped, and attention reads those positions from q4_0.
			sr.discard(4*slots + 2*slots*int64(l.nh)*int64(l.dk+l.dv))
			if sr.err != nil {
				return sr.n, sr.fail()
			}
		} else if slots > 0 {
			for i := range l.rec.pos {
				l.rec.pos[i] = int32(sr.u32())
			}
			sr.u16s(l.rec.rk)
			sr.u16s(l.rec.rv)
			if sr.err != nil {
				return sr.n, sr.fail()
			}
			for s, p := range l.rec.pos {
				// A slot holds a position that maps to it, at most the
				// newest; one the ring here no longer holds is dropped.
				if p < -1 || int(p) > sp.hi || p >= 0 && c.slot(int(p)) != s {
					return sr.n, bad("layer %d has recent slot %d holding position %d", i, s, p)
				}
				if int(p) < lo {
					l.rec.pos[s] = -1
				}
			}
		}
		if c.cfg.Type == Int4 {
			for _, s := range [][]byte{l.k4, l.v4} {
				for b := 0; b+q4BlockBytes <= len(s); b += q4BlockBytes {
					// An F16 with all exponent bits set is infinite or NaN.
					if s[b+1]&0x7c == 0x7c {
						return sr.n, bad("layer %d has block scale %v", i, q4Scale(s[b:]))
					}
				}
			}
		}
	}
	return sr.n, nil
}

// statePart is one array of a layer that WriteTo saves row by row: its
// bytes per (position, KV head) row, and how to write or read run rows
// starting at row r.
type statePart struct {
	rowBytes int64
	write    func(sw *stateWriter, r, run int)
	read     func(sr *stateReader, r, run int)
}

// stateParts lists l's arrays in the order WriteTo saves them: keys,
// values, and Int8's key and value scales.
func (c *Cache) stateParts(l *layer) []statePart {
	dk, dv := l.dk, l.dv
	switch c.cfg.Type {
	case F16:
		return []statePart{
			{2 * int64(dk), func(sw *stateWriter, r, n int) { sw.u16s(l.k16[r*dk : (r+n)*dk]) }, func(sr *stateReader, r, n int) { sr.u16s(l.k16[r*dk : (r+n)*dk]) }},
			{2 * int64(dv), func(sw *stateWriter, r, n int) { sw.u16s(l.v16[r*dv : (r+n)*dv]) }, func(sr *stateReader, r, n int) { sr.u16s(l.v16[r*dv : (r+n)*dv]) }},
		}
	case Int4:
		kb, vb := q4RowBytes(dk), q4RowBytes(dv)
		return []statePart{
			{int64(kb), func(sw *stateWriter, r, n int) { sw.raw(l.k4[r*kb : (r+n)*kb]) }, func(sr *stateReader, r, n int) { sr.raw(l.k4[r*kb : (r+n)*kb]) }},
			{int64(vb), func(sw *stateWriter, r, n int) { sw.raw(l.v4[r*vb : (r+n)*vb]) }, func(sr *stateReader, r, n int) { sr.raw(l.v4[r*vb : (r+n)*vb]) }},
		}
	}
	return []statePart{
		{int64(dk), func(sw *stateWriter, r, n int) { sw.i8s(l.k8[r*dk : (r+n)*dk]) }, func(sr *stateReader, r, n int) { sr.i8s(l.k8[r*dk : (r+n)*dk]) }},
		{int64(dv), func(sw *stateWriter, r, n int) { sw.i8s(l.v8[r*dv : (r+n)*dv]) }, func(sr *stateReader, r, n int) { sr.i8s(l.v8[r*dv : (r+n)*dv]) }},
		{4, func(sw *stateWriter, r, n int) { sw.f32s(l.ks[r : r+n]) }, func(sr *stateReader, r, n int) { sr.f32s(l.ks[r : r+n]) }},
		{4, func(sw *stateWriter, r, n int) { sw.f32s(l.vs[r : r+n]) }, func(sr *stateReader, r, n int) { sr.f32s(l.vs[r : r+n]) }},
	}
}

// rows calls f for the runs of cells holding positions pos..pos+n-1, in
// position order: f(cell, run) covers run consecutive cells from cell.
func (l *layer) rows(pos, n int, f func(cell, run int)) {
	for n > 0 {
		cell := l.cell(pos)
		run := min(n, l.cells-cell)
		f(cell, run)
		pos, n = pos+run, n-run
	}
}

// stateWriter encodes little-endian values through a buffer and remembers
// the first error.
type stateWriter struct {
	w   io.Writer
	buf []byte
	n   int64
	err error
}

func (s *stateWriter) room(k int) {
	if len(s.buf)+k > cap(s.buf) {
		s.flush()
	}
}

func (s *stateWriter) flush() {
	if s.err == nil && len(s.buf) > 0 {
		var n int
		n, s.err = s.w.Write(s.buf)
		s.n += int64(n)
	}
	s.buf = s.buf[:0]
}

func (s *stateWriter) bytes(b []byte) { s.room(len(b)); s.buf = append(s.buf, b...) }
func (s *stateWriter) u32(v uint32)   { s.room(4); s.buf = binary.LittleEndian.AppendUint32(s.buf, v) }
func (s *stateWriter) u64(v uint64)   { s.room(8); s.buf = binary.LittleEndian.AppendUint64(s.buf, v) }

// free is how many more bytes the buffer takes before a flush, at least k.
func (s *stateWriter) free(k int) int {
	if cap(s.buf)-len(s.buf) < k {
		s.flush()
	}
	return cap(s.buf) - len(s.buf)
}

func (s *stateWriter) u16s(v []uint16) {
	for len(v) > 0 {
		k := min(len(v), s.free(2)/2)
		for _, x := range v[:k] {
			s.buf = binary.LittleEndian.AppendUint16(s.buf, x)
		}
		v = v[k:]
	}
}

func (s *stateWriter) raw(v []byte) {
	for len(v) > 0 {
		k := min(len(v), s.free(1))
		s.buf = append(s.buf, v[:k]...)
		v = v[k:]
	}
}

func (s *stateWriter) i8s(v []int8) {
	for len(v) > 0 {
		k := min(len(v), s.free(1))
		for _, x := range v[:k] {
			s.buf = append(s.buf, byte(x))
		}
		v = v[k:]
	}
}

func (s *stateWriter) f32s(v []float32) {
	for len(v) > 0 {
		k := min(len(v), s.free(4)/4)
		for _, x := range v[:k] {
			s.buf = binary.LittleEndian.AppendUint32(s.buf, math.Float32bits(x))
		}
		v = v[k:]
	}
}

// stateReader decodes little-endian values, reading exactly the bytes
// asked for, and remembers the first error.
type stateReader struct {
	r   io.Reader
	buf []byte
	n   int64
	err error
}

// fail returns the reader's error, an early end of stream as
// io.ErrUnexpectedEOF.
func (s *stateReader) fail() error {
	if errors.Is(s.err, io.EOF) {
		return fmt.Errorf("kv: read state: stream ends early: %w", io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("kv: read state: %w", s.err)
}

func (s *stateReader) read(b []byte) {
	if s.err != nil {
		return
	}
	n, err := io.ReadFull(s.r, b)
	s.n += int64(n)
	s.err = err
}

func (s *stateReader) u32() uint32 {
	var b [4]byte
	s.read(b[:])
	return binary.LittleEndian.Uint32(b[:])
}

func (s *stateReader) u64() uint64 {
	var b [8]byte
	s.read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

func (s *stateReader) discard(n int64) {
	for n > 0 && s.err == nil {
		k := min(n, int64(len(s.buf)))
		s.read(s.buf[:k])
		n -= k
	}
}

func (s *stateReader) u16s(v []uint16) {
	for len(v) > 0 && s.err == nil {
		k := min(len(v), len(s.buf)/2)
		s.read(s.buf[:2*k])
		for i := range k {
			v[i] = binary.LittleEndian.Uint16(s.buf[2*i:])
		}
		v = v[k:]
	}
}

func (s *stateReader) raw(v []byte) { s.read(v) }

func (s *stateReader) i8s(v []int8) {
	for len(v) > 0 && s.err == nil {
		k := min(len(v), len(s.buf))
		s.read(s.buf[:k])
		for i := range k {
			v[i] = int8(s.buf[i])
		}
		v = v[k:]
	}
}

func (s *stateReader) f32s(v []float32) {
	for len(v) > 0 && s.err == nil {
		k := min(len(v), len(s.buf)/4)
		s.read(s.buf[:4*k])
		for i := range k {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(s.buf[4*i:]))
		}
		v = v[k:]
	}
}
