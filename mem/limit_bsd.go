//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package mem

import (
	"fmt"
	"math"
	"runtime"

	"golang.org/x/sys/unix"
)

// physmemSysctl names the sysctl holding the machine's RAM in bytes.
func physmemSysctl() string {
	switch runtime.GOOS {
	case "darwin":
		return "hw.memsize"
	case "netbsd":
		return "hw.physmem64"
	}
	return "hw.physmem"
}

// DetectLimit reports the machine's RAM, read with sysctl. These systems
// have no cgroups, and their sysctls give no figure for memory available
// to a new allocation that counts reclaimable file cache the way Linux's
// MemAvailable does, so Available is the total: plan against an explicit
// limit (ExplicitLimit, llm.WithMemoryLimit) when other programs need
// their share.
func DetectLimit() (Limit, error) {
	name := physmemSysctl()
	v, err := unix.SysctlUint64(name)
	if err != nil {
		return Limit{}, fmt.Errorf("mem: detect memory limit on %s: sysctl %s: %w", runtime.GOOS, name, err)
	}
	if v == 0 || v > math.MaxInt64 {
		return Limit{}, fmt.Errorf("mem: detect memory limit on %s: sysctl %s = %d", runtime.GOOS, name, v)
	}
	n := int64(v)
	return Limit{Total: n, Available: n, Source: "total RAM (sysctl " + name + "; no availability figure on " + runtime.GOOS + ")",
		MemTotal: n, MemAvailable: n}, nil
}
