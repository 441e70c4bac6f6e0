//go:build linux

package mem

import (
	"testing"

	"golang.org/x/sys/unix"
)

// growRSS maps and touches n bytes of anonymous memory outside the Go heap,
// so RSS rises by n now and falls by n when the returned func unmaps it.
func growRSS(t *testing.T, n int) (release func()) {
	t.Helper()
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += int(pageSize) {
		b[i] = 1
	}
	return func() {
		if err := unix.Munmap(b); err != nil {
			t.Fatal(err)
		}
	}
}
