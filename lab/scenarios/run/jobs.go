package run

import (
	"context"
	"fmt"
	"slices"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/lab/scenarios/report"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/workloads/chakra"
)

// sourceFunc is a telemetry.Source from a function.
type sourceFunc func(emit func(telemetry.Sample))

func (f sourceFunc) Collect(emit func(telemetry.Sample)) { f(emit) }

// maxReadings bounds the per-message readings a latency job keeps
// (completion times are summarised: fct.Dist).
const maxReadings = 200_000

// Frame sizes of generated background traffic.
const (
	beFrame = 4096
	feFrame = 1500
)

// jobRun is one workload of the run.
type jobRun struct {
	w *scenario.Workload
	// flows are the workload's flows for the run's seed (a permutation
	// is drawn again when the seed is overridden).
	flows []scenario.Flow
	perf  *simlab.PerfJob
	coll  *simlab.CollJob
	hier  *simlab.HierJob
	chak  *simlab.ChakraJob
	gens  []*genFlow
}

// genFlow is one generator flow of a background or fe workload.
type genFlow struct {
	from, to *topologies.Port
	src      *faults.TrafficSource
	start    clock.Time
	stop     clock.Time // when it stops sending (Never: the run's end)
	target   int64      // bytes to send (bursts), 0 = unbounded
	done     clock.Time // when target was reached (0: not yet)
	fcts     []clock.Duration
	err      error
}

// start schedules workload w.
func (r *runner) start(w *scenario.Workload) error {
	j := &jobRun{w: w, flows: w.Permutation(r.seed)}
	r.jobs = append(r.jobs, j)
	switch {
	case w.Kind == scenario.KindPerf:
		spec := simlab.PerfSpec{
			Name: w.Name, Op: w.PerfOp.String(), Pairwise: true, Size: int(w.Size),
			Iterations: w.Iters, Duration: w.Duration, QPs: w.QPs, Paths: w.Paths,
			Mode: w.Mode.String(), CC: w.CC, Start: clock.Time(w.Start),
		}
		if w.Duration > 0 {
			spec.Iterations = 0
		}
		spec.TxDepth = perfDepth(w)
		for _, f := range j.flows {
			spec.From = append(spec.From, scenario.PortName(f.From))
			spec.To = append(spec.To, scenario.PortName(f.To))
		}
		pj, err := r.lab.Perf(spec)
		if err != nil {
			return err
		}
		j.perf = pj
	case w.Kind == scenario.KindCollective && w.Hierarchical:
		spec := simlab.HierSpec{Name: w.Name, GroupSize: w.Group, Levels: w.Levels, NVLink: w.NVLink, Size: w.Sizes[0], Mode: w.Mode.String(), CC: w.CC,
			Paths: w.Paths, Start: clock.Time(w.Start)}
		spec.Ranks = scenario.PortNames(w.Ranks)
		hj, err := r.lab.Hierarchical(spec)
		if err != nil {
			return err
		}
		j.hier = hj
	case w.Kind == scenario.KindCollective:
		spec := simlab.CollSpec{
			Name: w.Name, Op: w.CollectiveOp.String(), Sizes: w.Sizes, Iters: w.Iters, Paths: w.Paths,
			Warmup: w.Warmup, Mode: w.Mode.String(), CC: w.CC, Check: r.raw, Start: clock.Time(w.Start),
		}
		if w.Warmup == 0 {
			spec.Warmup = -1 // simlab: 0 means its default
		}
		spec.Ranks = scenario.PortNames(w.Ranks)
		cj, err := r.lab.Collective(spec)
		if err != nil {
			return err
		}
		j.coll = cj
	case w.Kind == scenario.KindChakra:
		cj, err := r.lab.Chakra(simlab.ChakraSpec{Name: w.Name, Traces: w.Chakra.Traces, Ranks: scenario.PortNames(w.Ranks),
			Iters: w.Iters, Roofline: w.Chakra.Roofline, Mode: w.Mode.String(), CC: w.CC, Paths: w.Paths, Start: clock.Time(w.Start)})
		if err != nil {
			return err
		}
		j.chak = cj
	case w.Kind == scenario.KindBackground || w.Kind == scenario.KindFE:
		for i, f := range j.flows {
			g, spec, err := r.genSpec(w, i, f)
			if err != nil {
				return err
			}
			j.gens = append(j.gens, g)
			r.lab.At(g.start, func() { r.startGen(g, spec) })
		}
	default:
		return fmt.Errorf("unknown kind %q", w.Kind)
	}
	return nil
}

