package run

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/perftest"
	"github.com/rocelab/rocelab/lab/scenarios/report"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
	"github.com/rocelab/rocelab/lab/simulation/flowsim"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
)

// What produced a run (report.Verdict.Mode).
const (
	ModePacket    = "packet-level simulator"
	ModeFlow      = "flow-level mode (flows as max-min fair rates over the packet simulator's paths; queues, PFC, ECN and drops not modelled)"
	ModeEmulation = "emulation"
)

// flowSamples are the samples a flow-level run produces: an expectation
// that reads any other (queues, PFC, ECN, drops, NIC counters) is not
// measured, and fails saying so rather than passing on no readings.
var flowSamples = map[string]bool{
	"flow_goodput_bytes_per_second":     true,
	"flow_slowdown_ratio":               true,
	"flow_fct_seconds":                  true,
	"perftest_latency_seconds":          true,
	"collective_busbw_bytes_per_second": true,
	"collective_algbw_bytes_per_second": true,
	"collective_time_seconds":           true,
}

// fmJob is one workload of a flow-level run.
type fmJob struct {
	w     *scenario.Workload
	flows []scenario.Flow
	perf  *flowsim.PerfJob
	coll  *flowsim.CollJob
	hier  *flowsim.HierJob
}

// Flow runs sc in the flow-level simulator (lab/simulation/flowsim) and
// evaluates its expectations: perf and collective workloads, on the paths
// the packet simulator's switches route them, at max-min fair rates. It
// refuses what it does not model (faults, background and fe generators,
// chakra traces, perf reads) with an error naming it. Expectations on what it does not measure fail with "not
// measured in flow mode".
func Flow(ctx context.Context, sc *scenario.Scenario, opts Options) (*Outcome, error) {
	if sc == nil || sc.Topology == nil {
		return nil, fmt.Errorf("run: no scenario")
	}
	if err := CheckFlow(sc); err != nil {
		return nil, fmt.Errorf("run %s: %w", sc.Name, err)
	}
	if err := clearReport(opts.ReportDir); err != nil {
		return nil, err
	}
	seed := sc.Seed
	if opts.SeedSet {
		seed = opts.Seed
	}
	wallStart := time.Now()
	lab, err := flowsim.Build(sc.Topology, flowsim.Options{Seed: seed})
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", sc.Name, err)
	}
	var jobs []*fmJob
	for _, w := range sc.Workloads {
		j := &fmJob{w: w, flows: w.Permutation(seed)}
		if err := startFlow(lab, j, len(sc.Workloads) == 1); err != nil {
			return nil, fmt.Errorf("run %s: workload %s: %w", sc.Name, w.Name, err)
		}
		jobs = append(jobs, j)
	}
	dur := clock.Time(sc.Duration)
	step := max(sc.Duration/100, clock.Microsecond)
	for lab.Now() < dur {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("run %s: stopped at %v of %v: %w", sc.Name, lab.Now(), sc.Duration, err)
		}
		lab.RunUntil(min(dur, lab.Now().Add(step)))
		if opts.Progress != nil {
			opts.Progress(Progress{Now: clock.Duration(lab.Now()), Duration: sc.Duration, Events: lab.Executed(), Wall: time.Since(wallStart)})
		}
	}
	var problems []string
	for _, j := range jobs {
		if p := j.problem(); p != "" {
			problems = append(problems, p)
		}
	}
	final := expect.Snapshot{At: lab.Now()}
	fmJobSamples(jobs, func(s telemetry.Sample) { final.Samples = append(final.Samples, s) })
	snaps := expect.Snapshots{{At: 0}, final}
	out := &Outcome{
		Verdict: report.Verdict{Scenario: sc, Seed: seed, Mode: ModeFlow, FabricTime: clock.Duration(lab.Now()),
			Wall: time.Since(wallStart), Events: lab.Executed()},
		Snapshots: snaps, Problems: problems, Workers: 1, Partitions: 1, Aggregated: aggregated(sc, opts),
		Metrics: &Metrics{Snapshots: snaps},
	}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, j.summary())
	}
	return out, out.concludeFlow(opts.ReportDir)
}

