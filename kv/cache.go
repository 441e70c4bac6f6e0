package kv

import (
	"errors"
	"fmt"
	"math"

	"github.com/lowmem/llm/internal/enum"
	"github.com/lowmem/llm/quant"
)

// Type is the element type the cache stores keys and values in.
type Type int

const (
	// F16 stores IEEE binary16 values, as llama.cpp's default cache does.
	// Attention over it rounds where llama.cpp's CPU path does; float32
	// sums may differ from it in the last bits, being added in another
	// order.
	F16 Type = iota
	// Int8 stores symmetric int8 values with one float32 scale per token and
	// KV head (scale = amax/127): about half the memory of F16 plus 8 bytes
	// per token and head, at some loss of precision.
	Int8
	// Int4 stores llama.cpp's q4_0 blocks: 32 elements along the head
	// dimension share an F16 scale and hold 4-bit codes, 18 bytes a block,
	// about 28% of F16's memory. As llama.cpp does by default for quantized
	// caches, keys (and queries) are multiplied by an orthonormal
	// Walsh–Hadamard matrix before quantizing, which leaves q·k unchanged but
	// spreads outlier channels over the block; values are rotated too and the
	// attention output rotated back. Head dimensions must be multiples of 32
	// (New refuses others); the rotation needs multiples of 64, without it
	// the blocks are quantized as they are.
	Int4
)

// ParseType is the Type String names s ("f16", "int8" or "int4"), for
// flags and configuration files; another name is an error wrapping
// ErrInvalid.
func ParseType(s string) (Type, error) {
	return enum.Parse[Type](s, typeNames[:], "kv type", ErrInvalid)
}

// String returns "f16", "int8" or "int4".
func (t Type) String() string { return enum.Name(t, typeNames[:], "Type") }

var typeNames = [...]string{F16: "f16", Int8: "int8", Int4: "int4"}

// HeadDims reports whether a cache of type t holds heads of headDimK and
// headDimV elements (each also in 1..MaxHeadDim): Int4 needs multiples of
// 32, whole q4_0 blocks; F16 and Int8 take any size. A memory plan uses it
// to skip a type the model cannot have.
func (t Type) HeadDims(headDimK, headDimV int) bool {
	return t != Int4 || headDimK%q4Block == 0 && headDimV%q4Block == 0
}

// MaxHeadDim is the largest HeadDimK or HeadDimV New accepts. Attention
// keeps one F16-rounded query head on the stack, which bounds its length.
const MaxHeadDim = 1024

var (
	// ErrFull reports a position at or past the cache's capacity in tokens.
	// llm.ErrContextFull is the same value, so errors.Is works with either.
	ErrFull = errors.New("kv: context full")
	// ErrScratch reports a scratch slice shorter than the number of positions
	// a query attends over.
	ErrScratch = errors.New("kv: scratch too short")
	// ErrInvalid reports a bad Config or an argument that does not fit the
	// cache (layer, slice length, head range, a position not stored).
	ErrInvalid = errors.New("kv: invalid argument")
)

