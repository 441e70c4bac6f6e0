//go:build amd64 && !purego

package cpu

//go:generate sh -c "cd ../asm && go run ./amd64 -pkg cpu -out ../cpu"

// archModel reads the vendor (leaf 0) and the family and model (leaf 1).
func archModel() Model {
	_, b, c, d := cpuid(0, 0)
	var v [12]byte
	for i, r := range []uint32{b, d, c} {
		v[4*i], v[4*i+1], v[4*i+2], v[4*i+3] = byte(r), byte(r>>8), byte(r>>16), byte(r>>24)
	}
	a, _, _, _ := cpuid(1, 0)
	return decodeModel(string(v[:]), a)
}
