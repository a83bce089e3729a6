package run

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
)

// An emulated run with a report records time series as the simulator's
// sampler does, from the nodes' telemetry: it reads every switch node and
// every endpoint node about seriesPoints times over the run (at most
// every minSeriesEvery of wall time, so that the reading does not load
// the machine the lab runs on: at the scale a lab in one group runs at,
// k = 100, 5 ms of wall time is 50 µs of fabric time, fine enough to
// show a pause of a few hundred µs; at 20 ms a 2 ms run had 10 readings
// 200 µs apart, and the state of its pauses at those instants drew a
// timeline that contradicted the summary) and turns the readings into
// simlab.Series of the same names — queue depths, pause states and
// pause-time counters, buffer use, the ports' byte counters the replay's
// link utilisation is computed from, the NICs' pause-time counters and
// the perf flows' bytes. Each node's reading is kept at the fabric time
// the node took it (nodeapi.Telemetry.FabricTime), not the time the round
// began: the nodes of a round answer one after the other, and a switch
// read later than its peer showed a pause before the XOFF that caused it.
const (
	seriesPoints   = 200
	minSeriesEvery = 5 * time.Millisecond
)

// seriesGauges and seriesCounters are the samples recorded; switchSeries
// those a switch is asked for, nicSeries those an endpoint node is.
var (
	seriesGauges   = []string{"switch_buffer_used_bytes", "switch_queue_depth_bytes", "switch_queue_paused", "switch_pg_xoff"}
	seriesCounters = []string{"switch_port_tx_bytes_total", "switch_port_rx_bytes_total",
		"switch_pg_xoff_seconds_total", "switch_queue_paused_seconds_total", "nic_paused_seconds_total", flowBytes}
	switchSeries = append(slices.Clone(seriesGauges), seriesCounters[:4]...)
	nicSeries    = []string{"nic_paused_seconds_total"}
)

// flowJob is one perf flow's client job on its node: recordSeries reads
// its completed bytes, and flowRates makes them the flow's rate series.
type flowJob struct {
	node   string
	job    string
	labels []telemetry.Label // job, from, to
	line   clock.Rate        // the receiving NIC's line rate
	start  clock.Duration    // the workload's start: no rate before it
}

// flowBytes is the name the readings of a flow job's bytes are kept under.
const flowBytes = "perf_flow_bytes"

// addFlowJob registers the client job of perf flow f of workload name,
// which starts at start.
func (e *emuRun) addFlowJob(name string, f jobs.Flow, job int, line clock.Rate, start clock.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.flowJobs = append(e.flowJobs, flowJob{node: f.From.Node, job: strconv.Itoa(job), line: line, start: start,
		labels: []telemetry.Label{{Name: "job", Value: name}, {Name: "from", Value: f.From.NIC}, {Name: "to", Value: f.To.NIC}}})
}

// recordSeries reads the nodes every interval until ctx ends (started
// only when the run writes a report), then once more: on a busy machine a
// short run can end before a tick's reading comes back (the readings
// under way are cancelled with ctx), and the last reading, taken after
// the run, is what keeps such a report from having no series.
func (e *emuRun) recordSeries(ctx context.Context) {
	every := max(e.wall(e.sc.Duration)/seriesPoints, minSeriesEvery)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			e.readSeries(last)
			return
		case <-tick.C:
		}
		e.readSeries(ctx)
	}
}

// runTime is the run's fabric time of the nodes' fabric time t (the
// inverse of nodeTime).
func (e *emuRun) runTime(t clock.Time) clock.Time {
	return clock.Time(clock.Duration(t) - clock.Duration(e.nodeTime(0)))
}

