package clock

import "testing"

func TestSerialize(t *testing.T) {
	tests := []struct {
		rate Rate
		n    int
		want Duration
	}{
		{400 * Gbps, 1, 20 * Picosecond},
		{100 * Gbps, 1500, 120 * Nanosecond},
		{25 * Gbps, 1, 320 * Picosecond},
		{3 * Gbps, 1, 2667 * Picosecond}, // 2666.67 rounded up
		{400 * Gbps, 32 << 20, 671088640 * Picosecond},
		{1600 * Gbps, 1 << 30, 5368709120 * Picosecond},
		{0, 100, 0},
	}
	for _, tc := range tests {
		if got := tc.rate.Serialize(tc.n); got != tc.want {
			t.Errorf("%v.Serialize(%d) = %d, want %d", tc.rate, tc.n, got, tc.want)
		}
	}
}

func TestDurationString(t *testing.T) {
	tests := []struct {
		d    Duration
		want string
	}{
		{0, "0s"},
		{20, "20ps"},
		{1500 * Picosecond, "1.5ns"},
		{2 * Microsecond, "2us"},
		{55 * Microsecond, "55us"},
		{3 * Millisecond, "3ms"},
		{2 * Second, "2s"},
	}
	for _, tc := range tests {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("Duration(%d).String() = %q, want %q", int64(tc.d), got, tc.want)
		}
	}
	if got := (400 * Gbps).String(); got != "400G" {
		t.Errorf("Rate.String = %q", got)
	}
}
