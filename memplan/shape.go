package memplan

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lowmem/llm/expertcache"
	"github.com/lowmem/llm/internal/gguf"
	"github.com/lowmem/llm/mem"
	"github.com/lowmem/llm/model"
	"github.com/lowmem/llm/quant"
)

// Shape is what planning needs from a GGUF file: the model's configuration
// and the bytes of its tensors, grouped as residency treats them.
type Shape struct {
	Config     model.Config // validated against the tensors (model.Check)
	Vocab      int          // rows of token_embd
	FileBytes  int64        // size of the file
	LayerBytes []int64      // tensor bytes of each block
	// BlockRanges is where each block lies in the file: from its first
	// tensor's start to its last tensor's end (model.Layer's Start, End).
	BlockRanges []mem.Range
	// ExpertBytes is the bytes of each block's expert tensors
	// (ffn_{gate,up,down}_exps), all zero for a dense model.
	ExpertBytes []int64
	// ExpertFloor is the least budget an expert cache of the model's
	// experts runs in (expertcache.Sizing.MinBudget), 0 for a dense model.
	ExpertFloor int64
	// expertLayout is where the experts lie, for sizing a cache.
	expertLayout expertcache.Layout

	EmbedBytes int64 // token_embd
	EmbedRow   int64 // bytes of one token_embd row
	OutBytes   int64 // output.weight (0 when tied to token_embd)
	// PerLayerBytes and PerLayerRow are Gemma 3n's and Gemma 4's per_layer_token_embd
	// and one row of it (0 for other models): read a token's row at a
	// time, as an untied token_embd is, so only the rows of the tokens
	// seen count as resident.
	PerLayerBytes, PerLayerRow int64
	OtherBytes                 int64      // every other tensor (norms, rope_freqs)
	MaxXRow                    int        // widest quantized activation row
	VocabBytes                 int64      // bytes of token strings
	Merges                     int        // BPE merges
	Params                     int64      // number of weights
	FileType                   quant.Type // the type holding the most bytes among matrices
	HeapBytes                  int64      // vectors the model copies to the heap (model.HeapBytes)
	// Repack is where the matrices a resident model may hold in the X8
	// layout lie in the file (model.RepackableTensor), in file order.
	Repack []RepackRange
	// SkippedBytes is the tensors of the blocks after the Config.Layers
	// that run (a glm4moe's NextN blocks), of a vision or audio tower
	// in the file (model.SkippedRanges, model.TowerTensor) and those
	// passed over (model.PassedOver: loaded by llama.cpp, read by no
	// graph), which nothing reads and a resident model does not hold.
	SkippedBytes int64
}

