package run

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
)

// TestBehindOf: the verdict a run gets from its nodes' counters — on time
// at an idle machine's lateness, behind past a mean lateness of 200 ns per
// frame or a batch lag of 50 µs, frames over in-memory links excluded,
// the node that read most frames late named, and twice the k suggested.
func TestBehindOf(t *testing.T) {
	node := func(n string, rx, inloop, late float64, lateBy, lag clock.Duration) []telemetry.Sample {
		lb := []telemetry.Label{{Name: "node", Value: n}}
		return []telemetry.Sample{
			{Name: "emu_rx_frames_total", Labels: lb, Value: rx},
			{Name: "emu_rx_inloop_frames_total", Labels: lb, Value: inloop},
			{Name: "emu_rx_late_frames_total", Labels: lb, Value: late},
			{Name: "emu_rx_late_seconds_total", Labels: lb, Value: lateBy.Seconds()},
			{Name: "emu_batch_lag_seconds", Labels: append(lb, telemetry.Label{Name: "clock", Value: "fabric"}, telemetry.Label{Name: "quantile", Value: "1"}), Value: lag.Seconds()},
		}
	}
	us := clock.Microsecond
	for _, c := range []struct {
		name    string
		samples []telemetry.Sample
		behind  bool
		worst   string
	}{
		// Example 01, a process per node, k = 1000, idle (measured).
		{"idle", append(node("sw1", 20000, 0, 800, 800*us, 4*us), node("sw2", 8000, 0, 300, 300*us, 3*us)...), false, "sw1"},
		{"late frames", append(node("sw1", 20000, 0, 9000, 6000*us, 4*us), node("sw2", 8000, 0, 300, 300*us, 3*us)...), true, "sw1"},
		{"one long lag", node("h1", 1000, 0, 1, us, 80*us), true, "h1"},
		{"in-loop links are exact", node("g", 100000, 99000, 0, 0, 30*us), false, ""},
		{"nothing crossed", node("g", 5, 5, 0, 0, 0), false, ""},
	} {
		b := behindOf(c.samples, 1000)
		if b.Behind != c.behind || b.WorstNode != c.worst {
			t.Errorf("%s: %v (worst %q), want behind %v worst %q", c.name, b, b.WorstNode, c.behind, c.worst)
		}
		if c.behind && (b.Suggest != 2000 || !strings.Contains(b.String(), "k = 2000")) {
			t.Errorf("%s: suggests k = %d: %v", c.name, b.Suggest, b)
		}
	}
}
