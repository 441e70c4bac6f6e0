package model

import "testing"

// checkRWKVKeys checks what an RWKV header of arch (fm) must have: the
// keys every RWKV model requires and its own, a head size dividing the
// width (96 does not), token_shift_count shifts (2, or QRWKV's 1: the
// other is refused) and an epsilon below 1; and its own cases.
func checkRWKVKeys(t *testing.T, fm func(mut func(map[string]any)) map[string]any, arch string, shifts int, own []string, cases ...keyCase) {
	t.Helper()
	checkRequired(t, fm, arch, append(append([]string{"wkv.head_size"}, own...), "feed_forward_length")...)
	checkKeyErrors(t, fm, append([]keyCase{
		{"head size not dividing", arch + ".wkv.head_size", uint32(96), ErrBadModel},
		{"the other token shift count", arch + ".token_shift_count", uint32(3 - shifts), ErrBadModel},
		{"epsilon 1", arch + ".attention.layer_norm_epsilon", float32(1), ErrBadModel},
	}, cases...))
}
