package jobs

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
)

// TestPerfEstimate: a long bandwidth test says its wall time up front (a
// 64-host lab at k = 120,812 ran a default perf ~160 s in silence).
func TestPerfEstimate(t *testing.T) {
	for _, tc := range []struct {
		spec  PerfSpec
		rate  clock.Rate
		scale int
		want  string // "" none
	}{
		{PerfSpec{Iterations: 1000, QPs: 1, Size: 65536}, 400 * clock.Gbps, 120812, "expect about 2m38s of wall time"},
		{PerfSpec{Iterations: 1000, QPs: 1, Size: 65536}, 400 * clock.Gbps, 1888, ""},
		{PerfSpec{Duration: 10 * clock.Millisecond, QPs: 1, Size: 65536}, 400 * clock.Gbps, 1888, "expect about 19s of wall time"},
		{PerfSpec{Latency: true, Iterations: 1000, QPs: 1, Size: 2}, 400 * clock.Gbps, 120812, ""},
	} {
		got := Estimate(tc.spec, tc.rate, tc.scale)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("Estimate(%+v, %v, %d) = %q, want %q", tc.spec, tc.rate, tc.scale, got, tc.want)
		}
	}
}
