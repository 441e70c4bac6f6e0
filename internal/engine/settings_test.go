package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/lowmem/llm/internal/seq"
	"github.com/lowmem/llm/kv"
	"github.com/lowmem/llm/memplan"
)

// TestBuild: values in range are taken; every refused one is reported,
// joined, each wrapping seq.ErrInvalidOption, and leaves the base value.
func TestBuild(t *testing.T) {
	base := DefaultOptions()
	o, err := Build(base, func(s *Settings) {
		s.SetInt(&s.Context, "context size", 4096, 1, 1<<24)
		s.SetKVType(kv.Int8)
		s.SetShift(4)
		s.SetLimit(1 << 30)
		s.SetWeights(memplan.WeightsStreaming)
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.Context != 4096 || o.KVType != kv.Int8 || !o.Shift || o.Keep != 4 || o.Limit != 1<<30 || o.Weights != memplan.WeightsStreaming {
		t.Errorf("options not taken: %+v", o)
	}
	o, err = Build(base, func(s *Settings) {
		s.SetInt(&s.Threads, "threads", 0, 1, 1024)
		s.SetKVType(kv.Type(99))
		s.SetShift(-1)
		s.SetLimit(-1)
		s.SetWeights(memplan.WeightsMode(99))
	})
	if !errors.Is(err, seq.ErrInvalidOption) {
		t.Fatalf("err %v, want ErrInvalidOption", err)
	}
	for _, want := range []string{"threads 0 out of range", "KV type", "keep -1", "memory limit -1", "weights mode 99"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if o.Threads != base.Threads || o.KVType != base.KVType || o.Shift || o.Limit != 0 || o.Weights != base.Weights {
		t.Errorf("refused values were taken: %+v", o)
	}
}
