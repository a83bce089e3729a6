package topologies

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
)

// TestUnits: topologies read sizes, rates and durations with core/units
// (whose test is the grammar's); these are the spellings topology files use.
func TestUnits(t *testing.T) {
	size := func(s string) (int64, error) { return ParseSize(s) }
	rate := func(s string) (int64, error) { r, err := ParseRate(s); return int64(r), err }
	dur := func(s string) (int64, error) { d, err := ParseDuration(s); return int64(d), err }
	tests := []struct {
		fn      string
		parse   func(string) (int64, error)
		in      string
		want    int64
		wantErr string
	}{
		{"ParseSize", size, "1500", 1500, ""},
		{"ParseSize", size, "32MB", 32_000_000, ""},
		{"ParseSize", size, "32 MB", 32_000_000, ""},
		{"ParseSize", size, "32MiB", 32 << 20, ""},
		{"ParseSize", size, "2.74M", 2_740_000, ""},
		{"ParseSize", size, "0.5B", 0, "not a whole number of bytes"},
		{"ParseSize", size, "32Mb", 0, "is bits"},
		{"ParseRate", rate, "400G", int64(400 * clock.Gbps), ""},
		{"ParseRate", rate, "400Gbps", int64(400 * clock.Gbps), ""},
		{"ParseRate", rate, "400Gb/s", int64(400 * clock.Gbps), ""},
		{"ParseRate", rate, "400 Gb/s", int64(400 * clock.Gbps), ""},
		{"ParseRate", rate, "1.6T", int64(1600 * clock.Gbps), ""},
		{"ParseRate", rate, "400", 0, "needs a unit"},
		{"ParseRate", rate, "400GB/s", 0, "is bytes"},
		{"ParseDuration", dur, "1us", int64(clock.Microsecond), ""},
		{"ParseDuration", dur, "1 µs", int64(clock.Microsecond), ""},
		{"ParseDuration", dur, "10", 0, "needs a unit"},
	}
	for _, tc := range tests {
		got, err := tc.parse(tc.in)
		checkParse(t, tc.fn, tc.in, got, err, tc.want, tc.wantErr)
	}
}

// TestRateAsPrinted is issue 51's defect: rocelab prints rates as
// "400 Gb/s", and a topology refused that spelling.
func TestRateAsPrinted(t *testing.T) {
	for _, rate := range []string{"400Gb/s", "400 Gb/s", "400G", "400Gbps", "0.4T"} {
		src := "name: r\ndefaults:\n  be: {rate: " + rate + ", delay: 1us}\nnodes:\n  h1: {kind: host, frontend: false}\n  s1: {kind: switch, role: rtsw}\nlinks:\n  - h1:gpu0 -- s1\n"
		topo, err := Parse("r.yaml", []byte(src))
		if err != nil {
			t.Errorf("rate: %s: %v", rate, err)
			continue
		}
		if got := topo.Node("h1").Port("gpu0").Rate; got != 400*clock.Gbps {
			t.Errorf("rate: %s: h1:gpu0 runs at %v, want 400G", rate, got)
		}
	}
}

func TestParseFraction(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"0.2", 0.2, ""},
		{"1/8", 0.125, ""},
		{"20%", 0.2, ""},
		{"2", 2, ""},
		{"1/0", 0, "division by zero"},
		{"x", 0, "bad fraction"},
		{"1/x", 0, "bad fraction"},
	}
	for _, tc := range tests {
		got, err := ParseFraction(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseFraction(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseFraction(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func checkParse(t *testing.T, fn, in string, got int64, err error, want int64, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s(%q) = %d, %v; want error containing %q", fn, in, got, err, wantErr)
		}
		return
	}
	if err != nil || got != want {
		t.Errorf("%s(%q) = %d, %v; want %d", fn, in, got, err, want)
	}
}

func TestFormatSize(t *testing.T) {
	for _, n := range []int64{32_000_000, 4096, 1500, 0, 3 << 20} {
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Errorf("round trip %d (%q): %d, %v", n, FormatSize(n), back, err)
		}
	}
}
