package mem

import "runtime"

// wasmMemory is the most linear memory a 32-bit-addressed WebAssembly
// module can have.
const wasmMemory = 4 << 30

// DetectLimit reports the WebAssembly linear memory: 4 GiB at most,
// whatever the host has, less what the Go runtime already holds. The host
// (a browser tab, Node, a WASI runtime) may allow less; pass an explicit
// limit when it does.
func DetectLimit() (Limit, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	avail := max(int64(wasmMemory)-int64(ms.Sys), 0)
	return Limit{Total: wasmMemory, Available: avail, Source: "WebAssembly linear memory (4 GiB)"}, nil
}
