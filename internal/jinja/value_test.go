package jinja

import "testing"

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindUndefined: "undefined", KindDict: "dict", KindFunc: "function", Kind(200): "Kind(200)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}
