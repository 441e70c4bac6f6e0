package mem

import (
	"fmt"
	"math"
	"unsafe"

	"golang.org/x/sys/windows"
)

// memoryStatusEx is MEMORYSTATUSEX.
type memoryStatusEx struct {
	length               uint32
	memoryLoad           uint32
	totalPhys            uint64
	availPhys            uint64
	totalPageFile        uint64
	availPageFile        uint64
	totalVirtual         uint64
	availVirtual         uint64
	availExtendedVirtual uint64
}

var procGlobalMemoryStatusEx = windows.NewLazySystemDLL("kernel32.dll").NewProc("GlobalMemoryStatusEx")

// DetectLimit reports the machine's physical memory and the part of it
// available now (free plus standby pages, which the system hands out
// before it pages anything), from GlobalMemoryStatusEx. Job object limits
// are not read.
func DetectLimit() (Limit, error) {
	st := memoryStatusEx{length: uint32(unsafe.Sizeof(memoryStatusEx{}))}
	r, _, err := procGlobalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&st)))
	if r == 0 {
		return Limit{}, fmt.Errorf("mem: detect memory limit: GlobalMemoryStatusEx: %w", err)
	}
	if st.totalPhys == 0 || st.totalPhys > math.MaxInt64 || st.availPhys > st.totalPhys {
		return Limit{}, fmt.Errorf("mem: detect memory limit: GlobalMemoryStatusEx: total %d, available %d bytes", st.totalPhys, st.availPhys)
	}
	total, avail := int64(st.totalPhys), int64(st.availPhys)
	return Limit{Total: total, Available: avail, Source: "available physical memory (GlobalMemoryStatusEx)",
		MemTotal: total, MemAvailable: avail}, nil
}
