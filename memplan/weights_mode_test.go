package memplan

import (
	"testing"

	"github.com/lowmem/llm/internal/testutil"
)

// ParseWeightsMode reads back every name String gives, and refuses any
// other with ErrInvalid, naming the choices.
func TestParseWeightsMode(t *testing.T) {
	testutil.CheckParse(t, ParseWeightsMode, []WeightsMode{WeightsAuto, WeightsResident, WeightsStreaming}, ErrInvalid,
		`weights mode %q: want one of auto, resident, streaming: memplan: invalid argument`, "", "mmap", "Auto")
}
