// Package residency decides and enforces, while a model runs, which of its
// weights stay in memory and which are read from disk on every token, and
// reacts to memory running short.
//
// Start puts a memplan.Plan into effect. With resident weights it reads
// the mapped file ahead in the background (except the embedding rows no
// token touches). With streaming weights it chooses the blocks that do not
// fit the plan's resident bytes, spread evenly through the forward pass,
// drops their pages, and installs a model.DiskSource that reads them
// with direct I/O (mem.RangeReader) into DiskBuffers buffers while the
// resident blocks between them compute.
//
// A watcher (mem.Watch) polls the headroom when the plan is tight, the
// weights stream, or the caller asked for PressureEvents. Under pressure
// Short turns true (KV caches stop growing: memplan.KVBudget asks it) and
// a model whose weights mode the plan chose switches, once, to reading
// half of its blocks from disk, holding Config.Exclusive so that no
// forward pass runs meanwhile; Plan then reports the change.
//
//	residency.AdviseBeforeLoad(mapping, plan) // before model.New reads the norms
//	m, err := model.New(f, mapping.Bytes())
//	w, err := residency.Start(residency.Config{Mapping: mapping, Model: m, File: f, Shape: sh, Plan: plan, Exclusive: &rw})
//	defer w.Close()        // holding rw, after w.StopWatch()
package residency