// ReadShape reads the header of the GGUF file at path (not its weights)
// and returns its Shape. A path that is not a regular file, or an empty
// one, is refused before it is read (mem.OpenFile) with an error wrapping
// model.ErrBadModel.
func ReadShape(path string) (*Shape, error) {
	f, size, err := mem.OpenFile(path)
	if errors.Is(err, mem.ErrNotRegular) || errors.Is(err, mem.ErrEmptyFile) {
		return nil, fmt.Errorf("%w: %w", err, model.ErrBadModel)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g, err := gguf.Read(f, size)
	if err != nil {
		return nil, err
	}
	return ShapeOf(g, size)
}

// ShapeOf is the Shape of the parsed GGUF file g of size bytes. It
// validates the file completely first (model.Check): errors wrap
// model.ErrBadModel or model.ErrUnsupportedArch.
func ShapeOf(g *gguf.File, size int64) (*Shape, error) {
	// Check, not just the configuration: every size below is trusted only
	// once the tensors agree with the metadata.
	cfg, err := model.Check(g)
	if err != nil {
		return nil, err
	}
	heap, err := model.HeapBytes(g)
	if err != nil {
		return nil, err
	}
	s := &Shape{Config: cfg, FileBytes: size, LayerBytes: make([]int64, cfg.Layers), HeapBytes: heap,
		BlockRanges: make([]mem.Range, cfg.Layers), ExpertBytes: make([]int64, cfg.Layers)}
	blockEnd := make([]int64, cfg.Layers)
	matrixBytes := map[quant.Type]int64{}
	for _, t := range g.Tensors {
		if model.TowerTensor(t.Name) || model.PassedOver(t.Name, &cfg) { // a vision or audio tower, or a tensor passed over: never read
			s.SkippedBytes += t.Size
			continue
		}
		p := int64(1)
		for _, d := range t.Dims {
			p *= d
		}
		s.Params += p
		if len(t.Dims) >= 2 { // matrices, and the 3-D tensors of experts
			matrixBytes[t.Type] += t.Size
			// bert's position and token-type embeddings (F32) are rows
			// added to the input, multiplied by nothing (addedRows).
			if rb, err := t.Type.VecDotType().RowBytes(t.Dims[0]); err == nil && !addedRows[t.Name] && !copiedRows(t.Name) {
				s.MaxXRow = max(s.MaxXRow, int(rb))
			}
		}
		var il int
		switch {
		case t.Name == "token_embd.weight":
			s.EmbedBytes = t.Size
			if len(t.Dims) == 2 && t.Dims[1] > 0 {
				s.Vocab = int(t.Dims[1])
				s.EmbedRow = t.Size / t.Dims[1]
			}
		case t.Name == "per_layer_token_embd.weight":
			s.PerLayerBytes = t.Size
			if len(t.Dims) == 2 && t.Dims[1] > 0 {
				s.PerLayerRow = t.Size / t.Dims[1]
			}
		case t.Name == "output.weight":
			s.OutBytes = t.Size
			s.addRepack(&cfg, t)
		case strings.HasPrefix(t.Name, "blk.") && scanLayer(t.Name, &il) && il < cfg.Layers:
			if t.Size == 0 {
				break // an empty tensor's offset is no byte of the block
			}
			if s.LayerBytes[il] == 0 || t.Offset < s.BlockRanges[il].Off {
				s.BlockRanges[il].Off = t.Offset
			}
			blockEnd[il] = max(blockEnd[il], t.Offset+t.Size)
			s.LayerBytes[il] += t.Size
			if IsExpertTensor(t.Name) {
				s.ExpertBytes[il] += t.Size
			}
			s.addRepack(&cfg, t)
		case strings.HasPrefix(t.Name, "blk.") && scanLayer(t.Name, &il):
			s.SkippedBytes += t.Size
		default:
			s.OtherBytes += t.Size
		}
	}
	for il := range s.BlockRanges {
		s.BlockRanges[il].Len = blockEnd[il] - s.BlockRanges[il].Off
	}
	if s.Experts() > 0 {
		l := expertcache.FileLayout(g, cfg.Layers)
		s.expertLayout = l
		// The floor is the file layout's: a cache falls back to that layout
		// whenever its budget does not hold every expert repacked
		// (expertcache.WithRepack).
		if sz, err := expertcache.Size(l, 0, expertcache.WithRepack(false)); sz.MinBudget > 0 {
			s.ExpertFloor = sz.MinBudget
		} else if err != nil && !errors.Is(err, expertcache.ErrBudget) {
			return nil, fmt.Errorf("%w: %w", err, model.ErrBadModel)
		}
	}
	slices.SortFunc(s.Repack, func(a, b RepackRange) int { return cmp.Compare(a.Off, b.Off) })
	if s.Vocab == 0 {
		return nil, fmt.Errorf("model: token_embd.weight missing: %w", model.ErrBadModel)
	}
	s.FileType = quant.F32
	best := int64(-1)
	for t, n := range matrixBytes {
		if n > best || (n == best && t < s.FileType) {
			s.FileType, best = t, n
		}
	}
	toks, _ := g.Strings("tokenizer.ggml.tokens")
	for _, t := range toks {
		s.VocabBytes += int64(len(t))
	}
	merges, _ := g.Strings("tokenizer.ggml.merges")
	s.Merges = len(merges)
	return s, nil
}

// addedRows names the 2-D tensors the forward pass multiplies no
// activations with: rows it adds to the embeddings (bert's position and
// token-type embeddings, Gemma 3n's per-layer token embeddings), and the dense projection an embedding model
// applies to its pooled vector apart from the pass (model.Project).
var addedRows = map[string]bool{"position_embd.weight": true, "token_types.weight": true,
	"dense_2.weight": true, "dense_3.weight": true, "per_layer_token_embd.weight": true}

// copiedRows reports whether name is a block's 2-D tensor the loader
// copies to float32 rows rather than multiplying activations with: a
// convolution kernel (lfm2's shortconv.conv, granitehybrid's ssm_conv1d),
// Mamba-2's A, D and grouped norm weights, the experts' biases
// (gpt-oss), Gemma 3n's AltUp router and coefficients, and an RWKV
// block's token-shift mixes and RWKV-6's time_mix_first (the mixes of
// more than two dims, which the F32 ones' rows would otherwise count as
// wider than a model's activations), computed with in Go: no activation
// row is quantized for them.
func copiedRows(name string) bool {
	for _, s := range []string{".shortconv.conv.weight", ".ssm_conv1d.weight", ".ssm_a", ".ssm_d", ".ssm_norm.weight", ".bias",
		".altup_router.weight", ".altup_predict_coef.weight", ".altup_correct_coef.weight",
		".time_mix_lerp_fused.weight", ".time_mix_lerp_x.weight", ".channel_mix_lerp_k.weight", ".channel_mix_lerp_r.weight",
		".time_mix_first.weight"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// RepackRange is a matrix a resident model may hold in the X8 layout: its
// range in the file and its size repacked (X8, which for Q4_K and Q5_K
// exceeds Len by 32 bytes a group's super-block).
type RepackRange struct {
	mem.Range
	X8 int64
}

// addRepack notes t's range when a resident model may repack it.
func (s *Shape) addRepack(c *model.Config, t gguf.TensorInfo) {
	if t.Size > 0 && model.RepackableTensor(c, t.Name, t.Type, t.Dims) {
		s.Repack = append(s.Repack, RepackRange{mem.Range{Off: t.Offset, Len: t.Size}, model.RepackedTensorBytes(t.Type, t.Dims)})
	}
}

// IsExpertTensor reports whether the tensor named name holds the experts
// of a mixture-of-experts block (blk.N.ffn_gate_exps.weight and the like),
// which an expert cache reads instead of the mapping. Their biases
// (gpt-oss's ffn_gate_exps.bias …) are not: the model copies them at load,
// as it does every vector.
func IsExpertTensor(name string) bool {
	return strings.HasPrefix(name, "blk.") && strings.Contains(name, "_exps.") && strings.HasSuffix(name, ".weight")
}

// Experts is the bytes of every block's expert tensors: 0 for a dense
// model.
func (s *Shape) Experts() int64 {
	var n int64
	for _, b := range s.ExpertBytes {
		n += b
	}
	return n
}

// scanLayer parses the block number of a tensor named "blk.<i>.*".
func scanLayer(name string, il *int) bool {
	_, err := fmt.Sscanf(name, "blk.%d.", il)
	return err == nil && *il >= 0 // "blk.-1.x" parses, but is no block
}

// ResidentWeights is the page cache a resident model fills: the whole file
// except the blocks no pass runs (SkippedBytes), the embedding rows no
// token touches (when the embedding is not also the output matrix, or
// there is none: an encoder) and the rows of
// Gemma 3n's per-layer embeddings no token touches (most of its file).
// A session is assumed to touch embedRowsPerRun distinct tokens, each row
// in whole pages.
func (s *Shape) ResidentWeights() int64 {
	untouched := func(bytes, row int64) int64 {
		return bytes - min(bytes, int64(embedRowsPerRun)*roundTo(row, pageRound))
	}
	n := s.FileBytes - untouched(s.PerLayerBytes, s.PerLayerRow) - s.SkippedBytes
	if s.OutBytes == 0 && !s.Config.EmbeddingOnly() {
		return n
	}
	return n - untouched(s.EmbedBytes, s.EmbedRow)
}

func roundTo(n, a int64) int64 { return (n + a - 1) / a * a }

// BlockMemory is the memory block il holds when resident: the whole
// pages its file range touches.
func (s *Shape) BlockMemory(il int) int64 {
	r := s.BlockRanges[il]
	if r.Len <= 0 {
		return 0
	}
	start := r.Off &^ (pageRound - 1)
	return roundTo(r.Off+r.Len, pageRound) - start
}

// ReadBuffers is the memory the blocks read from disk are read into:
// DiskBuffers buffers of the largest block's span, rounded out to 4096
// bytes (what mem.NewRangeReader allocates).
func (s *Shape) ReadBuffers() int64 {
	return DiskBuffers * mem.SlotBytes(s.BlockRanges)
}

// FixedWeights is the weight memory that stays resident whatever is read
// from disk: everything the resident model holds outside its blocks (the
// header, the output matrix and the embedding rows in use).
func (s *Shape) FixedWeights() int64 {
	var blocks int64
	for il := range s.BlockRanges {
		blocks += s.BlockMemory(il)
	}
	return max(s.ResidentWeights()-blocks, 0)
}

// MinStreamingWeights is the least weight memory WeightsStreaming can run
// in: every block read from disk, beside the fixed weights and the read
// buffers.
func (s *Shape) MinStreamingWeights() int64 {
	return s.FixedWeights() + s.ReadBuffers()
}

// ExpertsX8 reports whether this CPU has X8 kernels for some of the
// experts' matrices (expertcache.Layout.Repack), so a cache can repack
// them.
func (s *Shape) ExpertsX8() bool {
	for _, r := range s.expertLayout.Repack {
		if r != [3]int64{} {
			return true
		}
	}
	return false
}

// RepackedExperts reports whether an expert cache of budget bytes holds
// its experts in the X8 layout when asked to repack (expertcache.Size's
// Sizing.Repacked, false when no matrix has an X8 kernel).
func (s *Shape) RepackedExperts(budget int64, repack bool) bool {
	if !repack {
		return false
	}
	sz, err := expertcache.Size(s.expertLayout, budget, expertcache.WithRepack(true))
	return err == nil && sz.Repacked
}