// Config describes a cache. All dimensions are counts, not bytes.
type Config struct {
	Layers   int // transformer layers, each with its own keys and values
	KVHeads  int // key/value heads per layer (fewer than query heads with GQA)
	HeadDimK int // elements per key head
	HeadDimV int // elements per value head
	Cells    int // capacity in tokens: positions 0..Cells-1 can be stored
	Type     Type

	// Initial is how many cells New allocates; 0 means Cells. A cache
	// started smaller stores positions below Initial only, until Grow
	// enlarges it (up to Cells). Windowed layers allocate at most their
	// ring.
	Initial int

	// Windows gives each layer's attention span: 0 is full attention over
	// every earlier position, W > 0 a sliding window over the last W
	// positions (the token itself included). A windowed layer keeps only the
	// cells it can still need, so its memory does not grow with Cells. Nil
	// or empty means every layer is full; otherwise it has one entry per
	// layer.
	Windows []int

	// Chunked makes the windowed layers attend in chunks rather than
	// sliding: a query at pos sees only the positions of its own chunk of
	// W, from pos - (pos-From) mod W (chunk 0 starting at the text's
	// first position), as Llama 4's chunked layers do (llama.cpp's
	// LLAMA_SWA_TYPE_CHUNKED). A chunk is never wider than the window, so
	// such a layer keeps the same ring.
	Chunked bool

	// Batch is how many consecutive positions a caller stores before the
	// first of them attends, i.e. the prefill chunk size; 0 means 1 (store
	// one token, attend, store the next). A windowed layer keeps W+Batch-1
	// cells so that storing a whole chunk does not overwrite keys that the
	// chunk's first token still sees. Full layers ignore it.
	Batch int

	// Recent, for an Int4 cache, is how many of each layer's newest
	// positions are also kept in F16 (with the first four, the attention
	// sinks), rotated as the q4_0 rows are; attention reads those positions
	// there. A 4-bit key moves the softmax of every later query, and the
	// newest keys and the sinks carry most of its weight. 0 keeps none;
	// model.KVConfig sets DefaultRecent. At most an eighth of Cells is
	// used. Other types must leave it 0.
	Recent int

	// Geometry, when not empty, gives each layer (one entry a layer) its
	// own KV heads and head sizes, a zero field taking KVHeads, HeadDimK or
	// HeadDimV: Gemma 4's windowed and global layers differ in both, and
	// one geometry for all would pad every layer to the widest. Store,
	// Attend and Shift then take each layer's own.
	Geometry []Geometry
}

// Geometry is one layer's key/value heads and head sizes (see
// Config.Geometry).
type Geometry struct {
	KVHeads, HeadDimK, HeadDimV int
}

// geometry is layer i's geometry, the Config's where Geometry says nothing.
func (cfg *Config) geometry(i int) Geometry {
	g := Geometry{cfg.KVHeads, cfg.HeadDimK, cfg.HeadDimV}
	if i < len(cfg.Geometry) {
		o := cfg.Geometry[i]
		if o.KVHeads != 0 {
			g.KVHeads = o.KVHeads
		}
		if o.HeadDimK != 0 {
			g.HeadDimK = o.HeadDimK
		}
		if o.HeadDimV != 0 {
			g.HeadDimV = o.HeadDimV
		}
	}
	return g
}

// layer holds one layer's keys and values, each laid out as
// [KV head][cell][head dim] so that one head's keys are read linearly.
type layer struct {
	window int // 0: full attention
	cells  int // cells of storage; a windowed layer uses them as a ring
	ring   int // most cells the layer ever needs: Config.Cells, or the window's ring
	off    int // position pos lives in cell (pos+off) mod cells; Shift renumbers rings by changing it

	// Positions lo..hi are held (hi = lo-1 when none are). Store extends hi
	// one position at a time; a ring drops positions from lo as it wraps.
	lo, hi int

	nh, dk, dv int // KV heads and key and value head sizes (Config.geometry)
	// rotK and rotV are the orders of the Walsh–Hadamard blocks an Int4
	// cache rotates this layer's keys (and queries) and values by; 0 is
	// no rotation.
	rotK, rotV int

	k16, v16 []uint16 // F16
	k8, v8   []int8   // Int8
	ks, vs   []float32
	k4, v4   []byte // Int4: q4_0 blocks, HeadDim/32 of them a row
	rec      recent // Int4 with Config.Recent: F16 copies of the newest positions and the sinks
}

// cell returns the storage cell of position pos.
func (l *layer) cell(pos int) int {
	p := pos + l.off
	if p < l.cells {
		return p
	}
	return p % l.cells
}

