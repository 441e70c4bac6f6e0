package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lowmem/llm/quant"
	"github.com/lowmem/llm/tensor"
)

// BenchmarkDecodeBandwidth is decode's matrix × vector product as a model
// runs it — two threads of one pool, one token, each type in the row
// layout and, where this CPU has X8 kernels for it, the repacked layout —
// over eight matrices of Llama-3.1-8B's FFN shape (14336 × 4096, 150–460
// MB in all), cycled so that every product reads its weights from memory.
// mulMB/s is the products' rate in weight bytes, and %read that rate as a
// share of the read bandwidth of the same pool (ReadTask, the faster of one
// and two streams a worker) over a buffer of as many bytes, the read
// passes interleaved with the products — one after every
// product, timed apart — so that both see the same machine: on a shared
// VM the bandwidth drifts within a second (25–64 GB/s on two threads seen
// here), and a share near 100 means the kernel is memory-bound whatever
// it was (issue #11 asks for 90 %).
//
//	go test -run XXX -bench DecodeBandwidth ./internal/ops/
func BenchmarkDecodeBandwidth(b *testing.B) {
	const rows, cols, mats = 14336, 4096, 8
	types := []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q5_K, quant.Q6_K,
		quant.Q2_K, quant.Q3_K, quant.IQ4_XS, quant.IQ4_NL, quant.MXFP4, quant.IQ3_S,
		quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ1_S, quant.IQ1_M, quant.TQ1_0, quant.TQ2_0}
	p := NewPool(2)
	defer p.Close()
	e := NewExec(p)
	r := rand.New(rand.NewPCG(11, 11))
	x := make([]float32, cols)
	fill(r, x)
	out := make([]float32, rows)
	for _, typ := range types {
		ms := bandwidthMatrices(b, r, typ, rows, cols, mats)
		layouts := []struct {
			name string
			ms   []*Matrix
		}{{"row", ms}}
		if _, ok := quant.X8(typ, cols); ok {
			x8 := make([]*Matrix, mats)
			for i, m := range ms {
				x8[i] = x8Of(b, m)
			}
			layouts = append(layouts, struct {
				name string
				ms   []*Matrix
			}{"x8", x8})
		}
		for _, l := range layouts {
			bytes := len(l.ms[0].weights())
			// The read passes go over a buffer of their own, as large as
			// the matrices: the rate is the same as over the weights, which
			// are then not held twice.
			reads := make([]*ReadTask, mats)
			for i := range reads {
				t, err := NewReadTask(onesF32(bytes/(64<<10)*(64<<10)), 64<<10)
				if err != nil {
					b.Fatal(err)
				}
				reads[i] = t
			}
			xq, err := e.Quantize(l.ms[0].VecType, x, cols, 1, make([]byte, l.ms[0].XRowBytes))
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%v/%s", typ, l.name), func(b *testing.B) {
				var mul, read time.Duration
				var readBytes int64
				i := 0
				for b.Loop() {
					t0 := time.Now()
					e.MatMul(l.ms[i%mats], xq, 1, out, rows)
					t1 := time.Now()
					// The faster of one and two streams a worker (see
					// ReadBandwidth).
					rt := reads[i%mats]
					best := time.Duration(math.MaxInt64)
					for _, streams := range []int{1, 2} {
						rt.Streams = streams
						t := time.Now()
						p.For(rt.Units(), 1, rt)
						best = min(best, time.Since(t))
					}
					read += best
					mul += t1.Sub(t0)
					readBytes += int64(rt.Bytes())
					i++
				}
				rate := float64(bytes) * float64(i) / mul.Seconds()
				readRate := float64(readBytes) / read.Seconds()
				b.ReportMetric(rate/1e6, "mulMB/s")
				b.ReportMetric(100*rate/readRate, "%read")
				b.ReportMetric(readRate/1e6, "readMB/s")
			})
		}
	}
}

// bandwidthMatrices returns n rows×cols matrices of typ. One matrix's
// worth of 64 random rows is quantized and copied down all of them: the
// kernels' speed does not depend on the values, and quantizing 400 MB of
// IQ3_S would take minutes.
func bandwidthMatrices(tb testing.TB, r *rand.Rand, typ quant.Type, rows, cols, n int) []*Matrix {
	tb.Helper()
	seed := randMatrix(tb, r, typ, 64, cols)
	rb := len(seed.T.Data) / 64
	ms := make([]*Matrix, n)
	for i := range ms {
		data := make([]byte, rows*rb)
		for off := 0; off < len(data); off += len(seed.T.Data) {
			copy(data[off:], seed.T.Data)
		}
		t, err := tensor.View("w", typ, []int{cols, rows}, data)
		if err != nil {
			tb.Fatal(err)
		}
		if ms[i], err = NewMatrix(t); err != nil {
			tb.Fatal(err)
		}
	}
	return ms
}
