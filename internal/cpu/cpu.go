package cpu

import (
	"fmt"
	"os"
	"strings"
)

// Level is an instruction-set level that kernels are written for. The
// levels of one architecture are ordered: a CPU at a level has every
// level below it. Generic (pure Go) runs everywhere.
type Level int

// The levels. amd64: AVX2 means AVX2, FMA and F16C; AVX512 adds AVX-512
// F, BW and VL; AVX512VNNI adds VPDPBUSD/VPDPWSSD; AVX512VBMI adds VBMI
// (VPERMB) and GFNI.
const (
	Generic Level = iota
	AVX2
	AVX512
	AVX512VNNI
	AVX512VBMI
)

var names = [...]string{"generic", "avx2", "avx512", "avx512vnni", "avx512vbmi"}

// String returns the level's name as LLM_CPU spells it.
func (l Level) String() string {
	if l >= 0 && int(l) < len(names) {
		return names[l]
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel returns the level named s (as String spells it, any case).
func ParseLevel(s string) (Level, error) {
	for i, n := range names {
		if strings.EqualFold(s, n) {
			return Level(i), nil
		}
	}
	return Generic, fmt.Errorf("cpu: unknown level %q (want one of %s)", s, strings.Join(names[:], ", "))
}

// detected is the highest level this CPU and OS support; max is what the
// process uses (detected, or lower under LLM_CPU). Both are set once at
// init and never change.
var detected, max = levels(archLevel(), os.Getenv("LLM_CPU"))

// levels caps the CPU's level by the LLM_CPU value env. An unknown value
// selects Generic, the level that is correct everywhere, and says so on
// standard error: a typo must not silently test the fast path.
func levels(cpu Level, env string) (detected, use Level) {
	if env == "" {
		return cpu, cpu
	}
	l, err := ParseLevel(env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "LLM_CPU: %v; using generic\n", err)
		return cpu, Generic
	}
	return cpu, min(l, cpu)
}

// Has reports whether kernels of level l may run: the CPU supports l and
// LLM_CPU does not cap below it.
func Has(l Level) bool { return l <= max }

// Max returns the highest level in use.
func Max() Level { return max }

// Detected returns the highest level the CPU supports, whatever LLM_CPU
// says.
func Detected() Level { return detected }
