package quant

import (
	"fmt"
	"syscall"
	"testing"
)

// guarded returns a copy of b that ends where an inaccessible page
// begins, so that a kernel reading a byte past it faults.
func guarded(t *testing.T, b []byte) []byte {
	t.Helper()
	page := syscall.Getpagesize()
	size := (len(b)+page-1)/page*page + page
	m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(m) })
	if err := syscall.Mprotect(m[size-page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	g := m[size-page-len(b) : size-page : size-page]
	copy(g, b)
	return g
}

// TestX8ReadsNoFurther runs every X8 kernel this CPU has (MatVec and
// MatVecN) on weights and activations that end at an inaccessible page,
// at widths whose blocks past the last eight the kernels take one at a
// time: a read past the row's last block, the weights' or the
// activations', faults. The results equal the twin's bit for bit.
func TestX8ReadsNoFurther(t *testing.T) {
	for _, typ := range []Type{Q4_0, Q8_0, IQ4_NL, MXFP4, Q5_0} {
		twinOf := matVecX8Go
		if typ == IQ4_NL || typ == MXFP4 || typ == Q5_0 {
			twinOf = matVecX8LowGo
		}
		for _, n := range []int{32, 96, 288, 2880} {
			t.Run(fmt.Sprintf("%v/%d", typ, n), func(t *testing.T) {
				const rows, tokens = 16, 9
				nb := n / QK
				vt := typ.VecDotType()
				xRow := nb * vt.BlockBytes()
				r := newRand(uint64(n) ^ uint64(typ)<<20)
				w := randBlocks(typ, rows*nb, r, kindRandom)
				rp := make([]byte, X8Bytes(typ, rows, n))
				if err := RepackX8(typ, rp, w, rows, n); err != nil {
					t.Fatal(err)
				}
				rp = guarded(t, rp)
				xs := guarded(t, randBlocks(vt, tokens*nb, r, kindRandom))
				twin := make([]float32, tokens*rows)
				for k := 0; k < tokens; k++ {
					twinOf(typ, n, rp, rows/8, xs[k*xRow:(k+1)*xRow], twin[k*rows:(k+1)*rows])
				}
				for _, k := range x8Variants(typ) {
					got := make([]float32, tokens*rows)
					// The last token's row, the activations' last bytes.
					k.MatVec(n, rp, rows/8, xs[(tokens-1)*xRow:], got[(tokens-1)*rows:])
					for i := (tokens - 1) * rows; i < len(got); i++ {
						if got[i] != twin[i] {
							t.Errorf("%s MatVec row %d: %v, twin %v", k.Name, i%rows, got[i], twin[i])
						}
					}
					if k.MatVecN == nil {
						continue
					}
					k.MatVecN(n, rp, rows/8, xs, xRow, tokens, got, rows)
					for i := range got {
						if got[i] != twin[i] {
							t.Errorf("%s MatVecN token %d row %d: %v, twin %v", k.Name, i/rows, i%rows, got[i], twin[i])
						}
					}
				}
			})
		}
	}
}