// genSpec builds the generator of flow i of a background or fe workload.
func (r *runner) genSpec(w *scenario.Workload, i int, f scenario.Flow) (*genFlow, faults.Spec, error) {
	if !f.To.Addr.IsValid() {
		return nil, faults.Spec{}, fmt.Errorf("%s has no address", scenario.PortName(f.To))
	}
	t := faults.DefaultTraffic(f.To.Addr.Addr())
	t.SrcPort = uint16(faults.DefaultTrafficSport + i)
	t.Rate = w.Rate
	t.Size = beFrame
	if w.Kind == scenario.KindFE {
		t.Size, t.DSCP, t.Prio = feFrame, 0, 0
	}
	g := &genFlow{from: f.From, to: f.To, start: clock.Time(w.Start), stop: clock.Never}
	end := clock.Time(r.sc.Duration)
	switch w.Pattern {
	case "elephant", "stream":
		t.For = w.Duration
	case "incast", "burst":
		t.Incast = true
		t.Burst = w.Size
		t.Period = w.Interval
		if t.Period <= 0 { // one burst
			t.Period = r.sc.Duration + clock.Second
		}
		t.For = w.Duration
		if w.Pattern == "burst" {
			n := max(w.Iters, 1)
			t.For = clock.Duration(n-1)*t.Period + t.Period/2
			if w.Interval <= 0 {
				t.For = 0
			}
			g.target = int64(n) * w.Size
		}
	}
	if t.For > 0 {
		g.stop = g.start.Add(t.For)
	}
	if g.stop > end {
		g.stop = end
	}
	return g, faults.Spec{Params: t}, nil
}

// startGen puts g's generator on its sender's port.
func (r *runner) startGen(g *genFlow, spec faults.Spec) {
	target := scenario.PortName(g.from)
	placed, err := r.inj.Add(context.Background(), target, spec)
	var id faults.ID
	if err == nil {
		id, err = faults.ParseID(placed[0].ID)
	}
	if err != nil {
		g.err = err
		r.problems = append(r.problems, fmt.Sprintf("%s: %v", target, err))
		return
	}
	src, ok := r.inj.Chain(target).Fault(id).(*faults.TrafficSource)
	if !ok {
		g.err = fmt.Errorf("%s: not a traffic source", target)
		r.problems = append(r.problems, g.err.Error())
		return
	}
	g.src = src
	r.gens[g.from] = append(r.gens[g.from], src)
}

// sent returns the frame bytes g sent so far.
func (g *genFlow) sent() int64 {
	if g.src == nil {
		return 0
	}
	return g.src.SentBytes
}

// probes are the sampler readings of the generators: bytes sent (and,
// for bursts, the moment the burst completed).
func (r *runner) probes() []simlab.Probe {
	var out []simlab.Probe
	for _, j := range r.jobs {
		for _, g := range j.gens {
			g := g
			out = append(out, simlab.Probe{
				Name: "generator_tx_bytes_total", Kind: telemetry.Counter,
				Labels: []telemetry.Label{{Name: "job", Value: j.w.Name}, {Name: "from", Value: scenario.PortName(g.from)}, {Name: "to", Value: scenario.PortName(g.to)}},
				Read: func() float64 {
					s := g.sent()
					if g.target > 0 && g.done == 0 && s >= g.target {
						g.done = r.lab.Now()
						g.fcts = append(g.fcts, g.done.Sub(g.start))
					}
					return float64(s)
				},
			})
		}
	}
	return out
}

// genSamples emits the generators' byte counters.
func (r *runner) genSamples(emit func(telemetry.Sample)) {
	for _, j := range r.jobs {
		for _, g := range j.gens {
			emit(telemetry.Sample{Name: "generator_tx_bytes_total", Kind: telemetry.Counter, Labels: flowLabels(j.w.Name, g.from, g.to), Value: float64(g.sent())})
		}
	}
}

func flowLabels(job string, from, to *topologies.Port) []telemetry.Label {
	return []telemetry.Label{{Name: "job", Value: job}, {Name: "from", Value: scenario.PortName(from)}, {Name: "to", Value: scenario.PortName(to)}}
}

