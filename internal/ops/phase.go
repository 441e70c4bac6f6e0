package ops

import (
	"context"
	"os"
	"runtime/pprof"
)

// A Phase names a part of a forward pass in CPU profiles. While an Exec
// runs a phase, the calling goroutine and every pool worker helping it
// carry the pprof label phase=<name>, so `go tool pprof -tags` splits a
// profile of a whole decode into its parts without instrumenting the
// kernels. Make each Phase once (NewPhase allocates); switching to it
// allocates nothing.
type Phase struct {
	name string
	ctx  context.Context
}

// NewPhase makes the label set phase=name.
func NewPhase(name string) *Phase {
	return &Phase{name: name, ctx: pprof.WithLabels(context.Background(), pprof.Labels("phase", name))}
}

// Name is the phase's label value.
func (ph *Phase) Name() string { return ph.name }

// The pool's own phases: a caller waiting at the end of a job for the
// workers still running their last piece of it, and a worker polling for
// the next job. Parked workers use no CPU and do not appear.
var (
	phaseBarrier = NewPhase("wait/barrier")
	phaseIdle    = NewPhase("wait/idle")
	phaseNone    = &Phase{ctx: context.Background()}
)

// ProfileLabelsEnv is the environment variable that turns phase labels on
// for every Exec made while it is "1": examples/bench -profile sets it.
// Labels are off by default because setting them replaces whatever pprof
// labels the calling goroutine carried.
const ProfileLabelsEnv = "LLM_PROFILE_LABELS"

func labelsFromEnv() bool { return os.Getenv(ProfileLabelsEnv) == "1" }

// SetProfileLabels turns phase labels on or off for this Exec.
func (e *Exec) SetProfileLabels(on bool) { e.labels = on }

// Phase makes ph the current phase: the calling goroutine is labelled with
// it now, and the workers of every job this Exec hands the pool until the
// next call. Without labels turned on it does nothing.
func (e *Exec) Phase(ph *Phase) {
	if !e.labels {
		return
	}
	e.phase = ph
	pprof.SetGoroutineLabels(ph.ctx)
}

// EndPhases removes the phase label from the calling goroutine: what it
// does after a forward pass is no phase of it.
func (e *Exec) EndPhases() {
	if !e.labels {
		return
	}
	e.phase = nil
	pprof.SetGoroutineLabels(phaseNone.ctx)
}

// setLabel labels the calling goroutine with ph unless ph is nil (labels
// off).
func setLabel(ph *Phase) {
	if ph != nil {
		pprof.SetGoroutineLabels(ph.ctx)
	}
}

// CurrentPhase is the phase the last Phase call set (nil while labels are
// off), for code that labels a step of its own and then restores it.
func (e *Exec) CurrentPhase() *Phase { return e.phase }
