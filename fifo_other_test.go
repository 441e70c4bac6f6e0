//go:build !unix

package llm_test

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }

func unblockFIFO(string) {}