// Cache stores the keys and values of every layer for one sequence and
// computes attention over them. New allocates Config.Initial cells (all of
// Config.Cells by default); Grow enlarges the cache up to Config.Cells.
//
// Store and Attend on the same layer must not run at the same time.
// Attend only reads the cache, so goroutines may attend concurrently on
// disjoint head ranges, each with its own scratch.
type Cache struct {
	cfg    Config
	layers []layer
	cells  int // positions storable now: 0..cells-1
	bytes  int64

	// rotK and rotV are the Walsh–Hadamard orders an Int4 cache of the
	// Config's own head sizes rotates keys and values by (0: none), which a
	// saved state records so that a build rotating otherwise refuses it;
	// each layer's own (layer.rotK) follow from its sizes alike.
	rotK, rotV int
	// recent is Config.recentLen: the newest positions kept in F16.
	recent int

	// batch is the StoreBatch in progress, kept here so that handing it
	// to a Runner allocates nothing.
	batch batchStore
}

// maxBytes bounds the storage New agrees to allocate, so that a config
// with absurd dimensions gets an error instead of a failed allocation. On
// 32-bit targets it is 1 GiB, a quarter of the address space, which also
// keeps every slice length an int.
const maxBytes = min(1<<46, math.MaxInt/2)

// New validates cfg and allocates its storage: Config.Initial cells, or all
// of Config.Cells. It returns an error wrapping ErrInvalid that names the
// first bad field; a config whose full size (every layer at Config.Cells)
// would be absurd is refused even when Initial is small.
func New(cfg Config) (*Cache, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.Windows = append([]int(nil), cfg.Windows...)
	cfg.Geometry = append([]Geometry(nil), cfg.Geometry...)
	c := &Cache{cfg: cfg, layers: make([]layer, cfg.Layers), cells: cfg.Cells}
	if cfg.Type == Int4 && rotateInt4 {
		c.rotK, c.rotV = rotationOrders(cfg.HeadDimK, cfg.HeadDimV)
	}
	if cfg.Initial > 0 {
		c.cells = min(cfg.Initial, cfg.Cells)
	}
	c.recent = cfg.recentLen()

	// Size every layer at full capacity before allocating any, so that a
	// config too large to hold fails without having allocated part of
	// itself, and so that Grow can never overflow.
	var full int64
	for i := range c.layers {
		l := &c.layers[i]
		l.ring, l.hi = cfg.ring(i), -1
		if len(cfg.Windows) > 0 {
			l.window = cfg.Windows[i]
		}
		g := cfg.geometry(i)
		l.nh, l.dk, l.dv = g.KVHeads, g.HeadDimK, g.HeadDimV
		if cfg.Type == Int4 && rotateInt4 {
			l.rotK, l.rotV = rotationOrders(l.dk, l.dv)
		}
		// Bounding rows first keeps every product below 2⁶³: a row is at
		// most 2·(2·MaxHeadDim)+8 bytes, and full ≤ maxBytes before each
		// layer is added.
		if int64(l.ring) > maxBytes/int64(l.nh) {
			return nil, fmt.Errorf("kv: config: layer %d needs %d×%d rows, too many: %w", i, l.nh, l.ring, ErrInvalid)
		}
		full += cfg.layerBytes(i, l.ring)
		if full > maxBytes {
			return nil, fmt.Errorf("kv: config: storage exceeds %d bytes by layer %d: %w", int64(maxBytes), i, ErrInvalid)
		}
	}
	for i := range c.layers {
		l := &c.layers[i]
		c.alloc(l, min(l.ring, c.cells))
		c.allocRecent(l)
	}
	c.bytes = Bytes(cfg)
	return c, nil
}

// Bytes is the storage New(cfg) allocates for keys, values and scales:
// every layer at Config.Initial cells (Config.Cells when 0), a windowed
// layer at most its ring. It is the one formula for a cache's size: New
// uses it, and so do memory plans made before any cache exists. cfg must
// be valid (New's checks).
func Bytes(cfg Config) int64 {
	cells := cfg.Cells
	if cfg.Initial > 0 {
		cells = min(cfg.Initial, cfg.Cells)
	}
	var n int64
	for i := range cfg.Layers {
		n += cfg.layerBytes(i, min(cfg.ring(i), cells)) + cfg.recentBytes(i)
	}
	return n
}

