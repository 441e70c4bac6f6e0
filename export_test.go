package llm

import "fmt"

// StopWatch stops m's memory-pressure watcher, whose polls allocate on
// their own goroutine, so that tests can count a decode step's allocations.
func StopWatch(m *Model) { m.e.Weights.StopWatch() }

// InjectPanic makes every job of m's forward passes panic in its range
// number part (whichever goroutine runs it: the caller or a worker); -1
// stops it. Set it only while nothing runs on m.
func InjectPanic(m *Model, part int) {
	if part < 0 {
		m.e.Pool.SetTestHook(nil)
		return
	}
	m.e.Pool.SetTestHook(func(w int) {
		if w == part {
			panic(fmt.Sprintf("injected test panic in part %d", part))
		}
	})
}
