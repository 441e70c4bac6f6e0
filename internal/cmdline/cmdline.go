package cmdline

import (
	"flag"
	"fmt"
	"io"
	"os"
)

// FlagSet is the flag set of a command that reports on stderr and returns
// parse errors instead of exiting, so that its run function can be tested.
func FlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// Exit ends command name with err: nil returns, so that main ends
// normally; otherwise err goes to stderr after the name and the process
// exits with status 1.
func Exit(name string, err error) {
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, name+":", err)
	os.Exit(1)
}

// Count formats a count the way model sizes are named: 8.03 B, with
// digits decimals below a billion (135.2 M with 1, 1.44 M with 2).
func Count(n int64, digits int) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f B", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.*f M", digits, float64(n)/1e6)
	}
	return fmt.Sprintf("%.*f K", digits, float64(n)/1e3)
}