// finish records what did not finish.
func (r *runner) finish() {
	for _, j := range r.jobs {
		switch {
		case j.perf != nil && j.perf.Err() != nil:
			r.problems = append(r.problems, j.perf.Err().Error())
		case j.perf != nil && !j.perf.Done() && j.w.Duration == 0:
			r.problems = append(r.problems, fmt.Sprintf("perf %s: not finished at the end of the run (%d of %d messages per QP)", j.w.Name, j.perfMessages(), j.w.Iters))
		case j.coll != nil && j.coll.Err() != nil:
			r.problems = append(r.problems, j.coll.Err().Error())
		case j.coll != nil && !j.coll.Done():
			r.problems = append(r.problems, fmt.Sprintf("collective %s: not finished at the end of the run (%d of %d sizes done)", j.w.Name, len(j.coll.Results()), len(j.w.Sizes)))
		case j.hier != nil && j.hier.Err() != nil:
			r.problems = append(r.problems, j.hier.Err().Error())
		case j.hier != nil && !j.hier.Done():
			r.problems = append(r.problems, fmt.Sprintf("collective %s: hierarchical all-reduce not finished at the end of the run", j.w.Name))
		case j.chak != nil && j.chak.Err() != nil:
			r.problems = append(r.problems, j.chak.Err().Error())
		case j.chak != nil && !j.chak.Done():
			r.problems = append(r.problems, fmt.Sprintf("chakra %s: not finished at the end of the run (%d of %d steps done)", j.w.Name, len(j.chak.Results()), j.w.Iters))
		}
		for _, g := range j.gens {
			if g.target > 0 && g.done == 0 && g.src != nil && g.sent() >= g.target {
				g.done = r.lab.Now()
				g.fcts = append(g.fcts, g.done.Sub(g.start))
			}
		}
	}
}

// jobsDone reports whether every workload finished: its job is done (or
// failed), its generators stopped.
func (r *runner) jobsDone() bool {
	now := r.lab.Now()
	for _, j := range r.jobs {
		switch {
		case j.perf != nil && !j.perf.Done() && j.perf.Err() == nil,
			j.coll != nil && !j.coll.Done() && j.coll.Err() == nil,
			j.hier != nil && !j.hier.Done() && j.hier.Err() == nil,
			j.chak != nil && !j.chak.Done():
			return false
		}
		for _, g := range j.gens {
			if g.stop > now {
				return false
			}
		}
	}
	return true
}

// grace is how long past the scenario's end the emulation waits for the
// slowest workload (emuGrace).
func (r *runner) grace() clock.Duration {
	var d clock.Duration
	for _, j := range r.jobs {
		d = max(d, emuGrace(r.sc, j.w, j.flows, r.scale))
	}
	return d
}

func (j *jobRun) perfMessages() int64 {
	var least int64 = -1
	for _, f := range j.perf.Results() {
		if least < 0 || f.Messages < least {
			least = f.Messages
		}
	}
	return least
}

