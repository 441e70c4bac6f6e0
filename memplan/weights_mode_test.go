package memplan

import (
	"errors"
	"testing"
)

// ParseWeightsMode reads back every name String gives, and refuses any
// other with ErrInvalid, naming the choices.
func TestParseWeightsMode(t *testing.T) {
	for _, w := range []WeightsMode{WeightsAuto, WeightsResident, WeightsStreaming} {
		if got, err := ParseWeightsMode(w.String()); got != w || err != nil {
			t.Errorf("ParseWeightsMode(%q) = %v, %v", w.String(), got, err)
		}
	}
	for _, s := range []string{"", "mmap", "Auto"} {
		_, err := ParseWeightsMode(s)
		if !errors.Is(err, ErrInvalid) || err.Error() != `weights mode "`+s+`": want one of auto, resident, streaming: memplan: invalid argument` {
			t.Errorf("ParseWeightsMode(%q): %v", s, err)
		}
	}
}
