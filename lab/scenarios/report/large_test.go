package report

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
)

// tierData is the data of an aggregated run on n RTSWs: switch i's
// deepest queue is i KB for the whole run, read every µs for 10 µs.
func tierData(n int) Data {
	topo := &topologies.Topology{Name: "synthetic"}
	d := Data{Aggregated: true, Verdict: Verdict{FabricTime: 10 * clock.Microsecond, Scenario: &scenario.Scenario{Topology: topo}}}
	for i := range n {
		name := fmt.Sprintf("rtsw%d", i+1)
		topo.Nodes = append(topo.Nodes, &topologies.Node{Name: name, Index: i + 1, Kind: topologies.KindSwitch, Role: topologies.RoleRTSW})
		s := simlab.Series{Name: simlab.AggSwitchDepth, Labels: []telemetry.Label{{Name: "node", Value: name}}, Kind: telemetry.Gauge, Width: clock.Microsecond}
		for k := range 10 {
			v := float64(i+1) * 1e3
			s.Points = append(s.Points, simlab.Point{T: clock.Time(k) * clock.Time(clock.Microsecond), V: v, Min: v, Max: v})
		}
		d.Series = append(d.Series, s)
	}
	return d
}

// TestQueueHeat: 450 switches are drawn in 200 rows, each the deepest of
// its 2 or 3 switches, in topology order; 50 switches in 50 rows.
func TestQueueHeat(t *testing.T) {
	for _, n := range []int{50, 450} {
		d := tierData(n)
		unit, mul := timeUnit(d.FabricTime)
		xmax := d.FabricTime.Seconds() * mul
		f := d.queueHeat("rtsw", d.switchesByTier()["rtsw"], unit, mul, xmax)
		if f == nil || f.Heat == nil {
			t.Fatalf("%d switches: no heat map", n)
		}
		h := f.Heat
		starts := bandStarts(n, maxBands)
		if len(h.V) != len(starts)-1 || len(h.V) != min(n, maxBands) {
			t.Fatalf("%d switches: %d rows, want %d", n, len(h.V), min(n, maxBands))
		}
		for b, row := range h.V {
			want := float64(starts[b+1]) * 1e3 // the band's last switch is its deepest
			for c, v := range row {
				if v != want {
					t.Fatalf("%d switches: row %d col %d = %g, want %g", n, b, c, v, want)
				}
			}
		}
		if h.Max != float64(n)*1e3 {
			t.Errorf("%d switches: scale max %g, want %g", n, h.Max, float64(n)*1e3)
		}
		if n > maxBands && h.Rows[0] != "rtsw1…rtsw3" {
			t.Errorf("first row named %q", h.Rows[0])
		}
		if _, _, err := f.render(); err != nil {
			t.Errorf("%d switches: render: %v", n, err)
		}
	}
}

// TestFCTChart: the CDF ends at the max, and its marks are the
// distribution's nearest-rank p50 and p99 and its max.
func TestFCTChart(t *testing.T) {
	var d fct.Dist
	for i := 1; i <= 1000; i++ {
		d.Add(clock.Duration(i) * clock.Microsecond)
	}
	f := fctChart(Job{Name: "perm", FCT: &d})
	if f == nil {
		t.Fatal("no chart")
	}
	var names []string
	for _, l := range f.Lines[1:] {
		names = append(names, l.Name)
	}
	if d := cmp.Diff([]string{"p50 = 500.0 µs", "p99 = 990.0 µs", "max = 1.000 ms"}, names); d != "" {
		t.Errorf("marks (-want +got):\n%s", d)
	}
	cdf := f.Lines[0]
	if n := len(cdf.X); n != cdfPoints+1 || cdf.X[n-1] != 1000 || cdf.Y[n-1] != 1 {
		t.Errorf("CDF of %d points ends at (%g, %g), want %d ending at (1000 µs, 1)", n, cdf.X[n-1], cdf.Y[n-1], cdfPoints+1)
	}
	if fctChart(Job{Name: "empty"}) != nil {
		t.Error("a chart for a job without completion times")
	}
}

// TestTiers: tiers come top first (then by name), each once; a
// front-end tier only if its queues held anything.
func TestTiers(t *testing.T) {
	var d Data
	for _, r := range []struct {
		role string
		peak float64
	}{{"rtsw", 1}, {"rsw", 0}, {"atsw", 0}, {"fsw", 5}, {"ctsw", 2}, {"switch", 0}} {
		for _, stat := range []string{"p50", "p99", "max"} {
			d.Series = append(d.Series, simlab.Series{Name: simlab.AggTierDepth,
				Labels: []telemetry.Label{{Name: "role", Value: r.role}, {Name: "stat", Value: stat}}, Totals: simlab.Totals{Max: r.peak}})
		}
	}
	if d := cmp.Diff([]string{"atsw", "ctsw", "fsw", "rtsw", "switch"}, d.tiers()); d != "" {
		t.Errorf("tiers (-want +got):\n%s", d)
	}
}

