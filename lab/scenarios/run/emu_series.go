package run

import (
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
// sampler does, from the switches' telemetry: it scrapes every switch
// node about seriesPoints times over the run (at most every
// minSeriesEvery of wall time, so that the scraping does not load the
// machine the lab runs on; a lab in one group runs a short scenario in
// well under a second, which at 50 ms gave a dozen readings and could
// miss a brief queue altogether) and turns the readings into simlab.Series of
// the same names — queue depths, pause states, buffer use, and the
// ports' byte counters the replay's link utilisation is computed from.
const (
	seriesPoints   = 100
	minSeriesEvery = 20 * time.Millisecond
)

// seriesGauges and seriesCounters are the samples recorded; switchSeries
// those a switch is asked for.
var (
	seriesGauges   = []string{"switch_buffer_used_bytes", "switch_queue_depth_bytes", "switch_queue_paused", "switch_pg_xoff"}
	seriesCounters = []string{"switch_port_tx_bytes_total", "switch_port_rx_bytes_total", flowBytes}
	switchSeries   = append(slices.Clone(seriesGauges), seriesCounters[:2]...)
)

// flowJob is one perf flow's client job on its node: recordSeries reads
// its completed bytes, and flowRates makes them the flow's rate series.
type flowJob struct {
	node   string
	job    string
	labels []telemetry.Label // job, from, to
	line   clock.Rate        // the receiving NIC's line rate
}

// flowBytes is the name the readings of a flow job's bytes are kept under.
const flowBytes = "perf_flow_bytes"

// addFlowJob registers the client job of perf flow f of workload name.
func (e *emuRun) addFlowJob(name string, f jobs.Flow, job int, line clock.Rate) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.flowJobs = append(e.flowJobs, flowJob{node: f.From.Node, job: strconv.Itoa(job), line: line,
		labels: []telemetry.Label{{Name: "job", Value: name}, {Name: "from", Value: f.From.NIC}, {Name: "to", Value: f.To.NIC}}})
}

// recordSeries scrapes the switches every interval until ctx ends
// (started only when the run writes a report), then once more: on a busy
// machine a short run can end before a tick's reading comes back (the
// readings under way are cancelled with ctx), and the last reading, taken
// after the run, is what keeps such a report from having no series.
func (e *emuRun) recordSeries(ctx context.Context) {
	every := max(e.wall(e.sc.Duration)/seriesPoints, minSeriesEvery)
	tick := time.NewTicker(every)
	defer tick.Stop()
	var switches []string
	for _, n := range e.lab.Nodes {
		if n.Kind == topologies.KindSwitch {
			switches = append(switches, n.Name)
		}
	}
	for {
		select {
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			e.readSeries(last, switches)
			return
		case <-tick.C:
		}
		e.readSeries(ctx, switches)
	}
}

// readSeries takes one reading of the switches' series samples and the
// perf flows' bytes and keeps it, unless the run has not begun or no
// switch answered (ctx ended under way).
func (e *emuRun) readSeries(ctx context.Context, switches []string) {
	at := e.fabricNow()
	if at < 0 {
		return
	}
	// Every node at once, each asked for the samples recorded only:
	// a lab in one group answers them all from one loop, and whole
	// telemetry dumps one after the other gave 3–4 readings in a
	// run meant to have 25.
	e.mu.Lock()
	fjs := slices.Clone(e.flowJobs)
	e.mu.Unlock()
	byNode := map[string][]flowJob{}
	for _, fj := range fjs {
		byNode[fj.node] = append(byNode[fj.node], fj)
	}
	got := make([][]telemetry.Sample, len(switches))
	var wg sync.WaitGroup
	for i, sw := range switches {
		// A dead switch is a problem the snapshots report.
		wg.Go(func() { got[i], _ = e.telemetry(ctx, sw, 2*time.Second, switchSeries...) })
	}
	var mu sync.Mutex
	var flows []telemetry.Sample
	for node, jobs := range byNode {
		wg.Go(func() {
			s, err := e.telemetry(ctx, node, 2*time.Second, "job_bytes_total")
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, x := range s {
				for _, fj := range jobs {
					if x.Name == "job_bytes_total" && x.Label("job") == fj.job {
						flows = append(flows, telemetry.Sample{Name: flowBytes, Kind: telemetry.Counter, Labels: fj.labels, Value: x.Value})
					}
				}
			}
		})
	}
	wg.Wait()
	var all []telemetry.Sample
	for _, s := range got {
		all = append(all, s...)
	}
	if len(all) == 0 {
		return
	}
	all = append(all, flows...)
	e.mu.Lock()
	e.seriesSnaps = append(e.seriesSnaps, expect.Snapshot{At: clock.Time(at), Samples: all})
	e.mu.Unlock()
}

// flowRates turns the flows' byte series into
// perf_flow_rate_bytes_per_second series, as the simulator's sampler
// records them: the rate between readings, bytes beyond what an interval
// could carry at the receiving NIC's line rate counted in the next one
// (a message counts when it completes). Other series pass unchanged.
func flowRates(in []simlab.Series, jobs []flowJob) []simlab.Series {
	line := map[string]clock.Rate{}
	for _, fj := range jobs {
		line[labelKey(fj.labels)] = fj.line
	}
	var out []simlab.Series
	for _, s := range in {
		if s.Name != flowBytes {
			out = append(out, s)
			continue
		}
		r := simlab.Series{Name: "perf_flow_rate_bytes_per_second", Labels: s.Labels, Kind: telemetry.Gauge, Width: s.Width}
		carry := 0.0
		for j := 1; j < len(s.Points); j++ {
			a, b := s.Points[j-1], s.Points[j]
			dt := b.T.Sub(a.T).Seconds()
			if dt <= 0 {
				continue
			}
			got := max(b.V-a.V, 0) + carry
			shown := got
			if l := line[labelKey(s.Labels)]; l > 0 {
				shown = min(got, float64(l)/8*dt)
			}
			carry = got - shown
			v := shown / dt
			r.Points = append(r.Points, simlab.Point{T: a.T, V: v, Min: v, Max: v})
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

// seriesOf turns readings at increasing times into series: one per sample
// name and labels, a point per reading (its width the median spacing of
// the readings). Gauges that never left 0 and counters that never moved
// are left out, as the sampler leaves out what it does not probe.
func seriesOf(snaps expect.Snapshots) []simlab.Series {
	if len(snaps) < 2 {
		return nil
	}
	var gaps []clock.Duration
	for i := 1; i < len(snaps); i++ {
		gaps = append(gaps, snaps[i].At.Sub(snaps[i-1].At))
	}
	slices.Sort(gaps)
	width := max(gaps[len(gaps)/2], clock.Picosecond)
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
				ser = &simlab.Series{Name: s.Name, Labels: s.Labels, Kind: kind, Width: width,
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
		if s.Kind == telemetry.Gauge && flat && s.Totals.Max == 0 || s.Kind == telemetry.Counter && flat {
			continue
		}
		out = append(out, *s)
	}
	return out
}
