package cli

import "testing"

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"6G", 6 << 30},
		{"6GiB", 6 << 30},
		{"6gb", 6 << 30},
		{"512M", 512 << 20},
		{"1.5K", 1536},
		{"4096", 4096},
		{"2T", 2 << 40},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "G", "-1G", "6X", "0", "1e30T"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
}
