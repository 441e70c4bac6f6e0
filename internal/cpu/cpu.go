package cpu

import (
	"fmt"
	"os"
	"strings"

	"github.com/lowmem/llm/internal/enum"
)

// Level is an instruction-set level that kernels are written for. The
// levels of one architecture are ordered: a CPU at a level has every
// level below it. Generic (pure Go) runs everywhere.
type Level int

// The levels. amd64: AVX2 means AVX2, FMA and F16C; AVX512 adds AVX-512
// F, BW and VL; AVX512VNNI adds VPDPBUSD/VPDPWSSD; AVX512VBMI adds VBMI
// (VPERMB) and GFNI. arm64: NEON is ARMv8.0 Advanced SIMD, which every
// arm64 CPU has; DotProd adds SDOT/UDOT (FEAT_DotProd: Cortex-A55/A76 and
// later, Neoverse N1, Apple M1); I8MM adds SMMLA (FEAT_I8MM: Cortex-A510/
// A710, Neoverse N2/V1, Apple M2). Each architecture's levels are ordered
// among themselves; Generic is below all of them.
const (
	Generic Level = iota
	AVX2
	AVX512
	AVX512VNNI
	AVX512VBMI
	NEON
	DotProd
	I8MM
)

var names = [...]string{"generic", "avx2", "avx512", "avx512vnni", "avx512vbmi", "neon", "dotprod", "i8mm"}

// arch says which architecture's kernels a level is for ("" for Generic).
func (l Level) arch() string {
	switch {
	case l >= AVX2 && l <= AVX512VBMI:
		return "amd64"
	case l >= NEON && l <= I8MM:
		return "arm64"
	}
	return ""
}

// String returns the level's name as LLM_CPU spells it.
func (l Level) String() string { return enum.Name(l, names[:], "Level") }

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

// levels caps the CPU's level by the LLM_CPU value env. An unknown value,
// or a level of another architecture, selects Generic, the level that is
// correct everywhere, and says so on standard error: a typo must not
// silently test the fast path.
func levels(cpu Level, env string) (detected, use Level) {
	if env == "" {
		return cpu, cpu
	}
	l, err := ParseLevel(env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "LLM_CPU: %v; using generic\n", err)
		return cpu, Generic
	}
	if l.arch() != "" && cpu.arch() != "" && l.arch() != cpu.arch() {
		fmt.Fprintf(os.Stderr, "LLM_CPU: %s is a level of %s, this CPU's levels are %s's; using generic\n", l, l.arch(), cpu.arch())
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
