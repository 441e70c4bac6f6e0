package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lowmem/llm"
	"github.com/lowmem/llm/internal/testutil"
)

// TestValidFilename: what llama.cpp's fs_validate_filename refuses.
func TestValidFilename(t *testing.T) {
	for name, want := range map[string]bool{
		"slot0.bin": true, "a b": true, "émoji-🙂.bin": true, ".hidden": true, strings.Repeat("a", 255): true,
		"": false, strings.Repeat("a", 256): false, ".": false, "..": false, "a..b": false, "../x": false,
		"/etc/passwd": false, "a/b": false, `a\b`: false, " a": false, "a ": false, "a.": false,
		"a\x00b": false, "a\nb": false, "a\x7fb": false, "a\u0085b": false, "C:x": false, "a*": false,
		"a?": false, `a"`: false, "a<": false, "a>": false, "a|": false, "a\uff0eb": false, "a\u2215b": false,
		"a\u2216b": false, "a\ufffdb": false, "\ufeffa": false, "a\xffb": false, "\xc0\xaf": false,
	} {
		if got := validFilename(name); got != want {
			t.Errorf("validFilename(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzValidFilename: a name validFilename accepts names a file directly
// in the directory, neither it nor one of its parents.
func FuzzValidFilename(f *testing.F) {
	for _, seed := range []string{"a.bin", "../x", "..", ".", "a/b", "/", `\`, " ", "\x00", "a\u2215b", "\xc0\xaf", "x."} {
		f.Add(seed)
	}
	dir := filepath.Join(os.TempDir(), "slots")
	f.Fuzz(func(t *testing.T, name string) {
		if !validFilename(name) {
			return
		}
		p := filepath.Join(dir, name)
		if filepath.Dir(p) != dir || filepath.Base(p) != name || strings.ContainsAny(name, "/\\\x00") || strings.Contains(name, "..") {
			t.Errorf("validFilename accepted %q, which names %s", name, p)
		}
	})
}

// slotAnswer is what the tests read of a slot action's answer.
type slotAnswer struct {
	IDSlot    int    `json:"id_slot"`
	Filename  string `json:"filename"`
	NSaved    int    `json:"n_saved"`
	NWritten  int64  `json:"n_written"`
	NRestored int    `json:"n_restored"`
	NRead     int64  `json:"n_read"`
	NErased   *int   `json:"n_erased"`
	Timings   map[string]float64
}

func slotAction(t *testing.T, url, action, body string) slotAnswer {
	t.Helper()
	resp, b := post(t, url+"/slots/0?action="+action, body)
	var got slotAnswer
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil {
		t.Fatalf("%s %s: status %d: %s", action, body, resp.StatusCode, b)
	}
	return got
}

// slotRefused posts a slot action and checks llama-server's error.
func slotRefused(t *testing.T, url, path, body string, status int, typ, message string) {
	t.Helper()
	resp, b := post(t, url+path, body)
	var e nativeErr
	if resp.StatusCode != status || json.Unmarshal(b, &e) != nil || e.Error == nil || e.Error.Code != status ||
		e.Error.Type != typ || !strings.Contains(e.Error.Message, message) {
		t.Errorf("%s %.40q: %d %s; want %d %s %q", path, body, resp.StatusCode, b, status, typ, message)
	}
}

// TestSlotSaveRestore: on FromModel's Backend a slot saved after a
// request, erased and restored serves the same prompt again from its
// cache (timings.cache_n), where the erased slot evaluated it all; the
// answers are llama-server's, the file is written whole (no temporary
// left), and a truncated or foreign file is refused leaving the slot
// empty and serving.
func TestSlotSaveRestore(t *testing.T) {
	dir := t.TempDir()
	_, _, hs := startModel(t, 1, nil, WithSlotSavePath(dir))
	const req = `{"prompt":"<|im_start|>user the cat sat on the","temperature":0,"n_predict":3}`
	// An empty slot saves and restores, as nothing.
	if s := slotAction(t, hs.URL, "save", `{"filename":"none"}`); s.NSaved != 0 || s.NWritten == 0 {
		t.Errorf("save of an empty slot: %+v", s)
	}
	if r := slotAction(t, hs.URL, "restore", `{"filename":"none"}`); r.NRestored != 0 {
		t.Errorf("restore of an empty slot: %+v", r)
	}
	first := postNative(t, hs.URL+"/completion", req)

	saved := slotAction(t, hs.URL, "save", `{"filename":"cat.bin"}`)
	fi, err := os.Stat(filepath.Join(dir, "cat.bin"))
	if err != nil || saved.IDSlot != 0 || saved.Filename != "cat.bin" || saved.NSaved != first.TokensEvaluated+first.TokensPredicted ||
		saved.NWritten != fi.Size() || saved.Timings["save_ms"] <= 0 {
		t.Fatalf("save: %+v (file %v, %v); want the %d+%d tokens held", saved, fi, err, first.TokensEvaluated, first.TokensPredicted)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("save left %v, want only none and cat.bin", ents)
	}
	if e := slotAction(t, hs.URL, "erase", ``); e.NErased == nil || *e.NErased != saved.NSaved {
		t.Errorf("erase: %+v, want n_erased %d", e, saved.NSaved)
	}
	if got := postNative(t, hs.URL+"/completion", req); got.Timings["cache_n"] != 0 || got.Content != first.Content {
		t.Errorf("after erase: cache_n %v content %q, want 0 and %q", got.Timings["cache_n"], got.Content, first.Content)
	}
	slotAction(t, hs.URL, "erase", `{}`)
	restored := slotAction(t, hs.URL, "restore", `{"filename":"cat.bin"}`)
	if restored.NRestored != saved.NSaved || restored.NRead != saved.NWritten || restored.Filename != "cat.bin" || restored.Timings["restore_ms"] <= 0 {
		t.Errorf("restore: %+v after save %+v", restored, saved)
	}
	got := postNative(t, hs.URL+"/completion", req)
	if cached := int(got.Timings["cache_n"]); cached < first.TokensEvaluated-1 || cached+int(got.Timings["prompt_n"]) != got.TokensEvaluated ||
		got.Content != first.Content {
		t.Errorf("after restore: timings %v content %q; want the prompt's %d tokens cached and %q", got.Timings, got.Content, first.TokensEvaluated, first.Content)
	}

	// Damaged files: refused, and the slot is left empty but serving.
	whole, err := os.ReadFile(filepath.Join(dir, "cat.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"half.bin":    whole[:len(whole)/2],
		"header.bin":  whole[:len(slotFileMagic)+3],
		"garbage.bin": []byte("not a slot file at all"),
		"empty.bin":   nil,
		"bitflip.bin": append(append([]byte(nil), whole[:len(whole)-9]...), whole[len(whole)-9]^1),
		"hugekey.bin": append([]byte(slotFileMagic), 0xff, 0xff, 0xff, 0xff, 0x0f),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		slotAction(t, hs.URL, "restore", `{"filename":"cat.bin"}`)
		slotRefused(t, hs.URL, "/slots/0?action=restore", `{"filename":"`+name+`"}`, 400, "invalid_request_error", "Unable to restore slot")
		if e := slotAction(t, hs.URL, "erase", ``); *e.NErased != 0 {
			t.Errorf("%s: the refused restore left %d tokens", name, *e.NErased)
		}
		if got := postNative(t, hs.URL+"/completion", req); got.Content != first.Content || got.Timings["cache_n"] != 0 {
			t.Errorf("%s: after the refused restore: %q cache_n %v", name, got.Content, got.Timings["cache_n"])
		}
	}
	slotRefused(t, hs.URL, "/slots/0?action=restore", `{"filename":"missing.bin"}`, 400, "invalid_request_error", "Unable to restore slot")
}

// TestSlotRestoreForeign: a slot file of another KV type or another model
// is the library's ErrBadState, llama-server's refusal here.
func TestSlotRestoreForeign(t *testing.T) {
	dir := t.TempDir()
	m, _, hs := startModel(t, 1, nil, WithSlotSavePath(dir))
	postNative(t, hs.URL+"/completion", `{"prompt":"the dog","n_predict":2}`)
	slotAction(t, hs.URL, "save", `{"filename":"f16.bin"}`)

	// The file is the header (magic, key length, key) and then the
	// library's own save: a session of the same KV type restores it, an
	// Int8 one refuses it with ErrBadState.
	data, err := os.ReadFile(filepath.Join(dir, "f16.bin"))
	if err != nil {
		t.Fatal(err)
	}
	state := data[len(slotFileMagic)+1+len("the dog"):]
	for kv, want := range map[llm.KVType]error{llm.KVF16: nil, llm.KVInt8: llm.ErrBadState} {
		s, err := m.NewSession(llm.WithKVType(kv))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Restore(bytes.NewReader(state)); !errors.Is(err, want) {
			t.Errorf("the library's restore into a %v session: %v, want %v", kv, err, want)
		}
		s.Close()
	}

	other := loadModel(t, testutil.TempModel(t, testutil.TinyLlama()))
	b, err := FromModel(m, "int8", llm.WithKVType(llm.KVInt8))
	if err != nil {
		t.Fatal(err)
	}
	ob, err := FromModel(other, "other")
	if err != nil {
		t.Fatal(err)
	}
	for name, backend := range map[string]Backend{"another KV type": b, "another model": ob} {
		_, hs2 := startBackend(t, backend, WithSlotSavePath(dir))
		slotRefused(t, hs2.URL, "/slots/0?action=restore", `{"filename":"f16.bin"}`, 400, "invalid_request_error", "Unable to restore slot")
		if resp, body := post(t, hs2.URL+"/completion", `{"prompt":"the dog","n_predict":2}`); resp.StatusCode != 200 {
			t.Errorf("%s: after the refused restore: %d %s", name, resp.StatusCode, body)
		}
	}
}

// TestSlotActionRefusals: hostile and mistaken slot actions get
// llama-server's errors, and nothing is written outside the directory
// (nor in it).
func TestSlotActionRefusals(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "slots")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, hs := startModel(t, 2, nil, WithSlotSavePath(dir), WithMaxBodyBytes(4096))
	const invalid = "invalid_request_error"
	for _, c := range []struct {
		path, body string
		status     int
		typ, msg   string
	}{
		{"/slots/0?action=save", `{`, 400, invalid, "JSON"},
		{"/slots/0?action=save", `[]`, 400, invalid, "JSON object"},
		{"/slots/0?action=save", ``, 400, invalid, "empty"},
		{"/slots/0?action=save", `{}`, 400, invalid, "filename is required"},
		{"/slots/0?action=restore", `{"filename":null}`, 400, invalid, "filename is required"},
		{"/slots/0?action=save", `{"filename":5}`, 400, invalid, "filename"},
		{"/slots/0?action=save", `{"filename":"a"} {}`, 400, invalid, "extra data"},
		{"/slots/0?action=save", `{"filename":"` + strings.Repeat("a", 5000) + `"}`, 413, invalid, "larger"},
		{"/slots/0?action=save", `{"filename":"` + strings.Repeat("a", 256) + `"}`, 400, invalid, "Invalid filename"},
		{"/slots/0?action=save", `{"filename":""}`, 400, invalid, "Invalid filename"},
		{"/slots/0?action=save", `{"filename":"../x"}`, 400, invalid, "Invalid filename"},
		{"/slots/0?action=save", `{"filename":".."}`, 400, invalid, "Invalid filename"},
		{"/slots/0?action=save", `{"filename":"` + filepath.Join(root, "x") + `"}`, 400, invalid, "Invalid filename"},
		{"/slots/0?action=save", `{"filename":"a\\\\b"}`, 400, invalid, "Invalid filename"},
		{"/slots/0?action=save", `{"filename":"a\u0000"}`, 400, invalid, "Invalid filename"},
		{"/slots/0?action=save", `{"filename":" x"}`, 400, invalid, "Invalid filename"},
		{"/slots/0?action=save", `{"filename":"x."}`, 400, invalid, "Invalid filename"},
		{"/slots/0?action=restore", `{"filename":"../slots/x"}`, 400, invalid, "Invalid filename"},
		{"/slots/0?action=restore", `{"filename":"\ud800"}`, 400, invalid, "Invalid filename"},
		{"/slots/0?action=delete", `{"filename":"x"}`, 400, invalid, "Invalid action"},
		{"/slots/0", `{"filename":"x"}`, 400, invalid, "Invalid action"},
		{"/slots/x?action=erase", ``, 400, invalid, "Invalid slot ID"},
		{"/slots/2?action=save", `{"filename":"x"}`, 400, invalid, "Invalid slot ID"},
		{"/slots/-1?action=erase", ``, 400, invalid, "Invalid slot ID"},
		{"/slots/99999999999999999999?action=erase", ``, 400, invalid, "Invalid slot ID"},
	} {
		slotRefused(t, hs.URL, c.path, c.body, c.status, c.typ, c.msg)
	}
	ents, _ := os.ReadDir(root)
	inDir, _ := os.ReadDir(dir)
	if len(ents) != 1 || len(inDir) != 0 {
		t.Errorf("after the refusals: %v in the root, %v in the slot directory", ents, inDir)
	}

	// Without a directory, and for a Backend that cannot save, 501.
	_, plain := start(t, newFake(words("hi")))
	slotRefused(t, plain.URL, "/slots/0?action=save", `{"filename":"x"}`, 501, "not_supported_error", "--slot-save-path")
	fake := newFake(words("hi"))
	_, fhs := start(t, fake, WithSlotSavePath(dir))
	slotRefused(t, fhs.URL, "/slots/0?action=erase", ``, 501, "not_supported_error", "cannot save")
	if _, err := New(fake, WithSlotSavePath(filepath.Join(root, "none"))); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("a save path that is not a directory: %v, want ErrInvalidOption", err)
	}
}

// TestSlotActionWaitsForBusySlot: an action on a slot a request holds
// waits for it (llama-server defers the task), and one whose client goes
// away while waiting leaves the slot to the others.
func TestSlotActionWaitsForBusySlot(t *testing.T) {
	_, srv, hs := startModel(t, 1, nil, WithSlotSavePath(t.TempDir()))
	pinned := func() int {
		srv.slots.mu.Lock()
		defer srv.slots.mu.Unlock()
		return len(srv.slots.pinned[srv.all[0]])
	}
	held, err := srv.slots.acquire(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	status := make(chan int, 1)
	go func() {
		resp, err := http.Post(hs.URL+"/slots/0?action=save", "application/json", strings.NewReader(`{"filename":"x"}`))
		if err != nil {
			status <- -1
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	waitFor(t, func() bool { return pinned() == 1 })
	select {
	case s := <-status:
		t.Fatalf("the save answered %d while the slot was busy", s)
	default:
	}
	srv.slots.release(held)
	if s := <-status; s != 200 {
		t.Errorf("the save after the slot was released: %d", s)
	}

	// A client that goes away while waiting.
	held, _ = srv.slots.acquire(context.Background(), "")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/slots/0?action=erase", nil)
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, func() bool { return pinned() == 1 })
	cancel()
	waitFor(t, func() bool { return pinned() == 0 })
	srv.slots.release(held)
	if resp, b := post(t, hs.URL+"/completion", `{"prompt":"the dog","n_predict":2}`); resp.StatusCode != 200 {
		t.Errorf("after the waiting action left: %d %s", resp.StatusCode, b)
	}
	if q, busy := srv.slots.load(); q != 0 || busy != 0 {
		t.Errorf("queued %d busy %d at the end", q, busy)
	}
}

// TestSlotRestoreAffinity: a slot restored from a file is where the
// prompt it was saved after goes next (the file keeps the prompt for
// prefix matching), its tokens cached.
func TestSlotRestoreAffinity(t *testing.T) {
	_, _, hs := startModel(t, 2, nil, WithSlotSavePath(t.TempDir()))
	const req = `{"prompt":"<|im_start|>user the cat sat on the","temperature":0,"n_predict":2}`
	var first struct {
		IDSlot  int                `json:"id_slot"`
		Timings map[string]float64 `json:"timings"`
	}
	if resp, b := post(t, hs.URL+"/completion", req); resp.StatusCode != 200 || json.Unmarshal(b, &first) != nil {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	other := 1 - first.IDSlot
	if resp, b := post(t, fmt.Sprintf("%s/slots/%d?action=save", hs.URL, first.IDSlot), `{"filename":"cat"}`); resp.StatusCode != 200 {
		t.Fatalf("save: %d %s", resp.StatusCode, b)
	}
	post(t, fmt.Sprintf("%s/slots/%d?action=erase", hs.URL, first.IDSlot), ``)
	if resp, b := post(t, fmt.Sprintf("%s/slots/%d?action=restore", hs.URL, other), `{"filename":"cat"}`); resp.StatusCode != 200 {
		t.Fatalf("restore into slot %d: %d %s", other, resp.StatusCode, b)
	}
	var got struct {
		IDSlot  int                `json:"id_slot"`
		Timings map[string]float64 `json:"timings"`
	}
	if resp, b := post(t, hs.URL+"/completion", req); resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil ||
		got.IDSlot != other || got.Timings["cache_n"] == 0 {
		t.Errorf("after restoring into slot %d: %d %s", other, resp.StatusCode, b)
	}
}

// FuzzSlotAction: any slot, action and body to POST /slots/{id} on
// FromModel's Backend gets 200 with JSON or a 400, 413 or 501 with
// llama-server's error JSON, and leaves no file outside the slot
// directory nor a temporary one in it.
func FuzzSlotAction(f *testing.F) {
	for _, s := range [][2]string{
		{"0?action=save", `{"filename":"a"}`}, {"0?action=restore", `{"filename":"a"}`}, {"0?action=erase", ``},
		{"1?action=save", `{"filename":"../a"}`}, {"0?action=restore", `{"filename":"/etc/passwd"}`},
		{"x?action=save", `{}`}, {"0?action=load", `{"filename":"a"}`}, {"0?action=save&action=erase", `{"filename":5}`},
		{"0?action=save", `{"filename":"a\u0000"}`}, {"0?action=save", `{`}, {"-0?action=erase", `null`},
	} {
		f.Add(s[0], s[1])
	}
	m := loadModel(f, testutil.TempModel(f, testutil.TinyChat()), llm.WithSessions(2))
	b, err := FromModel(m, "tiny-chat")
	if err != nil {
		f.Fatal(err)
	}
	root := f.TempDir()
	dir := filepath.Join(root, "slots")
	if err := os.Mkdir(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	srv, err := New(b, WithParallel(2), WithSlotSavePath(dir), WithMaxBodyBytes(4096))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, target, body string) {
		req, err := http.NewRequest("POST", "/slots/"+target, strings.NewReader(body))
		if err != nil {
			return // not a URL
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		out := rec.Body.Bytes()
		switch rec.Code {
		case 200:
			if !json.Valid(out) {
				t.Fatalf("%s %q: invalid JSON %s", target, body, out)
			}
		case 400, 413, 501:
			var e nativeErr
			if err := json.Unmarshal(out, &e); err != nil || e.Error == nil || e.Error.Code != rec.Code || e.Error.Message == "" {
				t.Fatalf("%s %q: status %d without llama-server's error JSON: %s", target, body, rec.Code, out)
			}
		case 301, 307, 308, 404, 405: // not a slot path after all (the mux cleans it, or another route answers)
		default:
			t.Fatalf("%s %q: status %d: %s", target, body, rec.Code, out)
		}
		if ents, _ := os.ReadDir(root); len(ents) != 1 {
			t.Fatalf("%s %q: %v beside the slot directory", target, body, ents)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".tmp") {
				t.Fatalf("%s %q: temporary file %s left", target, body, e.Name())
			}
		}
	})
}