// CheckFlow refuses a scenario the flow-level mode does not run, naming
// the part.
func CheckFlow(sc *scenario.Scenario) error {
	if len(sc.Faults) > 0 {
		return fmt.Errorf("flow-level mode: faults are not modelled (the scenario has %d); run it without --flow", len(sc.Faults))
	}
	for _, w := range sc.Workloads {
		switch {
		case w.Kind == scenario.KindPerf && w.PerfOp == perftest.Read:
			return fmt.Errorf("flow-level mode: workload %s: perf reads are not modelled (writes and sends are); run it without --flow", w.Name)
		case w.Kind == scenario.KindPerf:
		case w.Kind == scenario.KindCollective:
		default:
			return fmt.Errorf("flow-level mode: workload %s: kind %s is not modelled (perf and collective are); run it without --flow", w.Name, w.Kind)
		}
	}
	return nil
}

// concludeFlow is conclude, with every expectation that reads a metric
// the flow-level mode does not measure failed as such.
func (out *Outcome) concludeFlow(reportDir string) error {
	out.Results = out.Scenario.Evaluate(out.Metrics)
	for i, x := range out.Scenario.Expect {
		var missing []string
		for _, name := range x.Samples() {
			if !flowSamples[name] && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			r := &out.Results[i]
			r.Pass = false
			r.Err = fmt.Errorf("not measured in flow mode (%s)", strings.Join(missing, ", "))
			r.Message = fmt.Sprintf("%s: %v", x.Text, r.Err)
		}
	}
	return out.decide(reportDir)
}

// startFlow schedules workload j on lab, as start does on the packet
// simulator. A hierarchical all-reduce that is the scenario's only
// workload (alone) may be timed by the ring recurrence instead of the
// collective engine, when its rings would make too many writes for it
// (flowsim.HierSpec.Rings "auto": 24,576 GPUs make 19 million in zones of
// 384, 151 million in rails of 3,072) — nothing else shares the fabric
// with it then.
func startFlow(lab *flowsim.Lab, j *fmJob, alone bool) error {
	w := j.w
	switch w.Kind {
	case scenario.KindPerf:
		spec := flowsim.PerfSpec{Name: w.Name, Size: int(w.Size), Iterations: w.Iters, Duration: w.Duration, QPs: w.QPs,
			TxDepth: perfDepth(w), Mode: w.Mode.String(), Paths: w.Paths, Start: clock.Time(w.Start)}
		if w.Duration > 0 {
			spec.Iterations = 0
		}
		for _, f := range j.flows {
			spec.From = append(spec.From, scenario.PortName(f.From))
			spec.To = append(spec.To, scenario.PortName(f.To))
		}
		pj, err := lab.Perf(spec)
		if err != nil {
			return err
		}
		j.perf = pj
	case scenario.KindCollective:
		if w.Hierarchical {
			spec := flowsim.HierSpec{Name: w.Name, GroupSize: w.Group, Levels: w.Levels, NVLink: w.NVLink, Size: w.Sizes[0], Mode: w.Mode.String(),
				Paths: w.Paths, Start: clock.Time(w.Start), Ranks: scenario.PortNames(w.Ranks)}
			if alone {
				spec.Rings = "auto"
			}
			hj, err := lab.Hierarchical(spec)
			if err != nil {
				return err
			}
			j.hier = hj
			return nil
		}
		spec := flowsim.CollSpec{Name: w.Name, Op: w.CollectiveOp.String(), Sizes: w.Sizes, Iters: w.Iters, Warmup: w.Warmup,
			Mode: w.Mode.String(), Paths: w.Paths, Start: clock.Time(w.Start), Ranks: scenario.PortNames(w.Ranks)}
		if w.Warmup == 0 {
			spec.Warmup = -1
		}
		cj, err := lab.Collective(spec)
		if err != nil {
			return err
		}
		j.coll = cj
	}
	return nil
}