// GrowBytes is what growing a cache of cfg from cells positions to cells
// to adds to its Bytes, and the largest single layer's old storage the
// resize holds while copying it: the transient extra memory on top of the
// grown cache. to is capped at Config.Cells.
func GrowBytes(cfg Config, from, to int) (added, transient int64) {
	to = min(to, cfg.Cells)
	for i := range cfg.Layers {
		ring := cfg.ring(i)
		old, nc := min(ring, from), min(ring, to)
		if nc > old {
			added += cfg.layerBytes(i, nc) - cfg.layerBytes(i, old)
			transient = max(transient, cfg.layerBytes(i, old))
		}
	}
	return added, transient
}

// ring is the most cells layer i ever needs: Cells, or for a windowed
// layer its window plus Batch-1 cells when that is fewer.
func (cfg *Config) ring(i int) int {
	if len(cfg.Windows) == 0 || cfg.Windows[i] <= 0 {
		return cfg.Cells
	}
	// int64: W+Batch may overflow an int for absurd inputs.
	if ring := int64(cfg.Windows[i]) + int64(max(cfg.Batch, 1)) - 1; ring < int64(cfg.Cells) {
		return int(ring)
	}
	return cfg.Cells
}

// rowBytes is the storage of one (token, KV head) row of a layer of
// geometry g: its key, its value and, for Int8, their two float32 scales;
// for Int4, the q4_0 blocks of both (scales included).
func (cfg *Config) rowBytes(g Geometry) int64 {
	switch cfg.Type {
	case Int8:
		return int64(g.HeadDimK+g.HeadDimV) + 8
	case Int4:
		return int64(q4RowBytes(g.HeadDimK) + q4RowBytes(g.HeadDimV))
	}
	return 2 * int64(g.HeadDimK+g.HeadDimV)
}

// layerBytes is the storage of layer i at the given cells.
func (cfg *Config) layerBytes(i, cells int) int64 {
	g := cfg.geometry(i)
	return int64(g.KVHeads) * int64(cells) * cfg.rowBytes(g)
}

// alloc gives l fresh, zeroed storage of cells cells, replacing (not
// copying) what it had.
func (c *Cache) alloc(l *layer, cells int) {
	rows := l.nh * cells
	l.cells, l.off = cells, 0
	switch c.cfg.Type {
	case F16:
		l.k16 = make([]uint16, rows*l.dk)
		l.v16 = make([]uint16, rows*l.dv)
	case Int8:
		l.k8 = make([]int8, rows*l.dk)
		l.v8 = make([]int8, rows*l.dv)
		l.ks = make([]float32, rows)
		l.vs = make([]float32, rows)
	case Int4:
		l.k4 = make([]byte, rows*q4RowBytes(l.dk))
		l.v4 = make([]byte, rows*q4RowBytes(l.dv))
	}
}

