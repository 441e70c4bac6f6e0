package callgrammar

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSweep asks the filter about every token of a vocabulary the
// size of Gemma 4's (262144 tokens of 1 to 8 random printable bytes), at
// a free-text value: what a sampler pays when the drawn token is refused.
func BenchmarkSweep(b *testing.B) {
	g, err := Compile(qwen, []Tool{weather})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	v := make(vocab, 262144)
	for i := range v {
		t := make([]byte, 1+r.IntN(8))
		for j := range t {
			t[j] = byte(' ' + r.IntN(95))
		}
		v[i] = t
	}
	f := NewFilter(v, g)
	if !f.m.Write([]byte(head + "<parameter=city>\nPar")) {
		b.Fatal("prefix refused")
	}
	for b.Loop() {
		for id := range v {
			f.Allowed(int32(id))
		}
	}
}