// problem says what did not finish.
func (j *fmJob) problem() string {
	switch {
	case j.perf != nil && j.perf.Err() != nil:
		return j.perf.Err().Error()
	case j.perf != nil && !j.perf.Done() && j.w.Duration == 0:
		return fmt.Sprintf("perf %s: not finished at the end of the run (%d of %d messages per QP)", j.w.Name, j.perf.Messages(), j.w.Iters)
	case j.coll != nil && j.coll.Err() != nil:
		return j.coll.Err().Error()
	case j.coll != nil && !j.coll.Done():
		return fmt.Sprintf("collective %s: not finished at the end of the run (%d of %d sizes done)", j.w.Name, len(j.coll.Results()), len(j.w.Sizes))
	case j.hier != nil && j.hier.Err() != nil:
		return j.hier.Err().Error()
	case j.hier != nil && !j.hier.Done():
		return fmt.Sprintf("collective %s: hierarchical all-reduce not finished at the end of the run", j.w.Name)
	}
	return ""
}

// fmJobSamples emits what jobSamples emits for perf and collective
// workloads.
func fmJobSamples(jobs []*fmJob, emit func(telemetry.Sample)) {
	var all fct.Dist
	for _, j := range jobs {
		jl := []telemetry.Label{{Name: "job", Value: j.w.Name}}
		switch {
		case j.perf != nil:
			var dist fct.Dist
			readings := 0
			for i, f := range j.perf.Flows() {
				res := f.Result()
				l := []telemetry.Label{{Name: "job", Value: j.w.Name}, {Name: "from", Value: res.From}, {Name: "to", Value: res.To}}
				emit(telemetry.Sample{Name: "flow_goodput_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: res.GoodputGbps * 1e9 / 8})
				if j.w.Latency {
					for _, d := range f.Dist().First() {
						if readings < maxReadings {
							readings++
							emit(telemetry.Sample{Name: "perftest_latency_seconds", Kind: telemetry.Gauge, Labels: jl, Value: d.Seconds()})
						}
					}
					continue
				}
				dist.Merge(f.Dist())
				if i < len(j.flows) {
					if x, ok := slowdown(simlabResult(res), j.flows[i]); ok {
						emit(telemetry.Sample{Name: "flow_slowdown_ratio", Kind: telemetry.Gauge, Labels: l, Value: x})
					}
				}
			}
			if dist.Count() > 0 {
				emitFCT(emit, jl, &dist)
				all.Merge(&dist)
			}
		case j.coll != nil:
			j.coll.Collect(emit)
		case j.hier != nil:
			j.hier.Collect(emit)
		}
	}
	if all.Count() > 0 {
		emitFCT(emit, nil, &all)
	}
}

// summary is the report's view of the job.
func (j *fmJob) summary() report.Job {
	s := report.Job{Name: j.w.Name, Kind: string(j.w.Kind)}
	switch {
	case j.perf != nil:
		s.Done = j.perf.Done()
		var dist fct.Dist
		for _, f := range j.perf.Flows() {
			res := f.Result()
			s.Flows = append(s.Flows, report.Flow{From: res.From, To: res.To, Bytes: res.Bytes, GoodputBps: res.GoodputGbps * 1e9,
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
	}
	return s
}

// simlabResult is a flow-level flow's result as slowdown reads it.
func simlabResult(r flowsim.FlowResult) simlab.FlowResult {
	return simlab.FlowResult{From: r.From, To: r.To, Messages: r.Messages, Bytes: r.Bytes, Start: r.Start, End: r.End,
		GoodputGbps: r.GoodputGbps, FCT: r.FCT}
}
