package run

import (
	"math"
	"slices"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
)

// TestSeriesOf: switch readings become series of the sampler's names, a
// point per reading, the width the readings' spacing; all-zero gauges and
// counters that never moved are left out.
func TestSeriesOf(t *testing.T) {
	port := func(p string) []telemetry.Label {
		return []telemetry.Label{{Name: "node", Value: "sw1"}, {Name: "port", Value: p}, {Name: "tc", Value: "3"}}
	}
	var snaps expect.Snapshots
	for i := range 5 {
		at := clock.Time(0).Add(clock.Duration(i) * 10 * clock.Microsecond)
		snaps = append(snaps, expect.Snapshot{At: at, Samples: []telemetry.Sample{
			{Name: "switch_queue_depth_bytes", Labels: port("0"), Value: float64(i * 1000)},
			{Name: "switch_queue_depth_bytes", Labels: port("1"), Value: 0},
			{Name: "switch_port_tx_bytes_total", Labels: port("0")[:2], Value: float64(i * 5000)},
			{Name: "switch_port_tx_bytes_total", Labels: port("1")[:2], Value: 7},
		}})
	}
	got := seriesOf(snaps)
	if len(got) != 2 {
		t.Fatalf("%d series, want the moving depth and the moving counter: %+v", len(got), got)
	}
	for _, s := range got {
		if s.Label("port") != "0" || len(s.Points) != 5 || s.Width != 10*clock.Microsecond {
			t.Errorf("%s %v: %d points of width %v, want port 0, 5 points of 10µs", s.Name, s.Labels, len(s.Points), s.Width)
		}
	}
	if got[1].Name != "switch_queue_depth_bytes" || got[1].Totals.Max != 4000 || got[1].Kind != telemetry.Gauge {
		t.Errorf("depth series %+v", got[1])
	}
	if got[0].Kind != telemetry.Counter || got[0].Totals.Last != 20000 {
		t.Errorf("counter series %+v", got[0])
	}
	if seriesOf(snaps[:1]) != nil {
		t.Error("one reading made a series")
	}
}

// TestFlowRates: a flow's completed bytes become its rate series, never
// above the receiving NIC's line rate, the excess shown later.
func TestFlowRates(t *testing.T) {
	labels := []telemetry.Label{{Name: "job", Value: "j"}, {Name: "from", Value: "a:gpu0"}, {Name: "to", Value: "b:gpu0"}}
	us := clock.Microsecond
	in := []simlab.Series{{Name: flowBytes, Labels: labels, Kind: telemetry.Counter, Width: 10 * us, Points: []simlab.Point{
		{T: 0, V: 0}, {T: clock.Time(0).Add(10 * us), V: 0}, {T: clock.Time(0).Add(20 * us), V: 250000}, {T: clock.Time(0).Add(30 * us), V: 250000},
	}}}
	// 100G carries 125,000 bytes in 10 µs: 250,000 completing at once
	// show as two full intervals.
	out := flowRates(in, []flowJob{{labels: labels, line: 100 * clock.Gbps}})
	if len(out) != 1 || out[0].Name != "perf_flow_rate_bytes_per_second" {
		t.Fatalf("series %+v", out)
	}
	var got []float64
	for _, p := range out[0].Points {
		got = append(got, math.Round(p.V*8/1e9*1000)/1000)
	}
	if !slices.Equal(got, []float64{0, 100, 100}) {
		t.Errorf("rates %v Gb/s, want [0 100 100]", got)
	}
}