func (cfg *Config) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("kv: config: "+format+": %w", append(args, ErrInvalid)...)
	}
	switch {
	case cfg.Layers <= 0:
		return bad("Layers is %d, must be positive", cfg.Layers)
	case cfg.KVHeads <= 0:
		return bad("KVHeads is %d, must be positive", cfg.KVHeads)
	case cfg.HeadDimK <= 0 || cfg.HeadDimK > MaxHeadDim:
		return bad("HeadDimK is %d, must be in 1..%d", cfg.HeadDimK, MaxHeadDim)
	case cfg.HeadDimV <= 0 || cfg.HeadDimV > MaxHeadDim:
		return bad("HeadDimV is %d, must be in 1..%d", cfg.HeadDimV, MaxHeadDim)
	case cfg.Cells <= 0:
		return bad("Cells is %d, must be positive", cfg.Cells)
	case cfg.Type != F16 && cfg.Type != Int8 && cfg.Type != Int4:
		return bad("unknown Type %d", int(cfg.Type))
	case !cfg.Type.HeadDims(cfg.HeadDimK, cfg.HeadDimV):
		return bad("Int4 quantizes blocks of %d elements (llama.cpp's q4_0): HeadDimK %d and HeadDimV %d must be multiples of %d",
			q4Block, cfg.HeadDimK, cfg.HeadDimV, q4Block)
	case len(cfg.Windows) != 0 && len(cfg.Windows) != cfg.Layers:
		return bad("%d Windows for %d Layers, need none or one per layer", len(cfg.Windows), cfg.Layers)
	case len(cfg.Geometry) != 0 && len(cfg.Geometry) != cfg.Layers:
		return bad("%d Geometry entries for %d Layers, need none or one per layer", len(cfg.Geometry), cfg.Layers)
	case cfg.Batch < 0:
		return bad("Batch is %d, must not be negative", cfg.Batch)
	case cfg.Initial < 0:
		return bad("Initial is %d, must not be negative", cfg.Initial)
	case cfg.Recent < 0 || cfg.Recent > math.MaxInt32/2:
		return bad("Recent is %d, must be in 0..%d", cfg.Recent, math.MaxInt32/2)
	case cfg.Recent > 0 && cfg.Type != Int4:
		return bad("Recent is %d: only an Int4 cache keeps recent positions in F16", cfg.Recent)
	}
	for i, w := range cfg.Windows {
		if w < 0 {
			return bad("Windows[%d] is %d, must not be negative", i, w)
		}
	}
	for i, o := range cfg.Geometry {
		g := cfg.geometry(i)
		switch {
		case o.KVHeads < 0 || o.HeadDimK < 0 || o.HeadDimV < 0:
			return bad("Geometry[%d] is %+v, must not be negative", i, o)
		case g.HeadDimK > MaxHeadDim || g.HeadDimV > MaxHeadDim:
			return bad("Geometry[%d]'s head sizes %d and %d must be at most %d", i, g.HeadDimK, g.HeadDimV, MaxHeadDim)
		case !cfg.Type.HeadDims(g.HeadDimK, g.HeadDimV):
			return bad("Int4 quantizes blocks of %d elements: Geometry[%d]'s head sizes %d and %d must be multiples of %d",
				q4Block, i, g.HeadDimK, g.HeadDimV, q4Block)
		}
	}
	return nil
}

// maxHeadDimK is the widest key head of any layer.
func (c *Cache) maxHeadDimK() int {
	d := 0
	for i := range c.layers {
		d = max(d, c.layers[i].dk)
	}
	return d
}

// Config returns the configuration the cache was built with.
func (c *Cache) Config() Config {
	cfg := c.cfg
	cfg.Windows = append([]int(nil), c.cfg.Windows...)
	cfg.Geometry = append([]Geometry(nil), c.cfg.Geometry...)
	return cfg
}

// Cells returns the capacity in tokens as allocated now: the largest
// storable position is Cells()-1 until Grow enlarges the cache.
func (c *Cache) Cells() int { return c.cells }

// MaxCells returns Config.Cells, the capacity Grow can reach.
func (c *Cache) MaxCells() int { return c.cfg.Cells }

// Bytes returns the bytes of key, value and scale storage allocated now.
func (c *Cache) Bytes() int64 { return c.bytes }

// Len returns the number of positions stored: one more than the highest
// position any layer holds (0 when empty).
func (c *Cache) Len() int {
	n := 0
	for i := range c.layers {
		n = max(n, c.layers[i].hi+1)
	}
	return n
}

// Truncate forgets every position >= n in every layer, so that the next
// Store may be at position n (Truncate(0) empties the cache, e.g. to reuse
// it for a new sequence). A windowed layer that has already overwritten
// positions it would need to attend from n again cannot get them back:
// Attend reports them, and the caller must recompute from an earlier
// position. A negative n is taken as 0.
func (c *Cache) Truncate(n int) {
	n = max(n, 0)
	for i := range c.layers {
		l := &c.layers[i]
		if l.hi < n {
			continue
		}
		l.hi = n - 1
		if l.lo > l.hi {
			l.lo = n
		}
		l.rec.forget(n)
	}
}

