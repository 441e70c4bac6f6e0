package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"

	"github.com/lowmem/llm"
)

// LoRAAdapter is one LoRA adapter a LoRABackend applies: an entry of GET
// /lora-adapters, as llama-server lists them.
type LoRAAdapter struct {
	ID    int     `json:"id"`
	Path  string  `json:"path"`
	Scale float32 `json:"scale"`
}

// LoRABackend is a Backend whose model applies LoRA adapters: GET
// /lora-adapters lists them, POST /lora-adapters sets their scales.
// FromModel's Model is one.
type LoRABackend interface {
	Backend
	LoRAAdapters() []LoRAAdapter
	// SetLoRAScale sets adapter id's scale for the passes that follow.
	SetLoRAScale(id int, scale float32) error
}

// ForgetSession is a Session that can drop what it holds, so that its
// next request evaluates its prompt from the start: after a change of
// the adapters' scales the server makes each slot's session forget its
// cached prompt (computed at the old scales) before its next request, as
// llama-server clears a slot's cache when its adapters change. FromModel's
// sessions are ForgetSessions.
type ForgetSession interface {
	Session
	Forget()
}

func (s *Server) handleLoRAList(w http.ResponseWriter, r *http.Request) *apiError {
	out := []LoRAAdapter{}
	if lb, ok := s.backend.(LoRABackend); ok {
		out = append(out, lb.LoRAAdapters()...)
	}
	writeJSON(w, out)
	return nil
}

// handleLoRASet takes llama-server's body, [{"id": …, "scale": …}, …]:
// the adapters listed get their scales, the others 0. An id the model
// does not have is refused, as llama-server's parse_lora_request did
// (newer versions ignore it), and so is a scale that is not a finite
// number; then nothing changes.
func (s *Server) handleLoRASet(w http.ResponseWriter, r *http.Request, req *[]loraEntry) *apiError {
	lb, _ := s.backend.(LoRABackend)
	var have []LoRAAdapter
	if lb != nil {
		have = lb.LoRAAdapters()
	}
	scales := make([]float32, len(have))
	for _, e := range *req {
		if e.ID == nil || *e.ID < 0 || *e.ID >= len(have) {
			return badRequest("id", "invalid adapter id: the model has %d LoRA adapters", len(have))
		}
		v, ok := e.value()
		if !ok {
			return badRequest("scale", "adapter %d: scale %v is not a finite number", *e.ID, *e.Scale)
		}
		scales[*e.ID] = v
	}
	changed := false
	for i, sc := range scales {
		if sc == have[i].Scale {
			continue
		}
		if err := lb.SetLoRAScale(i, sc); err != nil {
			return &apiError{Status: 500, Type: "server_error", Message: err.Error()}
		}
		changed = true
	}
	if changed {
		s.loraGen.Add(1)
	}
	writeJSON(w, map[string]bool{"success": true})
	return nil
}

// forgetIfStale makes sl's session forget its cached prompt when the
// adapters' scales changed since it last ran.
func (s *Server) forgetIfStale(sl *slot) {
	g := s.loraGen.Load()
	if sl.loraGen == g {
		return
	}
	if f, ok := sl.session.(ForgetSession); ok {
		f.Forget()
	}
	sl.prompt, sl.loraGen = "", g
}

// loraParam reads a request's "lora": an array of {"id", "scale"}, as
// llama-server takes it; the ids are checked against the model when the
// request runs (FromModel's sessions: ErrBadPrompt).
func loraParam(raw json.RawMessage) (map[int]float32, *apiError) {
	var entries []loraEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, badRequest("lora", "'lora' must be an array of objects with 'id' and 'scale' fields")
	}
	out := make(map[int]float32, len(entries))
	for _, e := range entries {
		if e.ID == nil || *e.ID < 0 {
			return nil, badRequest("lora", "invalid adapter id")
		}
		v, ok := e.value()
		if !ok {
			return nil, badRequest("lora", "adapter %d: scale %v is not a finite number", *e.ID, *e.Scale)
		}
		out[*e.ID] = v
	}
	return out, nil
}

// loraEntry is an entry of llama-server's adapter lists, POST
// /lora-adapters' body and a request's "lora".
type loraEntry struct {
	ID    *int     `json:"id"`
	Scale *float64 `json:"scale"`
}

// value is the entry's scale (0 when absent), and whether it is a finite
// float32.
func (e loraEntry) value() (float32, bool) {
	if e.Scale == nil {
		return 0, true
	}
	v := *e.Scale
	return float32(v), !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) <= math.MaxFloat32
}

// loraOption is the generation option of a request's adapter scales,
// checked against the model's adapters (ErrBadPrompt for an id it does
// not have); nil without them.
func loraOption(m *llm.Model, scales map[int]float32) (llm.GenerateOption, error) {
	if scales == nil {
		return nil, nil
	}
	n := len(m.LoRAAdapters())
	for id := range scales {
		if id >= n {
			return nil, fmt.Errorf("lora: invalid adapter id %d: the model has %d adapters: %w", id, n, ErrBadPrompt)
		}
	}
	return llm.WithLoRAScales(scales), nil
}
