// Package memplan predicts, before any weight is read, every byte a model
// and one session will use, and chooses a configuration that fits a
// memory limit.
//
// A Shape is read from the GGUF header (ReadShape, ShapeOf: the file is
// validated by model.Check first). Make sizes each Component of a Request
// — weights (mapped pages, or the resident part when streaming), the KV
// cache (kv.Bytes: the allocator's own formula), the old layer a growing
// cache holds, activations (model.ScratchBytes), the session's buffers,
// the model's heap and a runtime allowance — against the limit given or
// detected (mem.DetectLimit), degrading when it does not fit in this
// order: F16 KV → INT8 KV → INT4 KV (when the head sizes allow it) → shorter context (down to 2048) → streaming
// weights (WeightsAuto only) → refuse (Plan.Fits false, Plan.Reason).
//
// A session's KV cache starts at StartCells and grows by NextCells:
// doubling to DoubleUpTo, then steps of StepCells (about StepBytes, or
// what is left). The caches of a model's sessions share a KVBudget of
// Plan.KVLimit bytes, which refuses growth while memory is short.
//
//	sh, err := memplan.ReadShape("model.gguf")
//	p, err := memplan.Make(sh, memplan.Request{Context: 8192, Threads: 2, Batch: 512, Limit: 6 << 30})
//	fmt.Print(p) // a table: component, bytes, note; total vs limit; the steps taken
//
// llm.Plan, llm.MemoryPlan, llm.Component and llm.WeightsMode are this
// package's Make, Plan, Component and WeightsMode.
package memplan
