package llm

import (
	"runtime/debug"

	"github.com/lowmem/llm/internal/engine"
	"github.com/lowmem/llm/model"
)

// WithLoRA applies the GGUF LoRA adapter at path (llama.cpp's --lora and
// --lora-scaled, Ollama's ADAPTER): every matrix it adapts gains
// scale·alpha/rank·B·A (scale alone when the file gives no alpha). It may
// be given several times: the adapters add up. The adapter must be of the
// model's architecture and fit its shapes (else ErrBadAdapter); activated
// LoRA (aLoRA) adapters and adapters of experts are refused with
// ErrUnsupportedArch. Its factors are held in their file's type (F16, as
// llama.cpp's converter writes them; F32, BF16, Q8_0 …; float32 for a type
// the library does not multiply) and counted by the memory plan ("lora
// adapters").
func WithLoRA(path string, scale float32) Option {
	return modelOption(func(s *engine.Settings) { s.AddAdapter(path, scale) })
}

// ErrBadAdapter: a LoRA adapter file (WithLoRA) that is malformed or does
// not fit the model: another architecture, a tensor the model does not
// have, shapes that do not match, a lora_a without its lora_b.
var ErrBadAdapter = model.ErrBadAdapter

// LoRAAdapter is one LoRA adapter applied to a model: its ID (index among
// Load's WithLoRA options), its file's Path and its Scale now.
type LoRAAdapter = engine.LoRAAdapter

// LoRAAdapters lists the model's adapters in WithLoRA's order.
func (m *Model) LoRAAdapters() []LoRAAdapter { defer m.engine().Absorb(); return m.e.LoRAAdapters() }

// SetLoRAScale sets adapter id's scale for every session from their next
// forward pass on (it waits for the passes running to end); 0 turns it
// off, leaving the base model's results exactly. What sessions hold
// already (their KV caches) was computed at the old scale: a server
// drops its cached prompts, as llama-server does. Errors wrap
// ErrInvalidOption (no such adapter, a scale that is not finite) or
// ErrClosed.
func (m *Model) SetLoRAScale(id int, scale float32) (err error) {
	defer m.engine().Catch(&err, debug.SetPanicOnFault(true))
	return m.e.SetAdapterScale(id, scale)
}

// WithLoRAScales runs this generation with the model's adapters at these
// scales, by LoRAAdapter.ID, those not listed (every one, for a nil or
// empty map) at 0 (llama-server's per-request "lora"); without it a
// generation takes the adapters' own scales (SetLoRAScale). The session
// keeps the scales of its last generation; when they change it forgets
// what it held first (its KV cache was computed with others), so a
// continued conversation starts over. An ID the model does not have, or a
// scale that is not finite, is ErrInvalidOption.
func WithLoRAScales(scales map[int]float32) GenerateOption {
	scales = engine.LoRAScales(scales)
	return func(g *engine.Gen) { g.LoRA = scales }
}
