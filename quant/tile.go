package quant

// TileFunc multiplies a tile of weight rows by a tile of activation columns:
// for r < rows and c < cols it sets
//
//	out[c*outStride+r] = dot(n, w[r*wStride:], x[c*xStride:])
//
// where each weight row holds n elements of the weight type and each
// activation column n elements of its VecDotType. rows and cols must not
// exceed the tile size Tile reports, n must be a whole number of blocks, and
// the strides at least the row sizes. The results equal those of the DotFunc
// for the type up to the order of float32 additions. A TileFunc never
// allocates.
//
// A tile reads each weight block once for all its columns and each
// activation block once for all its rows, and pays the call and the final
// horizontal sums once per tile rather than once per dot product.
type TileFunc func(n int, w []byte, wStride, rows int, x []byte, xStride, cols int, out []float32, outStride int)

// TileKernel is one implementation of a tile product for a weight type.
type TileKernel struct {
	Name string // "generic", "avx512vnni", …
	Type Type
	Rows int // largest rows a call may ask for
	Cols int // largest cols a call may ask for
	Tile TileFunc
}

// genericTileRows and genericTileCols are the tile size of the kernels built
// from a DotFunc; any size works, this one keeps callers' tiling uniform.
const (
	genericTileRows = 16
	genericTileCols = 4
)

// Tiles lists every tile implementation for t that runs on this CPU: first
// the pure-Go dot product in a loop, which tests compare the others with,
// then the portable pure-Go tile kernel (swar.go) where the type has one,
// then, for types without assembly tile kernels, the fastest DotFunc in a
// loop, then the assembly tile kernels, the fastest last.
func Tiles(t Type) []TileKernel {
	ks := Kernels(t)
	if len(ks) == 0 {
		return nil
	}
	tiles := []TileKernel{dotTile("generic", t, ks[0].Dot)}
	if k, ok := swarTile(t); ok {
		tiles = append(tiles, k)
	}
	arch := archTiles(t)
	if len(arch) == 0 && len(ks) > 1 {
		best := ks[len(ks)-1]
		tiles = append(tiles, dotTile("dot-"+best.Name, t, best.Dot))
	}
	return append(tiles, arch...)
}

// Tile returns the fastest tile product for rows of type t on this CPU and
// the largest tile it takes, or a nil function if t has no dot product.
// Look it up once per tensor.
func Tile(t Type) (f TileFunc, maxRows, maxCols int) {
	ts := Tiles(t)
	if len(ts) == 0 {
		return nil, 0, 0
	}
	k := ts[len(ts)-1]
	return k.Tile, k.Rows, k.Cols
}

// dotTile makes a tile kernel that calls dot once per output.
func dotTile(name string, t Type, dot DotFunc) TileKernel {
	l := tileLayoutOf(t)
	f := func(n int, w []byte, wStride, rows int, x []byte, xStride, cols int, out []float32, outStride int) {
		tileByDot(dot, l, n, w, wStride, rows, x, xStride, cols, out, outStride)
	}
	return TileKernel{Name: name, Type: t, Rows: genericTileRows, Cols: genericTileCols, Tile: f}
}

// tileLayout holds the block sizes of a weight type and its activation
// type, looked up once rather than per call.
type tileLayout struct {
	be, wb   int // elements and bytes per weight block
	xbe, xbb int // elements and bytes per activation block
}

func tileLayoutOf(t Type) tileLayout {
	vt := t.VecDotType()
	return tileLayout{be: t.BlockElems(), wb: t.BlockBytes(), xbe: vt.BlockElems(), xbb: vt.BlockBytes()}
}

// tileByDot computes a tile of any size one dot product at a time.
func tileByDot(dot DotFunc, l tileLayout, n int, w []byte, wStride, rows int, x []byte, xStride, cols int, out []float32, outStride int) {
	if rows <= 0 || cols <= 0 || l.be <= 0 || l.xbe <= 0 {
		return
	}
	rb := n / l.be * l.wb
	xb := n / l.xbe * l.xbb
	for c := 0; c < cols; c++ {
		xc := x[c*xStride : c*xStride+xb]
		o := out[c*outStride : c*outStride+rows]
		for r := range o {
			o[r] = dot(n, w[r*wStride:r*wStride+rb], xc)
		}
	}
}
