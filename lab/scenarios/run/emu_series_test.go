package run

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/scenarios/report"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
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

// TestEmulatedPauseOrder: the emulation reads its nodes one after the
// other; each reading is kept at the time the node took it, and the PFC
// timeline drawn from the pause-time counters keeps cause before effect.
// Here sw2 holds p5 in XOFF from 101 to 300 µs and sw1's p5 is paused
// from 103 to 302 µs; each round reads sw2 0.5 µs and sw1 4 µs after it
// begins. Labelled with the round's time (as before issue 51), the same
// readings drew sw1 paused from 100 µs and sw2's XOFF from 200 µs.
func TestEmulatedPauseOrder(t *testing.T) {
	sc, err := scenario.Load("../../../examples/01-incast-hol/scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	us := func(f float64) clock.Time { return clock.Time(f * float64(clock.Microsecond)) }
	lbl := func(node, port, class, v string) []telemetry.Label {
		return []telemetry.Label{{Name: "node", Value: node}, {Name: "port", Value: port}, {Name: class, Value: v}}
	}
	// on is the state and the paused seconds so far at t of a pause
	// from a to b.
	on := func(t, a, b float64) (float64, float64) {
		state := 0.0
		if t >= a && t < b {
			state = 1
		}
		return state, max(min(t, b)-a, 0) / 1e6
	}
	var perNode, perRound expect.Snapshots
	for _, round := range []float64{0, 100, 200, 300, 400} {
		xs, xt := on(round+0.5, 101, 300)
		ps, pt := on(round+4, 103, 302)
		sw2 := []telemetry.Sample{
			{Name: "switch_pg_xoff", Kind: telemetry.Gauge, Labels: lbl("sw2", "0", "pg", "3"), Value: xs},
			{Name: "switch_pg_xoff_seconds_total", Kind: telemetry.Counter, Labels: lbl("sw2", "0", "pg", "3"), Value: xt},
		}
		sw1 := []telemetry.Sample{
			{Name: "switch_queue_paused", Kind: telemetry.Gauge, Labels: lbl("sw1", "4", "tc", "3"), Value: ps},
			{Name: "switch_queue_paused_seconds_total", Kind: telemetry.Counter, Labels: lbl("sw1", "4", "tc", "3"), Value: pt},
		}
		perNode = append(perNode, readingOf(us(round+0.5), sw2, nil), readingOf(us(round+4), sw1, nil))
		perRound = append(perRound, expect.Snapshot{At: us(round), Samples: append(slices.Clone(sw2), sw1...)})
	}
	rows := report.Pauses(report.Data{Series: seriesOf(perNode)})
	checkPauseOrder(t, sc.Topology, rows, 1)
	want := map[int][]report.Span{
		report.PauseXOFF:   {{From: us(101), To: us(300)}},
		report.PauseEgress: {{From: us(103), To: us(302)}},
	}
	for _, r := range rows {
		if d := cmp.Diff(want[r.Kind], r.Spans); d != "" {
			t.Errorf("%s: spans (-want +got):\n%s", r.Name, d)
		}
	}
	// The control: labelled with the round's time, the receiver came first.
	var gauges []simlab.Series
	for _, s := range seriesOf(perRound) {
		if !strings.HasSuffix(s.Name, "_seconds_total") {
			gauges = append(gauges, s)
		}
	}
	old := report.Pauses(report.Data{Series: gauges})
	if len(old) != 2 || !(old[1].Spans[0].From < old[0].Spans[0].From) {
		t.Errorf("control: the round-labelled states drew %+v, want sw1 paused before sw2's XOFF", old)
	}
}

// TestFlowRatesFromStart: a flow whose workload starts at 100 µs has no
// rate point before 100 µs, though the emulation read its bytes (0) from
// the run's start; the first interval counts from the start.
func TestFlowRatesFromStart(t *testing.T) {
	labels := []telemetry.Label{{Name: "job", Value: "j"}, {Name: "from", Value: "a:gpu0"}, {Name: "to", Value: "b:gpu0"}}
	us := func(n int) clock.Time { return clock.Time(0).Add(clock.Duration(n) * clock.Microsecond) }
	in := []simlab.Series{{Name: flowBytes, Labels: labels, Kind: telemetry.Counter, Width: 100 * clock.Microsecond, Points: []simlab.Point{
		{T: us(0), V: 0}, {T: us(50), V: 0}, {T: us(200), V: 1_250_000}, {T: us(300), V: 2_500_000},
	}}}
	out := flowRates(in, []flowJob{{labels: labels, line: 100 * clock.Gbps, start: 100 * clock.Microsecond}})
	if len(out) != 1 {
		t.Fatalf("series %+v", out)
	}
	var got []string
	for _, p := range out[0].Points {
		got = append(got, fmt.Sprintf("%v %.0fG", p.T, p.V*8/1e9))
	}
	// 1.25 MB in the 100 µs from the start to the reading at 200 µs: 100G.
	if d := cmp.Diff([]string{"200us 100G", "300us 100G"}, got); d != "" {
		t.Errorf("rate points (-want +got):\n%s", d)
	}
}
