package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
)

// profileLabelsEnv turns on the library's per-phase pprof labels (the
// goroutines running a forward pass carry phase=<name>) for sessions made
// after it is set. Labels replace a goroutine's own, so they are off
// unless asked for.
const profileLabelsEnv = "LLM_PROFILE_LABELS"

// profiler writes a CPU profile of the measured runs of one test.
type profiler struct {
	path string
	f    *os.File
}

// profilePath is where test's profile goes: path itself when only one
// test runs, else path with ".pp" or ".tg" appended.
func (c *config) profilePath(test string) string {
	if c.pp > 0 && c.tg > 0 {
		return c.profile + "." + test
	}
	return c.profile
}

func startProfile(path string) (*profiler, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return &profiler{path: path, f: f}, nil
}

func (p *profiler) stop() error {
	pprof.StopCPUProfile()
	return p.f.Close()
}

// phaseShare is the CPU time the profile attributes to one phase.
type phaseShare struct {
	Phase   string  `json:"phase"`
	Seconds float64 `json:"cpu_seconds"`
	Share   float64 `json:"share"`        // of all the profile's CPU time
	PerTok  float64 `json:"ms_per_token"` // CPU milliseconds per token of the test
}

// phaseBreakdown reads a CPU profile and sums its CPU time by the value of
// the "phase" label, largest first; samples without one are "(other)":
// the runtime, the garbage collector, the benchmark itself. tokens is how
// many tokens the profiled runs evaluated.
func phaseBreakdown(path string, tokens int) ([]phaseShare, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	samples, strs, err := decodeProfile(data)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	byPhase := map[string]int64{}
	var total int64
	for _, s := range samples {
		name := "(other)"
		for _, l := range s.labels {
			if l[0] < int64(len(strs)) && l[1] < int64(len(strs)) && strs[l[0]] == "phase" {
				name = strs[l[1]]
			}
		}
		byPhase[name] += s.value
		total += s.value
	}
	out := []phaseShare{} // not nil: a profile without samples still prints a table
	for name, ns := range byPhase {
		ps := phaseShare{Phase: name, Seconds: float64(ns) / 1e9}
		if total > 0 {
			ps.Share = float64(ns) / float64(total)
		}
		if tokens > 0 {
			ps.PerTok = float64(ns) / 1e6 / float64(tokens)
		}
		out = append(out, ps)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seconds != out[j].Seconds {
			return out[i].Seconds > out[j].Seconds
		}
		return out[i].Phase < out[j].Phase
	})
	return out, nil
}

func printBreakdown(w io.Writer, test string, path string, ps []phaseShare) {
	fmt.Fprintf(w, "\n%s CPU profile %s, by phase (go tool pprof -tags %s):\n", test, path, path)
	fmt.Fprintf(w, "| %-16s | %8s | %6s | %10s |\n", "phase", "CPU s", "share", "CPU ms/tok")
	fmt.Fprintf(w, "| %s | %s: | %s: | %s: |\n", strings.Repeat("-", 16), strings.Repeat("-", 7), strings.Repeat("-", 5), strings.Repeat("-", 9))
	for _, p := range ps {
		fmt.Fprintf(w, "| %-16s | %8.3f | %5.1f%% | %10.3f |\n", p.Phase, p.Seconds, 100*p.Share, p.PerTok)
	}
}

// sample is one profile sample: its CPU nanoseconds and labels (string
// table indices of key and value).
type sample struct {
	value  int64
	labels [][2]int64
}

// decodeProfile reads the samples and the string table of an
// uncompressed profile.proto message — only the fields the breakdown
// needs, so that the command depends on nothing but the standard library.
func decodeProfile(b []byte) ([]sample, []string, error) {
	var samples []sample
	var strs []string
	err := fields(b, func(num int, wire int, v uint64, sub []byte) error {
		switch {
		case num == 2 && wire == 2: // Sample
			s, err := decodeSample(sub)
			if err != nil {
				return err
			}
			samples = append(samples, s)
		case num == 6 && wire == 2: // string_table
			strs = append(strs, string(sub))
		}
		return nil
	})
	return samples, strs, err
}

func decodeSample(b []byte) (sample, error) {
	var s sample
	var values []int64
	err := fields(b, func(num int, wire int, v uint64, sub []byte) error {
		switch num {
		case 2: // value: the last one is CPU nanoseconds
			if wire == 0 {
				values = append(values, int64(v))
				return nil
			}
			for len(sub) > 0 {
				x, n := binary.Uvarint(sub)
				if n <= 0 {
					return errBadProfile
				}
				values = append(values, int64(x))
				sub = sub[n:]
			}
		case 3: // label
			var l [2]int64
			err := fields(sub, func(num int, wire int, v uint64, _ []byte) error {
				if wire == 0 && (num == 1 || num == 2) {
					l[num-1] = int64(v)
				}
				return nil
			})
			if err != nil {
				return err
			}
			s.labels = append(s.labels, l)
		}
		return nil
	})
	if len(values) > 0 {
		s.value = values[len(values)-1]
	}
	return s, err
}

var errBadProfile = errors.New("malformed profile")

// fields calls fn for each field of a protobuf message: varints in v,
// length-delimited fields in sub; fixed-width fields are skipped.
func fields(b []byte, fn func(num int, wire int, v uint64, sub []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errBadProfile
		}
		b = b[n:]
		num, wire := int(key>>3), int(key&7)
		var v uint64
		var sub []byte
		switch wire {
		case 0:
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return errBadProfile
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return errBadProfile
			}
			b = b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errBadProfile
			}
			sub, b = b[n:n+int(l)], b[n+int(l):]
		case 5:
			if len(b) < 4 {
				return errBadProfile
			}
			b = b[4:]
		default:
			return errBadProfile
		}
		if err := fn(num, wire, v, sub); err != nil {
			return err
		}
	}
	return nil
}
