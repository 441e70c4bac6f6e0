// Package floatbits compares float32 results bit for bit, for the tests of
// kernels whose assembly must agree exactly with its pure-Go twin (the
// twins keep the assembly's order of operations). Any NaN matches any NaN:
// which payload a NaN carries is the hardware's choice, not the kernel's.
//
// It imports nothing of this module, so the tests of any package can use it.
//
// Example: fail at the first element that differs.
//
//	if i := floatbits.FirstDiff(got, want); i >= 0 {
//		t.Errorf("[%d] = %g, generic %g", i, got[i], want[i])
//	}
package floatbits
