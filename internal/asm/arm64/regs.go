package main

import "fmt"

// vregs hands out vector registers. Go's ABI0 assembly functions may
// clobber all of V0–V31.
type vregs struct {
	used uint32
	fn   string
}

func newVRegs(fn string) *vregs { return &vregs{fn: fn} }

// get returns a free register.
func (r *vregs) get() VReg {
	for i := VReg(0); i < 32; i++ {
		if r.used&(1<<i) == 0 {
			r.used |= 1 << i
			return i
		}
	}
	panic(fmt.Sprintf("%s: out of vector registers", r.fn))
}

// many returns n free registers, each as get finds it.
func (r *vregs) many(n int) []VReg {
	vs := make([]VReg, n)
	for i := range vs {
		vs[i] = r.get()
	}
	return vs
}

// getN returns n consecutive free registers, the first of them, for the
// register lists of LD1 and ST1.
func (r *vregs) getN(n int) VReg {
	mask := uint32(1)<<n - 1
	for i := 0; i+n <= 32; i++ {
		if r.used&(mask<<i) == 0 {
			r.used |= mask << i
			return VReg(i)
		}
	}
	panic(fmt.Sprintf("%s: no %d consecutive vector registers", r.fn, n))
}

func (r *vregs) put(vs ...VReg) {
	for _, v := range vs {
		check(r.used&(1<<v) != 0, "%s: V%d freed twice", r.fn, v)
		r.used &^= 1 << v
	}
}

// putN frees n consecutive registers from v.
func (r *vregs) putN(v VReg, n int) {
	for i := 0; i < n; i++ {
		r.put(v + VReg(i))
	}
}
