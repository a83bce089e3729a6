package node

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
)

// TestPeakWithinWireGoodput: however completions bunch (the loop fell
// behind and delivered many in one turn), the peak never exceeds the
// goodput the wire carries at the path MTU — 64 KiB WRITEs in 4096-byte
// packets on a 400G link: 392.15 Gb/s, not the 400 of the line rate — and
// completions spaced as the wire carries them read as that.
func TestPeakWithinWireGoodput(t *testing.T) {
	const size, mtu = 65536, 4096
	rate := 400 * clock.Gbps
	onWire := wire.MessageOnWire(size, mtu, wire.RETHLen)
	goodput := 400 * float64(size) / float64(onWire) // 392.15
	gap := rate.Serialize(size)                      // at line rate: faster than the wire can
	wireGap := rate.Serialize(onWire)
	even := func(n int, gap clock.Duration) []clock.Time {
		var d []clock.Time
		for i := range n {
			d = append(d, clock.Time(0).Add(clock.Duration(i+1)*gap))
		}
		return d
	}
	bunched := even(200, wireGap)
	for i := 150; i < 200; i++ {
		bunched[i] = bunched[199] // the last quarter arrives in one loop turn
	}
	late := even(200, wireGap)
	for i := 100; i < 200; i++ {
		late[i] = late[i].Add(-clock.Duration(i-100) * wireGap / 2) // squeezed: 2x
	}
	for _, tc := range []struct {
		name     string
		d        []clock.Time
		min, max float64 // Gb/s
	}{
		{"even at the wire's goodput", even(200, wireGap), goodput - 0.01, goodput + 0.001},
		{"even at line rate", even(200, gap), goodput - 0.01, goodput + 0.001},
		{"bunched", bunched, goodput - 2, goodput + 0.001},
		{"squeezed to twice the goodput", late, goodput - 2, goodput + 0.001},
		{"half line rate", even(200, 2*gap), 199.99, 200.001},
	} {
		if got := peakGbps(tc.d, 0, size, onWire, rate); got < tc.min || got > tc.max {
			t.Errorf("%s: peak %.2f Gb/s, want within [%.2f, %.2f]", tc.name, got, tc.min, tc.max)
		}
	}
	// Without the line rate (the first definition) the squeezed run reads
	// above it: the cases above can fail.
	if got := peakGbps(late, 0, size, onWire, 0); got <= goodput+0.001 {
		t.Errorf("squeezed, windows bounded by completions only: %.2f Gb/s, want above the wire's goodput", got)
	}
}