// readSeries takes one reading of every switch's series samples and
// every endpoint node's pause times and perf flows' bytes, and keeps each
// node's at the time it was taken, unless the run had not begun.
func (e *emuRun) readSeries(ctx context.Context) {
	// Every node at once, each asked for the samples recorded only:
	// a lab in one group answers them all from one loop, and whole
	// telemetry dumps one after the other gave 3–4 readings in a
	// run meant to have 25.
	e.mu.Lock()
	fjs := slices.Clone(e.flowJobs)
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range e.lab.Nodes {
		names := nicSeries
		if n.Kind == topologies.KindSwitch {
			names = switchSeries
		}
		var mine []flowJob
		for _, fj := range fjs {
			if fj.node == n.Name {
				mine = append(mine, fj)
			}
		}
		if len(mine) > 0 {
			names = append(slices.Clone(names), "job_bytes_total")
		}
		c := e.clients[n.Name]
		if c == nil {
			continue
		}
		wg.Go(func() {
			// A dead node is a problem the snapshots report.
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			at, got, err := c.TelemetryAt(rctx, names...)
			if err != nil {
				return
			}
			snap := readingOf(e.runTime(at), got, mine)
			if snap.At < 0 || len(snap.Samples) == 0 {
				return
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			e.seriesSnaps = append(e.seriesSnaps, snap)
		})
	}
	wg.Wait()
}

// readingOf is one node's reading at run time at: its samples, the job
// byte counters of its perf flows renamed flowBytes and labelled as the
// flow.
func readingOf(at clock.Time, got []telemetry.Sample, jobs []flowJob) expect.Snapshot {
	snap := expect.Snapshot{At: at}
	for _, x := range got {
		if x.Name != "job_bytes_total" {
			snap.Samples = append(snap.Samples, x)
			continue
		}
		for _, fj := range jobs {
			if x.Label("job") == fj.job {
				snap.Samples = append(snap.Samples, telemetry.Sample{Name: flowBytes, Kind: telemetry.Counter, Labels: fj.labels, Value: x.Value})
			}
		}
	}
	return snap
}

// flowRates turns the flows' byte series into
// perf_flow_rate_bytes_per_second series, as the simulator's sampler
// records them: the rate over the interval since the previous reading, at
// the reading that ends it, bytes beyond what an interval could carry at
// the receiving NIC's line rate counted in the next one (a message counts
// when it completes). A flow has no rate before its workload's start: an
// interval that began before it counts from the start, and readings up to
// the start give no point (the plot drew a flow starting at 100 µs from
// t = 0); a flow first read after its start counts its bytes from the
// start. Other series pass unchanged.
func flowRates(in []simlab.Series, jobs []flowJob) []simlab.Series {
	byKey := map[string]flowJob{}
	for _, fj := range jobs {
		byKey[labelKey(fj.labels)] = fj
	}
	var out []simlab.Series
	for _, s := range in {
		if s.Name != flowBytes {
			out = append(out, s)
			continue
		}
		fj := byKey[labelKey(s.Labels)]
		start := clock.Time(0).Add(fj.start)
		r := simlab.Series{Name: "perf_flow_rate_bytes_per_second", Labels: s.Labels, Kind: telemetry.Gauge, Width: s.Width}
		pts := s.Points
		if len(pts) > 0 && pts[0].T > start {
			// First read after the start (the flow's job was
			// registered late): its bytes count from the start.
			pts = append([]simlab.Point{{T: start}}, pts...)
		}
		carry := 0.0
		for j := 1; j < len(pts); j++ {
			a, b := pts[j-1], pts[j]
			if b.T <= start {
				continue
			}
			dt := b.T.Sub(max(a.T, start)).Seconds()
			if dt <= 0 {
				continue
			}
			got := max(b.V-a.V, 0) + carry
			shown := got
			if fj.line > 0 {
				shown = min(got, float64(fj.line)/8*dt)
			}
			carry = got - shown
			v := shown / dt
			r.Points = append(r.Points, simlab.Point{T: b.T, V: v, Min: v, Max: v})
			t := &r.Totals
			if t.Count == 0 {
				t.Min, t.Max = v, v
			}
			t.Count++
			t.Sum += v
			t.Min, t.Max, t.Last = min(t.Min, v), max(t.Max, v), v
		}
		if len(r.Points) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// seriesOf turns readings into series: one per sample name and labels, a
// point per reading that has it, in time order, its width the median
// spacing of the series' readings (each node's readings are at the times
// it took them, so series of different nodes have different times).
// Gauges that never left 0 and counters that never moved are left out,
// as the sampler leaves out what it does not probe.
func seriesOf(snaps expect.Snapshots) []simlab.Series {
	snaps = slices.Clone(snaps)
	slices.SortStableFunc(snaps, func(a, b expect.Snapshot) int { return cmp.Compare(a.At, b.At) })
	byKey := map[string]*simlab.Series{}
	var keys []string
	for _, sn := range snaps {
		for _, s := range sn.Samples {
			k := s.Name + "{" + labelKey(s.Labels) + "}"
			ser := byKey[k]
			if ser == nil {
				kind := telemetry.Gauge
				if slices.Contains(seriesCounters, s.Name) {
					kind = telemetry.Counter
				}
				ser = &simlab.Series{Name: s.Name, Labels: s.Labels, Kind: kind,
					Totals: simlab.Totals{Min: s.Value, Max: s.Value}}
				byKey[k] = ser
				keys = append(keys, k)
			}
			ser.Points = append(ser.Points, simlab.Point{T: sn.At, V: s.Value, Min: s.Value, Max: s.Value})
			t := &ser.Totals
			t.Count++
			t.Sum += s.Value
			t.Min, t.Max, t.Last = min(t.Min, s.Value), max(t.Max, s.Value), s.Value
		}
	}
	sort.Strings(keys)
	var out []simlab.Series
	for _, k := range keys {
		s := byKey[k]
		flat := s.Totals.Min == s.Totals.Max
		if len(s.Points) < 2 || s.Kind == telemetry.Gauge && flat && s.Totals.Max == 0 || s.Kind == telemetry.Counter && flat {
			continue
		}
		var gaps []clock.Duration
		for i := 1; i < len(s.Points); i++ {
			gaps = append(gaps, s.Points[i].T.Sub(s.Points[i-1].T))
		}
		slices.Sort(gaps)
		s.Width = max(gaps[len(gaps)/2], clock.Picosecond)
		out = append(out, *s)
	}
	return out
}