// jobSamples emits the samples expectations read per workload
// (expect.OnJob): see the package documentation.
func (r *runner) jobSamples(emit func(telemetry.Sample)) {
	now := r.lab.Now()
	var all fct.Dist // every job's completion times
	for _, j := range r.jobs {
		name := j.w.Name
		jl := []telemetry.Label{{Name: "job", Value: name}}
		switch {
		case j.perf != nil:
			readings := 0
			var dist fct.Dist
			for i, f := range j.perf.Flows() {
				res := f.Result()
				l := []telemetry.Label{{Name: "job", Value: name}, {Name: "from", Value: f.From}, {Name: "to", Value: f.To}}
				emit(telemetry.Sample{Name: "flow_goodput_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: res.GoodputGbps * 1e9 / 8})
				if !j.w.Latency {
					dist.Merge(f.Dist())
					if i < len(j.flows) {
						if x, ok := slowdown(res, j.flows[i]); ok {
							emit(telemetry.Sample{Name: "flow_slowdown_ratio", Kind: telemetry.Gauge, Labels: l, Value: x})
						}
					}
					continue
				}
				// Latency tests are short: their readings are kept (the
				// first 4,096 of each flow, at most maxReadings).
				for _, d := range f.FCTs() {
					if readings >= maxReadings {
						break
					}
					readings++
					emit(telemetry.Sample{Name: "perftest_latency_seconds", Kind: telemetry.Gauge, Labels: jl, Value: d.Seconds()})
				}
			}
			if dist.Count() > 0 {
				emitFCT(emit, jl, &dist)
				all.Merge(&dist)
			}
		case j.coll != nil:
			// busbw, algbw and time per size come from the job itself
			// (simlab.CollJob.Collect, part of the lab's samples).
			if r.raw {
				var wrong int64
				for _, res := range j.coll.Results() {
					wrong += res.Wrong
				}
				emit(telemetry.Sample{Name: "collective_wrong_elements_total", Kind: telemetry.Counter, Labels: jl, Value: float64(wrong)})
			}
		case j.hier != nil, j.chak != nil:
			// as for coll: simlab.HierJob.Collect, simlab.ChakraJob.Collect
		default:
			var dist fct.Dist
			for _, g := range j.gens {
				l := flowLabels(name, g.from, g.to)
				emit(telemetry.Sample{Name: "flow_goodput_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: g.rate(now) / 8})
				for _, d := range g.fcts {
					dist.Add(d)
				}
			}
			if dist.Count() > 0 {
				emitFCT(emit, jl, &dist)
				all.Merge(&dist)
			}
		}
	}
	if all.Count() > 0 {
		emitFCT(emit, nil, &all)
	}
}

// ncclJob is a collective job of either simulator (simlab's or
// flowsim's CollJob and HierJob), as a report shows it.
type ncclJob interface {
	Done() bool
	Err() error
	Results() []collective.Result
}

// collectiveSummary fills s with what j did: done, its error, its
// nccl-tests lines.
func collectiveSummary(s *report.Job, j ncclJob) {
	s.Done = j.Done()
	if err := j.Err(); err != nil {
		s.Err = err.Error()
	}
	s.Collective = slices.Clone(j.Results())
}

// rate is the generator's mean sending rate over the time it was active.
func (g *genFlow) rate(now clock.Time) float64 {
	end := min(now, g.stop)
	if g.done != 0 {
		end = g.done
	}
	if end <= g.start {
		return 0
	}
	return float64(g.sent()) * 8 / end.Sub(g.start).Seconds()
}

// summary is the report's view of the job.
func (j *jobRun) summary() report.Job {
	s := report.Job{Name: j.w.Name, Kind: string(j.w.Kind)}
	switch {
	case j.perf != nil:
		s.Done = j.perf.Done()
		if err := j.perf.Err(); err != nil {
			s.Err = err.Error()
		}
		var dist fct.Dist
		for _, f := range j.perf.Flows() {
			res := f.Result()
			s.Flows = append(s.Flows, report.Flow{From: f.From, To: f.To, Bytes: res.Bytes, GoodputBps: res.GoodputGbps * 1e9,
				Messages: res.Messages, FCTMedian: res.FCT.Median.Seconds(), FCTP99: res.FCT.P99.Seconds()})
			if !j.w.Latency {
				dist.Merge(f.Dist())
			}
		}
		s.FCT = jobFCT(&dist)
	case j.coll != nil:
		collectiveSummary(&s, j.coll)
	case j.hier != nil:
		collectiveSummary(&s, j.hier)
	case j.chak != nil:
		s.Done = j.chak.Done() && j.chak.Err() == nil
		if err := j.chak.Err(); err != nil {
			s.Err = err.Error()
		}
		s.Chakra = chakraRun(j.w, j.chak.Results(), j.chak.Starts())
	default:
		s.Done = true
		for _, g := range j.gens {
			fl := report.Flow{From: scenario.PortName(g.from), To: scenario.PortName(g.to), Bytes: g.sent(), GoodputBps: g.rate(clock.Never)}
			if len(g.fcts) > 0 {
				fl.Messages = int64(len(g.fcts))
				fl.FCTMedian = g.fcts[len(g.fcts)/2].Seconds()
				fl.FCTP99 = g.fcts[len(g.fcts)-1].Seconds()
			}
			if g.err != nil {
				s.Err = g.err.Error()
			}
			s.Flows = append(s.Flows, fl)
		}
	}
	return s
}

// chakraRun is a chakra workload's report.
func chakraRun(w *scenario.Workload, steps []*chakra.Result, starts []clock.Time) *report.ChakraRun {
	return &report.ChakraRun{Trace: w.Chakra.Dir, Prefix: w.Chakra.Prefix, NICs: scenario.PortNames(w.Ranks), Steps: steps, Starts: starts}
}
