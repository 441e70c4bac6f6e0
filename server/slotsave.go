package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// llama-server's slot persistence: with a directory given
// (WithSlotSavePath, its --slot-save-path), POST /slots/{id}?action=save
// writes a slot's state to a file of that directory, action=restore reads
// one back into a slot and action=erase empties a slot. A slot a request
// holds is waited for, as llama-server defers the task.

// WithSlotSavePath enables the slot actions, their files kept in dir,
// which must be a directory (New fails otherwise, as llama-server does).
func WithSlotSavePath(dir string) Option {
	return func(c *config) error {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("server: WithSlotSavePath(%q): not a directory: %w", dir, ErrInvalidOption)
		}
		c.saveDir = dir
		return nil
	}
}

// slotFileMagic opens a slot file: the server's own header (the slot's
// last prompt, so that the slot keeps its place in prefix matching), then
// the Session's saved state.
const slotFileMagic = "LLMSLOT1"

// maxSlotKey bounds the prompt a slot file keeps: its first bytes are
// all prefix matching needs, and a hostile file cannot make restore
// allocate more.
const maxSlotKey = 1 << 16

// maxFilename is fs_validate_filename's bound, in bytes.
const maxFilename = 255

// validFilename is llama.cpp's fs_validate_filename (without
// subdirectories): a plain file name, at most 255 bytes of valid UTF-8,
// with no path separator, control character, character Windows forbids
// (: * ? " < > |) or look-alike of one, no "..", and no leading or
// trailing space or trailing dot.
func validFilename(name string) bool {
	if name == "" || len(name) > maxFilename || !utf8.ValidString(name) {
		return false
	}
	for _, c := range name {
		switch {
		case c <= 0x1f, c == 0x7f, c >= 0x80 && c <= 0x9f, // control characters
			c == 0xff0e, c == 0x2215, c == 0x2216, // full stop, slash, backslash look-alikes
			c == 0xfffd, c == 0xfeff, // replacement character, byte order mark
			strings.ContainsRune(`/\:*?"<>|`, c):
			return false
		}
	}
	return name[0] != ' ' && !strings.HasSuffix(name, " ") && !strings.HasSuffix(name, ".") && !strings.Contains(name, "..")
}

// slotError is llama-server's answer to a slot action it refuses.
func slotError(msg string) *apiError {
	return &apiError{Status: 400, Type: "invalid_request_error", Message: msg}
}

// errRestore is llama-server's refusal of a file it cannot restore (its
// state loader cannot say why).
var errRestore = slotError("Unable to restore slot, no available space in KV cache or invalid slot save file")

// handleSlotAction is llama-server's POST /slots/{id_slot}?action=...
func (s *Server) handleSlotAction(w http.ResponseWriter, r *http.Request) *apiError {
	if s.saveDir == "" {
		return &apiError{Status: 501, Type: "not_supported_error", Message: "This server does not support slots action. Start it with `--slot-save-path`"}
	}
	id, err := strconv.Atoi(r.PathValue("id_slot"))
	if err != nil {
		return slotError("Invalid slot ID")
	}
	action := r.URL.Query().Get("action")
	var filename string
	switch action {
	case "save", "restore":
		var req struct {
			Filename *string `json:"filename"`
		}
		if aerr := readBody(r, &req); aerr != nil {
			return aerr
		}
		if req.Filename == nil {
			return badRequest("filename", "filename is required: the file of the slot directory to %s", action)
		}
		if filename = *req.Filename; !validFilename(filename) {
			return slotError("Invalid filename")
		}
	case "erase":
	default:
		return slotError("Invalid action")
	}
	if id < 0 || id >= len(s.all) {
		return slotError("Invalid slot ID")
	}
	target := s.all[id]
	if _, ok := target.session.(StateSession); !ok {
		return &apiError{Status: 501, Type: "not_supported_error", Message: "this server's backend cannot save or restore slots"}
	}
	_, sl, release, aerr := s.hold(r, func(ctx context.Context) (*slot, error) { return s.slots.acquireSlot(ctx, target) })
	if aerr != nil {
		return aerr
	}
	defer release()
	ss := sl.session.(StateSession)
	start := time.Now()
	ms := func() float64 { return float64(time.Since(start).Microseconds()) / 1e3 }
	switch action {
	case "save":
		n, err := s.saveSlot(sl, ss, filename)
		if err != nil {
			return &apiError{Status: 500, Type: "server_error", Message: "cannot save the slot: " + err.Error()}
		}
		writeJSON(w, map[string]any{"id_slot": id, "filename": filename, "n_saved": ss.Len(), "n_written": n,
			"timings": map[string]float64{"save_ms": ms()}})
	case "restore":
		n, err := s.restoreSlot(sl, ss, filename)
		if err != nil {
			// As llama-server, a slot that failed to restore is empty.
			ss.Reset()
			sl.prompt = ""
			s.log.Info("slot restore refused", "slot", id, "file", filename, "err", err)
			return errRestore
		}
		writeJSON(w, map[string]any{"id_slot": id, "filename": filename, "n_restored": ss.Len(), "n_read": n,
			"timings": map[string]float64{"restore_ms": ms()}})
	case "erase":
		n := ss.Len()
		ss.Reset()
		sl.prompt = ""
		writeJSON(w, map[string]any{"id_slot": id, "n_erased": n})
	}
	return nil
}

// saveSlot writes sl's state to filename in the save directory through a
// temporary file renamed over it once complete, so that the file is
// either the old one or the whole new one; it returns the bytes written.
func (s *Server) saveSlot(sl *slot, ss StateSession, filename string) (n int64, err error) {
	tmp, err := os.CreateTemp(s.saveDir, ".slot-*.tmp")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	cw := &countingWriter{w: tmp}
	bw := bufio.NewWriter(cw)
	key := sl.prompt[:min(len(sl.prompt), maxSlotKey)]
	bw.WriteString(slotFileMagic)
	bw.Write(binary.AppendUvarint(nil, uint64(len(key))))
	bw.WriteString(key)
	if err = ss.Save(bw); err != nil {
		return 0, err
	}
	if err = bw.Flush(); err != nil {
		return 0, err
	}
	if err = tmp.Sync(); err != nil {
		return 0, err
	}
	if err = tmp.Close(); err != nil {
		return 0, err
	}
	if err = os.Rename(tmp.Name(), filepath.Join(s.saveDir, filename)); err != nil {
		return 0, err
	}
	return cw.n, nil
}

// errSlotFile: a slot file whose header is not the server's.
var errSlotFile = errors.New("server: not a slot file")

// restoreSlot reads filename of the save directory into sl and returns
// the bytes read.
func (s *Server) restoreSlot(sl *slot, ss StateSession, filename string) (int64, error) {
	f, err := os.Open(filepath.Join(s.saveDir, filename))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cr := &countingReader{r: bufio.NewReader(f)}
	var magic [len(slotFileMagic)]byte
	if _, err := io.ReadFull(cr, magic[:]); err != nil || string(magic[:]) != slotFileMagic {
		return 0, errSlotFile
	}
	n, err := binary.ReadUvarint(cr)
	if err != nil || n > maxSlotKey {
		return 0, errSlotFile
	}
	key := make([]byte, n)
	if _, err := io.ReadFull(cr, key); err != nil {
		return 0, errSlotFile
	}
	if err := ss.Restore(cr); err != nil {
		return 0, err
	}
	sl.prompt = string(key)
	return cr.n, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// countingReader counts the bytes read through it; it is an
// io.ByteReader, for binary.ReadUvarint.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}
