package quant

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkDecode measures every tile variant as decode runs it: one
// column, 16-row calls down a matrix, on one thread. "dram" streams a
// matrix of LLM_BENCH_MB megabytes (default 128), far larger than the
// caches, so the prefetchers and memory decide; "l2" repeats a 256 KB
// matrix, so the kernel's own speed does. Bytes are weight bytes: the
// MB/s of dram is the bandwidth the kernel reaches. Compare variants with
// -count and benchstat; the sub-benchmarks of one round run one after the
// other, so load on a shared machine hits them alike. cpuMB/s is the same
// over the thread's CPU time, which time slices taken by other processes
// on a busy machine do not inflate.
func BenchmarkDecode(b *testing.B) {
	mb := benchMB()
	const n = 2048
	for _, typ := range []Type{Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, F16} {
		nb := n / typ.BlockElems()
		rb := nb * typ.BlockBytes()
		vt := typ.VecDotType()
		xb := n / vt.BlockElems() * vt.BlockBytes()
		r := newRand(uint64(typ))
		rows := (mb << 20) / rb / 16 * 16
		mat := make([]byte, rows*rb)
		for i := 0; i < rows; i += 16 {
			copy(mat[i*rb:], randBlocks(typ, nb*16, r, kindRandom))
		}
		x := randBlocks(vt, n/vt.BlockElems(), r, kindRandom)
		out := make([]float32, rows)
		for _, size := range benchSizes(rows, rb) {
			ks := Kernels(typ)
			tiles := append(Tiles(typ)[1:], dotTile("rowdot-"+ks[len(ks)-1].Name, typ, ks[len(ks)-1].Dot))
			for _, k := range tiles {
				b.Run(fmt.Sprintf("%v/%s/%s", typ, size.name, k.Name), func(b *testing.B) {
					benchStream(b, int64(size.rows*rb), func() {
						for r0 := 0; r0 < size.rows; r0 += 16 {
							k.Tile(n, mat[r0*rb:], rb, 16, x, xb, 1, out[r0:], rows)
						}
					})
				})
			}
		}
	}
}

// benchSize is a matrix the decode benchmarks stream: "dram", all rows
// of the LLM_BENCH_MB matrix, or "l2", its first 256 KB of rows.
type benchSize struct {
	name string
	rows int
}

// benchSizes is the two sizes of a matrix of rows rows of rb bytes.
func benchSizes(rows, rb int) []benchSize {
	return []benchSize{{"dram", rows}, {"l2", min(rows, (256<<10)/rb/16*16)}}
}

// benchMB is the size of a "dram" matrix: LLM_BENCH_MB megabytes, 128 by
// default.
func benchMB() int {
	if v, err := strconv.Atoi(os.Getenv("LLM_BENCH_MB")); err == nil && v > 0 {
		return v
	}
	return 128
}

// benchStream runs pass, which reads bytes of weights, on one locked
// thread, and reports cpuMB/s beside the MB/s (see BenchmarkDecode).
func benchStream(b *testing.B, bytes int64, pass func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(bytes)
	t0 := threadCPU()
	for b.Loop() {
		pass()
	}
	if t1 := threadCPU(); t0 >= 0 && t1 > t0 {
		b.ReportMetric(float64(b.N)*float64(bytes)/float64(t1-t0)*1e3, "cpuMB/s")
	}
}
