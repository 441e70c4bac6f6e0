//go:build unix

package llm_test

import (
	"os"
	"syscall"
)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// unblockFIFO opens path for writing without waiting for a reader, which
// releases a reader stuck opening it.
func unblockFIFO(path string) {
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}
