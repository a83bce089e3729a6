package units

import (
	"math"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{FormatSize(0), "0 B"},
		{FormatSize(1500), "1.5 KB"},
		{FormatSize(999), "999 B"},
		{FormatSize(64_000), "64 KB"},
		{FormatSize(2_740_000), "2.74 MB"},
		{FormatSize(2_745_678), "2.746 MB"},
		{FormatSize(999_999), "1 MB"},
		{FormatSize(32_000_000), "32 MB"},
		{FormatSize(4096), "4 KiB"},
		{FormatSize(32 << 20), "32 MiB"},
		{FormatSize(2_048_000), "2.048 MB"},
		{FormatSize(1 << 30), "1 GiB"},
		{FormatBytes(2.74e6), "2.74 MB"},
		{FormatBytes(0), "0 B"},
		{FormatBytes(math.NaN()), "NaN B"},
		{FormatSizeBinary(1 << 20), "1 MiB"},
		{FormatSizeBinary(512 << 10), "512 KiB"},
		{FormatSizeBinary(3 << 29), "1.5 GiB"},
		{FormatSizeBinary(8), "8 B"},
		{FormatRate(400e9), "400 Gb/s"},
		{FormatRate(12.5e6), "12.5 Mb/s"},
		{FormatRate(312.44e9), "312.4 Gb/s"},
		{FormatRate(1.6e12), "1.6 Tb/s"},
		{FormatRate(0), "0 b/s"},
		{FormatRate(999), "999 b/s"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestPrintedParsesBack: whatever rocelab prints, it reads back.
func TestPrintedParsesBack(t *testing.T) {
	for _, n := range []int64{0, 1, 1500, 4096, 64_000, 2_740_000, 32 << 20, 1 << 30, 1e12} {
		s := FormatSize(n)
		got, err := ParseSize(s)
		if err != nil {
			t.Errorf("ParseSize(FormatSize(%d) = %q): %v", n, s, err)
		} else if got != n {
			t.Errorf("ParseSize(FormatSize(%d) = %q) = %d", n, s, got)
		}
	}
	for _, n := range []int64{0, 8, 4096, 512 << 10, 32 << 20, 3 << 29} {
		b := FormatSizeBinary(n)
		if got, err := ParseSizeBinary(b); err != nil || got != n {
			t.Errorf("ParseSizeBinary(FormatSizeBinary(%d) = %q) = %d, %v", n, b, got, err)
		}
	}
	for _, r := range []float64{1000, 12.5e6, 25e9, 100e9, 400e9, 1.6e12} {
		s := FormatRate(r)
		if got, err := ParseRate(s); err != nil || float64(got) != r {
			t.Errorf("ParseRate(FormatRate(%v) = %q) = %d, %v", r, s, got, err)
		}
	}
}
