package mem

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParsePSI(t *testing.T) {
	tests := []struct {
		name string
		text string
		want PSI
	}{
		{
			name: "idle",
			text: "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
			want: PSI{HasFull: true},
		},
		{
			name: "under pressure",
			text: "some avg10=12.50 avg60=3.25 avg300=0.75 total=1234567\nfull avg10=4.00 avg60=1.00 avg300=0.10 total=7654\n",
			want: PSI{
				Some:    PSIStat{Avg10: 12.5, Avg60: 3.25, Avg300: 0.75, Total: 1234567 * time.Microsecond},
				Full:    PSIStat{Avg10: 4, Avg60: 1, Avg300: 0.1, Total: 7654 * time.Microsecond},
				HasFull: true,
			},
		},
		{
			name: "no full line",
			text: "some avg10=1.00 avg60=2.00 avg300=3.00 total=10\n",
			want: PSI{Some: PSIStat{Avg10: 1, Avg60: 2, Avg300: 3, Total: 10 * time.Microsecond}},
		},
		{
			name: "unknown fields and lines skipped",
			text: "some avg10=1.00 avg60=2.00 avg300=3.00 total=10 avg3600=9.99\nother x=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=5\n",
			want: PSI{
				Some:    PSIStat{Avg10: 1, Avg60: 2, Avg300: 3, Total: 10 * time.Microsecond},
				Full:    PSIStat{Total: 5 * time.Microsecond},
				HasFull: true,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePSI(tc.text, "memory")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("parsePSI =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}

	for _, bad := range []string{
		"",
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=x avg60=0.00 avg300=0.00 total=0\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n",
		"some avg10 avg60=0.00\n",
	} {
		if _, err := parsePSI(bad, "memory"); err == nil || !strings.Contains(err.Error(), "memory") {
			t.Errorf("parsePSI(%q) error %v, want one naming the file", bad, err)
		}
	}
}

func TestReadPSI(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memory.pressure")
	if err := os.WriteFile(p, []byte("some avg10=0.50 avg60=0.00 avg300=0.00 total=99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPSI(p)
	if err != nil || got != (PSI{Some: PSIStat{Avg10: 0.5, Total: 99 * time.Microsecond}}) {
		t.Errorf("ReadPSI = %+v, %v", got, err)
	}

	real, err := ReadPSI(PSIMemoryPath)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		// Missing, refused, or EOPNOTSUPP with psi=0 on the command line.
		t.Skipf("no pressure information here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", real)
}