// TestHalve: points merge pairwise on a grid from the first point,
// gaps kept; a gauge's value is the mean of its parts, a counter's the
// later one.
func TestHalve(t *testing.T) {
	us := func(n int) clock.Time { return clock.Time(n) * clock.Time(clock.Microsecond) }
	pt := func(at int, v float64) simlab.Point { return simlab.Point{T: us(at), V: v, Min: v, Max: v} }
	in := []simlab.Point{pt(1, 1), pt(2, 3), pt(3, 5), pt(6, 7), pt(7, 9)}
	tests := []struct {
		kind telemetry.Kind
		want []simlab.Point
	}{
		{telemetry.Gauge, []simlab.Point{{T: us(1), V: 2, Min: 1, Max: 3}, {T: us(3), V: 5, Min: 5, Max: 5}, {T: us(5), V: 7, Min: 7, Max: 7}, {T: us(7), V: 9, Min: 9, Max: 9}}},
		{telemetry.Counter, []simlab.Point{{T: us(1), V: 3, Min: 1, Max: 3}, {T: us(3), V: 5, Min: 5, Max: 5}, {T: us(5), V: 7, Min: 7, Max: 7}, {T: us(7), V: 9, Min: 9, Max: 9}}},
	}
	for _, tc := range tests {
		got := halve(simlab.Series{Kind: tc.kind, Width: clock.Microsecond, Points: in})
		if d := cmp.Diff(tc.want, got.Points); d != "" || got.Width != 2*clock.Microsecond {
			t.Errorf("%v: width %v, points (-want +got):\n%s", tc.kind, got.Width, d)
		}
	}
}

// TestThin: an aggregated run's series over fullPoints are merged until
// each fits its share; under it they stay as they are.
func TestThin(t *testing.T) {
	mk := func(n, points int) []simlab.Series {
		out := make([]simlab.Series, n)
		for i := range out {
			out[i] = simlab.Series{Kind: telemetry.Gauge, Width: clock.Microsecond}
			for k := range points {
				out[i].Points = append(out[i].Points, simlab.Point{T: clock.Time(k) * clock.Time(clock.Microsecond), V: 1, Min: 1, Max: 1})
			}
		}
		return out
	}
	if _, limit := thin(mk(100, 500)); limit != 0 {
		t.Errorf("50,000 points thinned to %d a series", limit)
	}
	got, limit := thin(mk(3624, 500)) // seed-24k's switches, three series each
	total := 0
	for _, s := range got {
		total += len(s.Points)
		if len(s.Points) > limit || s.Width != 8*clock.Microsecond {
			t.Fatalf("a series of %d points %v wide, want at most %d, 8 µs", len(s.Points), s.Width, limit)
		}
	}
	if limit != fullPoints/3624 || total > fullPoints {
		t.Errorf("limit %d, %d points in all; want %d, at most %d", limit, total, fullPoints/3624, fullPoints)
	}
}

// TestChooseDetailAggregated: an aggregated run whose final snapshot is
// too large is summarized, but every series keeps its points.
func TestChooseDetailAggregated(t *testing.T) {
	d := Data{Aggregated: true, Series: make([]simlab.Series, 100)}
	for i := range d.Series {
		d.Series[i] = simlab.Series{Name: "switch_tx_bytes_total", Points: make([]simlab.Point, 10)}
	}
	for i := range fullSamples + 1 {
		d.Final = append(d.Final, telemetry.Sample{Name: "x", Value: float64(i)})
	}
	det := chooseDetail(d)
	if !det.summarized || !det.allSeries {
		t.Fatalf("summarized %v, all series %v; want both", det.summarized, det.allSeries)
	}
	for i := range d.Series {
		if !det.writesPoints(i) {
			t.Fatalf("series %d loses its points", i)
		}
	}
	d.Aggregated = false
	if det := chooseDetail(d); det.allSeries || det.writesPoints(hotSeries) {
		t.Error("a small lab's summarized report keeps every series")
	}
}

// TestPauseHeat: a switch whose 4 queues were paused half a µs of every
// µs (one at a time) reads 12.5 % throughout; one never paused, 0; a
// tier never paused draws no map.
func TestPauseHeat(t *testing.T) {
	topo := &topologies.Topology{Name: "synthetic"}
	d := Data{Aggregated: true, Verdict: Verdict{FabricTime: 10 * clock.Microsecond, Scenario: &scenario.Scenario{Topology: topo}}}
	d.Series = append(d.Series, simlab.Series{Name: simlab.AggTierQueues, Labels: []telemetry.Label{{Name: "role", Value: "rtsw"}},
		Totals: simlab.Totals{Last: 8}})
	for i, per := range []float64{0.5e-6, 0} {
		name := fmt.Sprintf("rtsw%d", i+1)
		topo.Nodes = append(topo.Nodes, &topologies.Node{Name: name, Index: i + 1, Kind: topologies.KindSwitch, Role: topologies.RoleRTSW,
			Ports: make([]*topologies.Port, 4)})
		s := simlab.Series{Name: simlab.AggSwitchPaused, Labels: []telemetry.Label{{Name: "node", Value: name}}, Kind: telemetry.Counter, Width: clock.Microsecond}
		for k := range 11 {
			v := per * float64(k)
			s.Points = append(s.Points, simlab.Point{T: clock.Time(k) * clock.Time(clock.Microsecond), V: v, Min: v, Max: v})
			s.Totals.Max = v
		}
		d.Series = append(d.Series, s)
	}
	unit, mul := timeUnit(d.FabricTime)
	xmax := d.FabricTime.Seconds() * mul
	f := d.pauseHeat("rtsw", d.switchesByTier()["rtsw"], unit, mul, xmax)
	if f == nil {
		t.Fatal("no pause heat map")
	}
	for r, want := range []float64{12.5, 0} {
		for c, v := range f.Heat.V[r] {
			if math.Abs(v-want) > 1e-9 {
				t.Fatalf("row %d col %d = %g %%, want %g %%", r, c, v, want)
			}
		}
	}
	d.Series = d.Series[:1]
	if d.pauseHeat("rtsw", d.switchesByTier()["rtsw"], unit, mul, xmax) != nil {
		t.Error("a pause map of a tier without series")
	}
}
