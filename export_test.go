package llm

// StopWatch stops m's memory-pressure watcher, whose polls allocate on
// their own goroutine, so that tests can count a decode step's allocations.
func StopWatch(m *Model) { m.e.Weights.StopWatch() }
