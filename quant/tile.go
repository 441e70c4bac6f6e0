package quant

import (
	"fmt"
	"io"
	"os"
	"strings"
)

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
// then, for types without assembly tile kernels, each assembly DotFunc in
// a loop ("dot-" and its name), then the assembly tile kernels, the
// fastest last.
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
	if len(arch) == 0 {
		for _, k := range ks[1:] {
			tiles = append(tiles, dotTile("dot-"+k.Name, t, k.Dot))
		}
	}
	return append(tiles, arch...)
}

// Tile returns the tile product chosen for rows of type t on this CPU (see
// TileChoice) and the largest tile it takes, or a nil function if t has no
// dot product. Look it up once per tensor.
func Tile(t Type) (f TileFunc, maxRows, maxCols int) {
	k, _ := TileChoice(t)
	return k.Tile, k.Rows, k.Cols
}

// TileChoice returns the tile kernel Tile uses for t, and why it was
// chosen: "LLM_KERNELS" when the environment variable LLM_KERNELS names a
// variant of t (a comma-separated list of type=name, e.g.
// "q4_0=avx512vnni-row,q6_k=avx512vnni"; read once), "cpu" when it is the
// first of the variants preferred for this CPU's model and level that the
// CPU runs, else "last" (the last of Tiles). The zero TileKernel means t
// has no dot product. The choice is fixed for the life of the process.
func TileChoice(t Type) (TileKernel, string) {
	ts := Tiles(t)
	if len(ts) == 0 {
		return TileKernel{}, ""
	}
	if name, ok := kernelEnv[t]; ok {
		for _, k := range ts {
			if k.Name == name {
				return k, "LLM_KERNELS"
			}
		}
	}
	for _, name := range tilePrefs(t) {
		for _, k := range ts {
			if k.Name == name {
				return k, "cpu"
			}
		}
	}
	return ts[len(ts)-1], "last"
}

// kernelEnv is LLM_KERNELS parsed: the variant named for each type.
// Entries that do not parse are ignored with a note on standard error.
var kernelEnv = parseKernelEnv(os.Getenv("LLM_KERNELS"), os.Stderr)

func parseKernelEnv(s string, errs io.Writer) map[Type]string {
	m := map[Type]string{}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		tn, name, ok := strings.Cut(f, "=")
		t, known := typeByName(tn)
		if !ok || !known || name == "" {
			fmt.Fprintf(errs, "LLM_KERNELS: %q is not type=variant (e.g. q4_0=avx512vnni-row); ignored\n", f)
			continue
		}
		m[t] = name
	}
	return m
}

// typeByName finds a type by its name as String spells it, any case.
func typeByName(s string) (Type, bool) {
	for t, tr := range typeTraits {
		if strings.EqualFold(tr.name, s) {
			return t, true
		}
	}
	return 0, false
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
