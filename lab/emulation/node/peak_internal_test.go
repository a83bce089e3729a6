package node

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
)

// TestPeakWithinLineRate: however completions bunch (the loop fell behind
// and delivered many in one turn), the peak never exceeds the line rate,
// and evenly spaced completions at line rate read as line rate.
func TestPeakWithinLineRate(t *testing.T) {
	const size = 65536
	rate := 400 * clock.Gbps
	gap := rate.Serialize(size)
	even := func(n int, gap clock.Duration) []clock.Time {
		var d []clock.Time
		for i := range n {
			d = append(d, clock.Time(0).Add(clock.Duration(i+1)*gap))
		}
		return d
	}
	bunched := even(200, gap)
	for i := 150; i < 200; i++ {
		bunched[i] = bunched[199] // the last quarter arrives in one loop turn
	}
	late := even(200, gap)
	for i := 100; i < 200; i++ {
		late[i] = late[i].Add(-clock.Duration(i-100) * gap / 2) // squeezed: 2x line rate
	}
	for _, tc := range []struct {
		name     string
		d        []clock.Time
		min, max float64 // Gb/s
	}{
		{"even at line rate", even(200, gap), 390, 400.001},
		{"bunched", bunched, 390, 400.001},
		{"squeezed to twice line rate", late, 390, 400.001},
		{"half line rate", even(200, 2*gap), 195, 200.001},
	} {
		if got := peakGbps(tc.d, 0, size, rate); got < tc.min || got > tc.max {
			t.Errorf("%s: peak %.2f Gb/s, want within [%v, %v]", tc.name, got, tc.min, tc.max)
		}
	}
	// Without the line rate (the old definition) the squeezed run reads
	// above it: the case above can fail.
	if got := peakGbps(late, 0, size, 0); got <= 400.001 {
		t.Errorf("squeezed, windows bounded by completions only: %.2f Gb/s, want above the line rate", got)
	}
}
