//go:build !linux || memfallback

package mem

import (
	"fmt"
	"runtime"
)

// populateFlag is zero where MAP_POPULATE does not exist; Map then touches
// every page instead.
const populateFlag = 0

// Advise checks its arguments and otherwise does nothing: memory advice is
// implemented on Linux only.
func (m *Mapping) Advise(off, length int64, a Advice) error {
	if !a.valid() {
		return fmt.Errorf("mem: advise %s: unknown advice %d", m.path, int(a))
	}
	return m.checkUsable("advise", off, length)
}

// Prefetch checks its arguments and otherwise does nothing: readahead
// requests are implemented on Linux only.
func (m *Mapping) Prefetch(off, length int64) error {
	return m.checkUsable("prefetch", off, length)
}

// Resident fails with ErrUnsupported: page cache residency is read with
// mincore on Linux only.
func (m *Mapping) Resident(off, length int64) (int64, error) {
	if err := m.checkRange("resident", off, length); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("mem: resident %s on %s: %w", m.path, runtime.GOOS, ErrUnsupported)
}

// Release checks its arguments and otherwise does nothing: without Linux's
// advice the pages stay until the system evicts them.
func (m *Mapping) Release(off, length int64) error {
	return m.checkUsable("release", off, length)
}

// Populate checks its arguments and otherwise does nothing here: the
// bytes are read when first touched (or are a heap copy already).
func (m *Mapping) Populate(off, length int64) error {
	return m.checkUsable("populate", off, length)
}

// checkUsable is all the stubs do: the range lies in the file and the
// mapping is open, as on Linux, so code tested here fails there alike.
func (m *Mapping) checkUsable(op string, off, length int64) error {
	if err := m.checkRange(op, off, length); err != nil {
		return err
	}
	if m.closed.Load() {
		return fmt.Errorf("mem: %s %s: %w", op, m.path, ErrClosed)
	}
	return nil
}
