//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	// Only the test uses internal packages.
	"github.com/lowmem/llm/internal/llmtest"
	"github.com/lowmem/llm/internal/testutil"
)

// terminal is the chat binary running on a pseudo-terminal, as in a
// terminal window: keys are written to the master side, the screen is
// read from it. Reading happens only while the test waits for text, so
// that an answer blocks on a full terminal while the test does other
// things, as on a terminal nobody reads.
type terminal struct {
	t      *testing.T
	master *os.File
	cmd    *exec.Cmd
	chunks chan string
	screen strings.Builder // everything read so far
	seen   int             // screen offset after the last expect
}

func startTerminal(t *testing.T, bin string, args ...string) *terminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	// A session of its own with the terminal as controlling terminal, so
	// Ctrl-C typed on it interrupts the program's process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	term := &terminal{t: t, master: master, cmd: cmd, chunks: make(chan string)}
	go func() {
		defer close(term.chunks)
		buf := make([]byte, 256)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				term.chunks <- string(buf[:n])
			}
			if err != nil { // EIO once the program has exited
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		master.Close()
	})
	return term
}

// typeKeys writes keys as typed ("\r" is Enter, "\x03" Ctrl-C, "\x04" Ctrl-D).
func (term *terminal) typeKeys(keys string) {
	term.t.Helper()
	if _, err := term.master.WriteString(keys); err != nil {
		term.t.Fatal(err)
	}
}

// expect reads the screen until re matches what appeared since the last
// expect, and returns the match.
func (term *terminal) expect(re string) []string {
	term.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(20 * time.Second)
	for {
		if m := rx.FindStringSubmatchIndex(term.screen.String()[term.seen:]); m != nil {
			s := term.screen.String()[term.seen:]
			out := make([]string, len(m)/2)
			for i := range out {
				if m[2*i] >= 0 {
					out[i] = s[m[2*i]:m[2*i+1]]
				}
			}
			term.seen += m[1]
			return out
		}
		select {
		case c, ok := <-term.chunks:
			if !ok {
				term.t.Fatalf("the program exited before printing %q; screen:\n%s", re, term.screen.String())
			}
			term.screen.WriteString(c)
		case <-deadline:
			term.t.Fatalf("no %q on the screen in 20s; screen:\n%s", re, term.screen.String())
		}
	}
}

// exited waits for the program to end and reports its error.
func (term *terminal) exited() error {
	for range term.chunks { // drain so that its last writes complete
	}
	done := make(chan error, 1)
	go func() { done <- term.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		term.t.Fatal("the program did not exit")
		return nil
	}
}

// chatModel is a synthetic chat model with a vocabulary large enough that
// an end-of-turn token is rare, so that answers run long.
func chatModel() testutil.ModelSpec {
	s := testutil.TinyChat()
	s.Vocab = 32000
	s.Context = 4096
	return s
}

// TestTerminal types into examples/chat on a pseudo-terminal: a question
// and its answer with the tokens/s line, /system and /reset, Ctrl-C
// stopping a long answer (the program goes on), Ctrl-C twice at the
// prompt exiting, and Ctrl-D exiting.
func TestTerminal(t *testing.T) {
	bin := llmtest.BuildCommand(t)
	model := testutil.TempModel(t, chatModel())
	// Short answers for the conversation; the answers of this model (an
	// end-of-turn token is one of 32000) run to -n.
	term := startTerminal(t, bin, "-m", model, "-t", "1", "-n", "40", "-system", "You tell stories.")
	term.expect(`/help\.\r?\n> `)
	term.typeKeys("hello\r")
	m := term.expect(`\[(\d+) tokens, [\d.]+ tok/s \| prompt (\d+) tokens, (\d+) reused, [\d.]+ tok/s\]\r?\n> `)
	if m[1] != "40" || m[3] != "0" {
		t.Errorf("first turn: %s tokens, %s reused", m[1], m[3])
	}
	first, _ := strconv.Atoi(m[2])
	term.typeKeys("and then?\r")
	m = term.expect(`prompt (\d+) tokens, (\d+) reused`)
	if reused, _ := strconv.Atoi(m[2]); reused < first {
		t.Errorf("second turn reused %d tokens, fewer than the first prompt's %d", reused, first)
	}
	term.expect(`> `)
	term.typeKeys("/system Be brief.\r")
	term.expect(`\[system prompt set to "Be brief."; conversation cleared\]\r?\n> `)
	term.typeKeys("hello\r")
	m = term.expect(`prompt (\d+) tokens, (\d+) reused`)
	if m[2] != "0" {
		t.Errorf("after /system: %s tokens reused", m[2])
	}
	term.expect(`> `)
	term.typeKeys("/reset\r")
	term.expect(`\[conversation cleared\]\r?\n> `)
	term.typeKeys("\x03")
	term.expect(`Ctrl-C again or Ctrl-D to exit`)
	term.expect(`> `)
	term.typeKeys("\x03")
	if err := term.exited(); err != nil {
		t.Errorf("exit after two Ctrl-C: %v", err)
	}

	// A long answer, stopped by Ctrl-C once it has begun; the program goes on.
	const long = 3000
	term = startTerminal(t, bin, "-m", model, "-t", "1", "-n", fmt.Sprint(long))
	term.expect(`> `)
	term.typeKeys("tell me a story\r")
	term.expect(`tell me a story\r?\n.`) // the echo, then the answer begins
	term.typeKeys("\x03")
	m = term.expect(`\[stopped\]\r?\n\[(\d+) tokens`)
	if n, _ := strconv.Atoi(m[1]); n >= long {
		t.Errorf("Ctrl-C did not stop the answer: all %d tokens were generated", n)
	}
	term.expect(`> `)
	term.typeKeys("/help\r")
	term.expect(`/reset: forget the conversation`)
	term.expect(`> `)
	term.typeKeys("\x04")
	if err := term.exited(); err != nil {
		t.Errorf("exit after Ctrl-D: %v", err)
	}
}