// Store writes the key and value of the token at position pos into layer:
// k holds KVHeads×HeadDimK floats and v KVHeads×HeadDimV (the layer's
// Geometry), head after head.
// F16 rounds to nearest even; Int8 quantizes each head's row with its own
// scale; Int4 rotates each head's key and value (see Int4) and quantizes
// them to q4_0 blocks, each block's scale fitted to it (see quantizeQ4).
//
// Positions are stored in order: pos may be at most one past the highest
// position stored in this layer (re-storing an earlier one overwrites it).
// A pos at or past Cells() returns an error wrapping ErrFull (Grow, if
// Cells() < MaxCells(), makes room). Store does not allocate.
func (c *Cache) Store(layer, pos int, k, v []float32) error {
	l, err := c.checkStore("store", layer, pos, 1)
	if err != nil {
		return err
	}
	dk, dv, nh := l.dk, l.dv, l.nh
	if len(k) != nh*dk || len(v) != nh*dv {
		return fmt.Errorf("kv: store: got %d key and %d value floats, want %d and %d: %w", len(k), len(v), nh*dk, nh*dv, ErrInvalid)
	}
	for h := range nh {
		c.storeHead(l, h, pos, k[h*dk:(h+1)*dk], v[h*dv:(h+1)*dv])
	}
	c.stored(l, pos, 1)
	return nil
}

// A Runner runs t.Do over the units [0, n), split among its threads, and
// returns when every unit is done; StoreBatch hands it one unit per KV
// head. The model's thread pool is one (internal/ops.Exec.For).
type Runner interface {
	Run(n int, t RangeTask)
}

// A RangeTask is work a Runner splits: Do(worker, lo, hi) does units lo
// to hi-1 on the worker numbered worker.
type RangeTask interface {
	Do(worker, lo, hi int)
}

// StoreBatch stores n tokens at positions pos0 … pos0+n-1 of layer, as n
// calls of Store would, token t's key at k[t·stride:] and value at
// v[t·stride:] (each KVHeads rows, head after head, as Store takes them):
// the layout of a batch's fused Q/K/V rows. r runs the heads in parallel
// (nil: this goroutine stores them all); every head's rows are its own,
// so the heads need no lock. n may be at most the layer's cells (a
// sliding-window layer's window), so no two tokens of the batch share a
// cell. It does not allocate.
func (c *Cache) StoreBatch(layer, pos0, n int, k, v []float32, stride int, r Runner) error {
	if n < 1 {
		return fmt.Errorf("kv: store batch: %d tokens: %w", n, ErrInvalid)
	}
	l, err := c.checkStore("store batch", layer, pos0, n)
	if err != nil {
		return err
	}
	dk, dv, nh := l.dk, l.dv, l.nh
	switch {
	case n > l.cells:
		return fmt.Errorf("kv: store batch: %d tokens in layer %d of %d cells: %w", n, layer, l.cells, ErrInvalid)
	case stride < max(nh*dk, nh*dv) || len(k) < (n-1)*stride+nh*dk || len(v) < (n-1)*stride+nh*dv:
		return fmt.Errorf("kv: store batch: %d tokens of stride %d in %d key and %d value floats, want rows of %d and %d: %w",
			n, stride, len(k), len(v), nh*dk, nh*dv, ErrInvalid)
	}
	c.batch = batchStore{c: c, l: l, pos0: pos0, n: n, k: k, v: v, stride: stride}
	if r == nil {
		c.batch.Do(0, 0, nh)
	} else {
		r.Run(nh, &c.batch)
	}
	c.batch = batchStore{} // hold no caller's slices
	c.stored(l, pos0, n)
	return nil
}

// batchStore is StoreBatch's work: unit h stores KV head h of every
// token of the batch.
type batchStore struct {
	c       *Cache
	l       *layer
	pos0, n int
	k, v    []float32
	stride  int
}

