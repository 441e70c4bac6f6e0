package cpu

import "fmt"

// Model identifies a CPU's microarchitecture as far as the choice between
// kernel variants needs it: CPUID's vendor string, family and model
// (extended fields included). The zero Model means unknown (another
// architecture, or a build without assembly).
type Model struct {
	Vendor        string // "GenuineIntel", "AuthenticAMD", …
	Family, Model int
}

// CPU returns the model of the CPU the process runs on, read once.
func CPU() Model { return model }

var model = archModel()

// Split512 reports whether the CPU runs 512-bit vector instructions as
// two 256-bit halves (AMD Zen 4, family 0x19 with AVX-512): there a
// 512-bit operation costs what two 256-bit ones do, so kernels gain
// nothing from the wider registers but fewer instructions.
func (m Model) Split512() bool {
	return m.Vendor == "AuthenticAMD" && m.Family == 0x19 && detected >= AVX512
}

// IntelAVX512 reports whether the CPU is an Intel core with AVX-512: in
// practice the server cores (Skylake-SP to Emerald and Granite Rapids)
// that cloud VMs run on. There one core alone keeps too few reads from
// memory in flight to stream at its share of the bandwidth while a
// kernel spends many instructions per cache line, so decode kernels that
// prefetch ahead into L2 win (quant's X8 choice, measured on Emerald
// Rapids).
func (m Model) IntelAVX512() bool {
	return m.Vendor == "GenuineIntel" && detected >= AVX512
}

// String is the vendor, family and model as Linux's /proc/cpuinfo prints
// them (decimal), or "unknown".
func (m Model) String() string {
	if m.Vendor == "" {
		return "unknown"
	}
	return fmt.Sprintf("%s family %d model %d", m.Vendor, m.Family, m.Model)
}

// decodeModel assembles the family and model from CPUID leaf 1's EAX as
// the vendors define them: the extended family adds to a base family of
// 15, the extended model extends models of families 6 and 15 and up.
func decodeModel(vendor string, eax uint32) Model {
	fam := int(eax>>8) & 0xF
	mod := int(eax>>4) & 0xF
	if fam == 0xF {
		fam += int(eax>>20) & 0xFF
	}
	if fam >= 6 {
		mod |= int(eax>>16) & 0xF << 4
	}
	return Model{Vendor: vendor, Family: fam, Model: mod}
}
