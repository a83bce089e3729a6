package topologies

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"1500", 1500, ""},
		{"0", 0, ""},
		{"32MB", 32_000_000, ""},
		{"32MiB", 32 << 20, ""},
		{"4KiB", 4096, ""},
		{"400KB", 400_000, ""},
		{"400kB", 400_000, ""},
		{"1.5KB", 1500, ""},
		{"1.5 MiB", 3 << 19, ""},
		{"2GB", 2e9, ""},
		{"1GiB", 1 << 30, ""},
		{"64B", 64, ""},
		{"0.5B", 0, "not a whole number of bytes"},
		{"32Mb", 0, `unknown unit "Mb"`},
		{"32MBs", 0, `unknown unit "MBs"`},
		{"-1KB", 0, "negative size"},
		{"MB", 0, "want a number and a unit"},
		{"1.2.3MB", 0, "want a number and a unit"},
		{"", 0, "empty size"},
		{"99999999TB", 0, "too large"},
	}
	for _, tc := range tests {
		got, err := ParseSize(tc.in)
		checkParse(t, "ParseSize", tc.in, got, err, tc.want, tc.wantErr)
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    clock.Rate
		wantErr string
	}{
		{"400G", 400 * clock.Gbps, ""},
		{"400Gbps", 400 * clock.Gbps, ""},
		{"100Mbps", 100 * clock.Mbps, ""},
		{"1.6T", 1600 * clock.Gbps, ""},
		{"25G", 25 * clock.Gbps, ""},
		{"10K", 10 * clock.Kbps, ""},
		{"2.5 G", 2500 * clock.Mbps, ""},
		{"1000bps", 1000, ""},
		{"400", 0, "needs a unit"},
		{"400GB", 0, `unknown unit "GB"`},
		{"400g", 0, `unknown unit "g"`},
		{"-1G", 0, "negative rate"},
	}
	for _, tc := range tests {
		got, err := ParseRate(tc.in)
		checkParse(t, "ParseRate", tc.in, int64(got), err, int64(tc.want), tc.wantErr)
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    clock.Duration
		wantErr string
	}{
		{"1us", clock.Microsecond, ""},
		{"1µs", clock.Microsecond, ""},
		{"500ns", 500 * clock.Nanosecond, ""},
		{"1.5us", 1500 * clock.Nanosecond, ""},
		{"20ps", 20, ""},
		{"100ms", 100 * clock.Millisecond, ""},
		{"2s", 2 * clock.Second, ""},
		{"0", 0, ""},
		{"10", 0, "needs a unit"},
		{"0.5ps", 0, "not a whole number of picoseconds"},
		{"5 min", 0, `unknown unit "min"`},
	}
	for _, tc := range tests {
		got, err := ParseDuration(tc.in)
		checkParse(t, "ParseDuration", tc.in, int64(got), err, int64(tc.want), tc.wantErr)
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
	tests := []struct {
		n    int64
		want string
	}{
		{32_000_000, "32MB"}, {4096, "4KiB"}, {1500, "1500B"}, {0, "0B"}, {3 << 20, "3MiB"}, {1_234_567, "1.234567MB"},
	}
	for _, tc := range tests {
		if got := FormatSize(tc.n); got != tc.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
		if tc.n == 1_234_567 {
			continue
		}
		if back, err := ParseSize(FormatSize(tc.n)); err != nil || back != tc.n {
			t.Errorf("round trip %d: %d, %v", tc.n, back, err)
		}
	}
}