// Do stores KV heads lo … hi-1 of every token (RangeTask's method).
func (b *batchStore) Do(_, lo, hi int) {
	dk, dv := b.l.dk, b.l.dv
	for h := lo; h < hi; h++ {
		for t := range b.n {
			ko, vo := t*b.stride+h*dk, t*b.stride+h*dv
			b.c.storeHead(b.l, h, b.pos0+t, b.k[ko:ko+dk], b.v[vo:vo+dv])
		}
	}
}

// checkStore returns layer's state if positions pos0 … pos0+n-1 may be
// stored there now (see Store); op names the caller in the error.
func (c *Cache) checkStore(op string, layer, pos0, n int) (*layer, error) {
	if layer < 0 || layer >= len(c.layers) {
		return nil, fmt.Errorf("kv: %s: layer %d out of range [0,%d): %w", op, layer, len(c.layers), ErrInvalid)
	}
	if last := pos0 + n - 1; last >= c.cells {
		return nil, fmt.Errorf("kv: %s: position %d: capacity is %d tokens (of at most %d): %w", op, last, c.cells, c.cfg.Cells, ErrFull)
	}
	l := &c.layers[layer]
	switch {
	case pos0 < 0:
		return nil, fmt.Errorf("kv: %s: negative position %d: %w", op, pos0, ErrInvalid)
	case pos0 > l.hi+1:
		return nil, fmt.Errorf("kv: %s: layer %d position %d skips positions after %d: %w", op, layer, pos0, l.hi, ErrInvalid)
	case pos0 < l.lo:
		return nil, fmt.Errorf("kv: %s: layer %d position %d is older than the window's oldest held position %d: %w", op, layer, pos0, l.lo, ErrInvalid)
	}
	return l, nil
}

// storeHead writes KV head h's key ksrc and value vsrc of position pos
// into l's rows (for Int4 with F16 slots, the slot's rows too, not its
// position tag: see stored). Calls for different heads touch different
// memory, so StoreBatch runs them in parallel.
func (c *Cache) storeHead(l *layer, h, pos int, ksrc, vsrc []float32) {
	dk, dv := l.dk, l.dv
	row := h*l.cells + l.cell(pos)
	switch c.cfg.Type {
	case F16:
		// F16C where the CPU has it: the Go conversion of one element
		// cost an encoder's pass 3 % of its time.
		quant.FP32ToFP16Row(l.k16[row*dk:(row+1)*dk], ksrc[:dk])
		quant.FP32ToFP16Row(l.v16[row*dv:(row+1)*dv], vsrc[:dv])
	case Int8:
		l.ks[row] = quantizeI8(l.k8[row*dk:(row+1)*dk], ksrc)
		l.vs[row] = quantizeI8(l.v8[row*dv:(row+1)*dv], vsrc)
	case Int4:
		var kr, vr [MaxHeadDim]float32
		kx, vx := kr[:dk], vr[:dv]
		copy(kx, ksrc)
		copy(vx, vsrc)
		hadamard(kx, l.rotK)
		hadamard(vx, l.rotV)
		kb, vb := q4RowBytes(dk), q4RowBytes(dv)
		quantizeQ4(l.k4[row*kb:(row+1)*kb], kx)
		quantizeQ4(l.v4[row*vb:(row+1)*vb], vx)
		if len(l.rec.pos) > 0 {
			c.storeRecent(l, h, pos, kx, vx)
		}
	}
}

// stored marks positions pos0 … pos0+n-1 of l stored, once every head's
// rows are written: the F16 slots' position tags (in order, so a slot
// ends up tagged with the newest position it holds) and the window.
func (c *Cache) stored(l *layer, pos0, n int) {
	if len(l.rec.pos) > 0 {
		for p := pos0; p < pos0+n; p++ {
			l.rec.pos[c.slot(p)] = int32(p)
		}
	}
	if last := pos0 + n - 1; last > l.hi {
		l.hi = last
		l.lo = max(l.lo, last-l.cells+1)
	}
}
