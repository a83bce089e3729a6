package units

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
)

// TestGrammar is the grammar, spelling by spelling: every unit rocelab
// prints or has accepted somewhere is accepted here, with one meaning.
func TestGrammar(t *testing.T) {
	size := func(s string) (int64, error) { return ParseSize(s) }
	binary := func(s string) (int64, error) { return ParseSizeBinary(s) }
	rate := func(s string) (int64, error) { r, err := ParseRate(s); return int64(r), err }
	dur := func(s string) (int64, error) { d, err := ParseDuration(s); return int64(d), err }
	for _, tc := range []struct {
		parse   func(string) (int64, error)
		in      string
		want    int64
		wantErr string
	}{
		// sizes: decimal prefixes, binary with "i"
		{size, "1500", 1500, ""},
		{size, "0", 0, ""},
		{size, "64B", 64, ""},
		{size, "64 B", 64, ""},
		{size, "64KB", 64_000, ""},
		{size, "64kB", 64_000, ""},
		{size, "64kb", 0, `"kb" is bits, write kB`},
		{size, "64b", 0, `"b" is bits`},
		{size, "64KiB", 64 << 10, ""},
		{size, "64 KiB", 64 << 10, ""},
		{size, "64K", 64_000, ""},
		{size, "2.74 MB", 2_740_000, ""},
		{size, "2.74M", 2_740_000, ""},
		{size, "2.74MB", 2_740_000, ""},
		{size, "32MiB", 32 << 20, ""},
		{size, "1.5 MiB", 3 << 19, ""},
		{size, "2GB", 2e9, ""},
		{size, "1G", 1e9, ""},
		{size, "1TB", 1e12, ""},
		{size, "1T", 1e12, ""},
		{size, "1TiB", 1 << 40, ""},
		{size, "  9000  ", 9000, ""},
		{size, ".5KB", 500, ""},
		{size, "1e3", 1000, ""},
		{size, "0.5B", 0, "not a whole number of bytes"},
		{size, "32Mb", 0, `"Mb" is bits`},
		{size, "32Gbps", 0, "is a rate, not a size"},
		{size, "32MBs", 0, `unknown unit "MBs"`},
		{size, "32XB", 0, `unknown unit "XB"`},
		{size, "-1KB", 0, "negative size"},
		{size, "MB", 0, "want a number and a unit"},
		{size, "1.2.3MB", 0, "unknown unit"},
		{size, "", 0, "empty size"},
		{size, "99999999TB", 0, "too large"},
		{size, "1e99999KB", 0, "exponent out of range"},
		// sizes a format defines as binary (nccl-tests, perftest)
		{binary, "8", 8, ""},
		{binary, "512K", 512 << 10, ""},
		{binary, "1MB", 1 << 20, ""},
		{binary, "4MiB", 4 << 20, ""},
		{binary, "2g", 2 << 30, ""},
		{binary, "4b", 0, "is bits"},
		{binary, "1 M", 1 << 20, ""},
		{binary, "1Mb", 0, "is bits"},
		// rates: bits per second, any of the spellings rocelab prints
		{rate, "400G", 400e9, ""},
		{rate, "400Gbps", 400e9, ""},
		{rate, "400Gb/s", 400e9, ""},
		{rate, "400 Gb/s", 400e9, ""},
		{rate, "400 G", 400e9, ""},
		{rate, "400Gbit/s", 400e9, ""},
		{rate, "400g", 400e9, ""},
		{rate, "1T", 1e12, ""},
		{rate, "1.6Tbps", 1.6e12, ""},
		{rate, "100Mbps", 100e6, ""},
		{rate, "12.5 Mb/s", 12.5e6, ""},
		{rate, "10K", 10e3, ""},
		{rate, "10 Kb/s", 10e3, ""},
		{rate, "10kbps", 10e3, ""},
		{rate, "1000bps", 1000, ""},
		{rate, "1000 b/s", 1000, ""},
		{rate, "0", 0, ""},
		{rate, "400", 0, "needs a unit"},
		{rate, "400GB", 0, "is bytes"},
		{rate, "400GB/s", 0, "is bytes"},
		{rate, "400GBps", 0, "is bytes"},
		{rate, "400Gb", 0, `unknown unit "Gb"`},
		{rate, "400X", 0, `unknown unit "X"`},
		{rate, "-1G", 0, "negative rate"},
		{rate, "0.5bps", 0, "not a whole number of bits per second"},
		// durations: picoseconds underneath
		{dur, "1us", int64(clock.Microsecond), ""},
		{dur, "1µs", int64(clock.Microsecond), ""},
		{dur, "1μs", int64(clock.Microsecond), ""},
		{dur, "1 us", int64(clock.Microsecond), ""},
		{dur, "500ns", 500e3, ""},
		{dur, "1.5us", 1500e3, ""},
		{dur, "20ps", 20, ""},
		{dur, "100ms", 100e9, ""},
		{dur, "2s", 2e12, ""},
		{dur, "0", 0, ""},
		{dur, "0s", 0, ""},
		{dur, "10", 0, "needs a unit"},
		{dur, "0.5ps", 0, "not a whole number of picoseconds"},
		{dur, "5 min", 0, `unknown unit "min"`},
		{dur, "-1us", 0, "negative duration"},
	} {
		got, err := tc.parse(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parse %q = %d, %v; want error containing %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parse %q = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestJoinQuantities(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"rate 400 Gb/s queue 64 KB", "rate 400Gb/s queue 64KB"},
		{"rate 400Gb/s", "rate 400Gb/s"},
		{"delay 10 us 2 us", "delay 10us 2us"},
		{"loss 1 %", "loss 1 %"},
		{"flap 3 up", "flap 3 up"},
		{"400 Gb/s", "400Gb/s"},
		{"400", "400"},
	} {
		got := strings.Join(JoinQuantities(strings.Fields(tc.in)), " ")
		if got != tc.want {
			t.Errorf("JoinQuantities(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
