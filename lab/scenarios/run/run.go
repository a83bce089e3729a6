package run

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/faults/inject"
	"github.com/rocelab/rocelab/lab/scenarios/report"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

// Options tune a run. The zero value runs with the scenario's seed and
// writes no report.
type Options struct {
	// Seed overrides the scenario's seed when SeedSet.
	Seed    uint64
	SeedSet bool
	// ReportDir, if set, is where the report is written (lab/scenarios/report).
	ReportDir string
	// Progress, if set, is called about every 100 µs of fabric time.
	Progress func(Progress)
	// SampleInterval is the fabric time between time-series readings
	// (default duration/500, at least 1 µs).
	SampleInterval clock.Duration
	// SnapshotEvery is the fabric time between telemetry snapshots
	// (default duration/10); there is always one at the start and one at
	// the end.
	SnapshotEvery clock.Duration
	// MaxPoints bounds each time series (default 500).
	MaxPoints int
	// Scale is the scale factor k of an emulated run (Emulate) and
	// the one Sim sizes its switches for with MatchEmulation: 0 takes the
	// scenario's, or, for scale: auto, the one deploy picks on this
	// machine.
	Scale int
	// MatchEmulation makes Sim run the scenario as Emulate does, so that
	// the two runs of a file compare (lab/scenarios/fidelity): every switch gets the
	// configuration the emulation's switch process runs at Scale for the
	// lab's shape (NodeGroups, SocketLinks; nodeplan.Switch: with links
	// between processes its PFC headroom includes an allowance for the
	// host stalling the node loops, which depends on the scale), the run
	// goes on past the scenario's duration until every workload finished
	// (at most as long as the emulation waits for it). Perf goodput is
	// measured alike in both drivers either way: a timed job's within its
	// window, an iterations job's over first post to last completion. The
	// default is the ideal switch of the topology's profile.
	MatchEmulation bool
	// NodeGroups and SocketLinks are the emulated lab's shape
	// (deploy.Options): Emulate deploys with them, and Sim with
	// MatchEmulation picks its scale and plans its switches as deploy does
	// for that shape — for a lab on one loop (one group, links in memory)
	// the group's capacity and no stall allowance in the headroom.
	NodeGroups  int
	SocketLinks bool
	// Workers is how many goroutines Sim runs the fabric on (simlab's
	// Options.Workers; 0 or 1: one), and Partitions how many engines a
	// fabric of several zones is cut into (0: simlab.DefaultPartitions,
	// which pays on one goroutine too; 1: one engine). The results are
	// the same whatever the numbers. A scenario with an all-to-all of more
	// than 128 ranks runs on one engine: Sim refuses more workers for it,
	// naming why (CheckWorkers).
	Workers, Partitions int
	// Flow makes Sim run the flow-level mode instead (Flow:
	// lab/simulation/flowsim): flows as rates, no packets.
	Flow bool
	// Aggregate chooses the simulator's telemetry: AggregateAuto (the
	// zero value) aggregates on a large fabric (simlab.LargeFabric: more
	// than simlab.LargeFabricPorts switch ports), AggregateOn and
	// AggregateOff whatever the size. Aggregated, the sampler keeps
	// series per switch, tier and job instead of per queue, port and
	// flow (simlab.SamplerSpec.Aggregate) and the report draws
	// distributions and heat maps (report.Data.Aggregated).
	Aggregate Aggregation
}

// Aggregation is Options.Aggregate.
type Aggregation int

// Aggregations.
const (
	AggregateAuto Aggregation = iota
	AggregateOn
	AggregateOff
)

// aggregated reports whether a run of sc with opts aggregates.
func aggregated(sc *scenario.Scenario, opts Options) bool {
	switch opts.Aggregate {
	case AggregateOn:
		return true
	case AggregateOff:
		return false
	}
	return simlab.LargeFabric(sc.Topology)
}

// Progress is what Options.Progress is told.
type Progress struct {
	Now, Duration clock.Duration // fabric time so far, and the run's length
	Events        uint64         // simulator events run so far
	Wall          time.Duration  // wall time since the run started
}

// Outcome is what a run measured and concluded.
type Outcome struct {
	report.Verdict
	// Metrics is what the expectations read: Snapshots plus the sampler's
	// Series.
	Metrics   *Metrics
	Snapshots expect.Snapshots
	Series    []simlab.Series
	// Jobs summarises every workload.
	Jobs []report.Job
	// Problems are what went wrong besides expectations: a job that
	// failed or did not finish, a fault that could not be applied.
	Problems []string
	// Report is the report directory written, if any.
	Report string
	// Behind is whether an emulated run's loops kept up (nil in the
	// simulator, whose clock is its own).
	Behind *Behind
	// Workers is how many goroutines the simulator ran on (Options.Workers,
	// or 1 where the topology could not be cut), Partitions over how many
	// engines.
	Workers, Partitions int
	// Aggregated says the telemetry was aggregated (Options.Aggregate).
	Aggregated bool
}

// Report returns the outcome as the report package takes it.
func (o *Outcome) reportData() report.Data {
	return report.Data{
		Verdict: o.Verdict,
		Series:  o.Series, Aggregated: o.Aggregated, Final: o.Snapshots[len(o.Snapshots)-1].Samples,
		Jobs: o.Jobs, Problems: o.Problems,
	}
}

var wrongRE = regexp.MustCompile(`\bwrong\s*\(`)

// needsRaw reports whether an expectation checks collective data: only
// then do NICs carry real bytes (costlier).
func needsRaw(sc *scenario.Scenario) bool {
	hasColl := false
	for _, w := range sc.Workloads {
		hasColl = hasColl || w.Kind == scenario.KindCollective
	}
	if !hasColl {
		return false
	}
	for _, x := range sc.Expect {
		if wrongRE.MatchString(x.Text) {
			return true
		}
	}
	return false
}

// runner is one simulated run in progress.
type runner struct {
	sc   *scenario.Scenario
	opts Options
	seed uint64 // the run's seed (the scenario's or Options.Seed)
	lab  *simlab.Lab
	inj  *inject.Injector
	raw  bool
	// scale is the emulation's scale k the run matches
	// (Options.MatchEmulation), else 0.
	scale int
	// gens are the traffic generators sending from each NIC port: they
	// are told of the PFC frames the port receives.
	gens     map[*topologies.Port][]*faults.TrafficSource
	jobs     []*jobRun
	problems []string
	snaps    expect.Snapshots
	// keep are the sample names the expectations read: all that the
	// snapshots before the last one keep.
	keep map[string]bool
}

// engineProxy lets the injector exist before simlab.Build creates the
// engine (Build calls Wrap; faults are added only once it returned).
type engineProxy struct{ e *sim.Engine }

func (p *engineProxy) Now() clock.Time { return p.e.Now() }
func (p *engineProxy) AfterFunc(d clock.Duration, f func()) clock.Timer {
	return p.e.AfterFunc(d, f)
}

// Sim runs sc in the simulator and evaluates its expectations. An error
// means the run could not be built, was cancelled, or the report could
// not be written; failed expectations and job problems are in the
// Outcome (Pass false).
func Sim(ctx context.Context, sc *scenario.Scenario, opts Options) (*Outcome, error) {
	if sc == nil || sc.Topology == nil {
		return nil, errors.New("run: no scenario")
	}
	if opts.Flow {
		return Flow(ctx, sc, opts)
	}
	if err := clearReport(opts.ReportDir); err != nil {
		return nil, err
	}
	dur := sc.Duration
	if opts.SampleInterval <= 0 {
		opts.SampleInterval = max(dur/500, clock.Microsecond)
	}
	if opts.SnapshotEvery <= 0 {
		opts.SnapshotEvery = max(dur/10, clock.Microsecond)
	}
	if opts.MaxPoints <= 0 {
		opts.MaxPoints = 500
	}
	seed := sc.Seed
	if opts.SeedSet {
		seed = opts.Seed
	}
	r := &runner{sc: sc, opts: opts, seed: seed, raw: needsRaw(sc), gens: map[*topologies.Port][]*faults.TrafficSource{}}
	wallStart := time.Now()
	proxy := &engineProxy{}
	r.inj = inject.New(proxy, func(name string) *rand.Rand { return proxy.e.Rand(name) })
	r.inj.Raw = r.raw
	fo := fabric.SimOptions{Wrap: func(from *topologies.Port, s wire.Sink) wire.Sink {
		if p := from.Peer; from.Node.Kind == topologies.KindSwitch && p != nil && p.Node.Kind != topologies.KindSwitch {
			s = &pfcTee{r: r, sw: from.Node, port: p, next: s, delay: p.Link.Delay}
		}
		return r.inj.Wrap(from, s)
	}}
	var cfgErr error
	if opts.MatchEmulation {
		shape := emulatedLab(sc, opts)
		r.scale = emulationScale(shape)
		fo.Configure = emulatedSwitches(r.scale, seed, shape.LagBudget(), &cfgErr)
	}
	if err := CheckWorkers(sc, opts.Workers); err != nil {
		return nil, fmt.Errorf("run %s: %w", sc.Name, err)
	}
	lab, err := simlab.Build(sc.Topology, simlab.Options{
		Seed: seed, Raw: r.raw, CC: "dcqcn", Fabric: fo, Workers: opts.Workers, Partitions: partitions(sc, opts),
		Progress: func(p simlab.Progress) {
			if opts.Progress != nil {
				opts.Progress(Progress{Now: clock.Duration(p.Now), Duration: dur, Events: p.Events, Wall: time.Since(wallStart)})
			}
		},
	})
	if err == nil {
		err = cfgErr
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", sc.Name, err)
	}
	defer lab.Close()
	proxy.e = lab.Engine()
	r.lab = lab
	if lab.Partitions() > 1 {
		// Each fault and traffic generator runs on the engine of the
		// node that sends on its link, where its frames are.
		r.inj.On = func(from *topologies.Port) (clock.Scheduler, func(string) *rand.Rand) {
			e := lab.EngineOf(from.Node)
			return e, e.Rand
		}
	}
	for _, w := range sc.Workloads {
		if err := r.start(w); err != nil {
			return nil, fmt.Errorf("run %s: workload %s: %w", sc.Name, w.Name, err)
		}
	}
	r.startFaults()
	agg := aggregated(sc, opts)
	probes := r.probes()
	if !agg { // aggregated, the sampler sums the pause times per switch and tier
		probes = append(probes, pauseProbes(lab)...)
	}
	sampler := lab.Sample(simlab.SamplerSpec{
		Interval: opts.SampleInterval, MaxPoints: opts.MaxPoints,
		Queues: true, PFC: true, Flows: true, Ports: true, Probes: probes, Aggregate: agg,
	})
	r.snapshot(false)
	for t := clock.Time(opts.SnapshotEvery); t < clock.Time(dur); t = t.Add(opts.SnapshotEvery) {
		lab.At(t, func() { r.snapshot(false) })
	}
	ch := chunker{fabric: clock.Microsecond}
	for lab.Now() < clock.Time(dur) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("run %s: stopped at %v of %v: %w", sc.Name, lab.Now(), dur, err)
		}
		ch.run(lab, dur)
	}
	if opts.MatchEmulation {
		// As the emulation: on until every workload finished, or its
		// grace past the end is up.
		limit := dur + r.grace()
		for !r.jobsDone() && lab.Now() < clock.Time(limit) {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("run %s: stopped at %v of %v: %w", sc.Name, lab.Now(), dur, err)
			}
			ch.run(lab, limit)
		}
	}
	sampler.Stop()
	r.finish()
	r.snapshot(true)
	out := &Outcome{
		Verdict: report.Verdict{Scenario: sc, Seed: seed, Mode: ModePacket, FabricTime: clock.Duration(lab.Now()), Wall: time.Since(wallStart),
			Events: lab.Executed()},
		Snapshots: r.snaps, Series: sampler.Series(), Problems: r.problems, Workers: lab.Workers(), Partitions: lab.Partitions(),
		Aggregated: agg,
	}
	out.Metrics = &Metrics{Snapshots: r.snaps, Store: sampler.Store()}
	for _, j := range r.jobs {
		out.Jobs = append(out.Jobs, j.summary())
	}
	return out, out.conclude(opts.ReportDir)
}

// clearReport removes a previous report from dir before a run starts, so
// that a run that fails before writing its own leaves none behind.
func clearReport(dir string) error {
	if dir == "" {
		return nil
	}
	return report.Clear(dir)
}

// conclude evaluates the expectations against out.Metrics, decides
// whether the run passed (every expectation holds and nothing went wrong)
// and writes the report directory if one was asked for. Both drivers end
// their runs with it.
func (out *Outcome) conclude(reportDir string) error {
	out.Results = out.Scenario.Evaluate(out.Metrics)
	return out.decide(reportDir)
}

// decide sets Pass from the Results and the Problems and writes the
// report directory if one was asked for.
func (out *Outcome) decide(reportDir string) error {
	out.Pass = len(out.Problems) == 0
	for _, res := range out.Results {
		out.Pass = out.Pass && res.Pass
	}
	if reportDir == "" {
		return nil
	}
	if err := report.Write(reportDir, out.reportData()); err != nil {
		return fmt.Errorf("run %s: %w", out.Scenario.Name, err)
	}
	out.Report = reportDir
	return nil
}

// snapshot gathers the telemetry of the lab, the faults and (at the end)
// the job samples.
func (r *runner) snapshot(final bool) {
	srcs := []telemetry.Source{r.lab, r.inj, sourceFunc(r.genSamples)}
	if final {
		srcs = append(srcs, sourceFunc(r.jobSamples))
	}
	// Unsorted: telemetry.Gather's sort costs more than the run. Before
	// the end only the samples the expectations read are kept: on a
	// topology of thousands of ports, every snapshot of everything would
	// cost gigabytes.
	var all []telemetry.Sample
	var blocks [][]telemetry.Sample
	emit := func(s telemetry.Sample) {
		// Everything, in blocks copied once at the end: a slice grown
		// by doubling to millions of samples (a 1,024-host lab's
		// paths) cost more than collecting them.
		if len(all) == cap(all) {
			size := 1 << 10
			if len(all) > 0 {
				blocks = append(blocks, all)
				size = min(2*len(all), 1<<16)
			}
			all = make([]telemetry.Sample, 0, size)
		}
		all = append(all, s)
	}
	if !final {
		if r.keep == nil {
			r.keep = map[string]bool{}
			for _, x := range r.sc.Expect {
				for _, name := range x.Samples() {
					r.keep[name] = true
				}
			}
		}
		emit = func(s telemetry.Sample) {
			if r.keep[s.Name] {
				all = append(all, s)
			}
		}
	}
	var want func(string) bool
	if !final {
		want = func(name string) bool { return r.keep[name] }
	}
	for _, src := range srcs {
		telemetry.CollectWanted(src, want, emit)
	}
	if len(blocks) > 0 {
		all = slices.Concat(append(blocks, all)...)
	}
	r.snaps = append(r.snaps, expect.Snapshot{At: r.lab.Now(), Samples: all})
}

// startFaults applies the scenario's fault schedule from time 0 (the
// emulated run applies the same schedule on its lab: emuRun.startFaults).
func (r *runner) startFaults() {
	sched := r.sc.FaultSchedule()
	if len(sched.Events) == 0 {
		return
	}
	// Adding and removing faults changes links of every partition: the
	// timeline runs on the lab as a whole, between a partitioned lab's
	// windows (each fault then runs on the engine of its link's sender:
	// r.inj.On).
	sched.Start(context.Background(), r.lab, r.inj, func(err error) { r.problems = append(r.problems, err.Error()) })
}

// pfcTee hands the PFC and PAUSE frames a switch sends toward a NIC to
// the traffic generators of that NIC too (after the link's delay), so that
// background traffic obeys PFC like the NIC.
type pfcTee struct {
	r     *runner
	sw    *topologies.Node // the sending switch
	port  *topologies.Port // the NIC's
	next  wire.Sink
	delay clock.Duration
}

func (t *pfcTee) Receive(p *wire.Packet) {
	t.tee(p, t.delay)
	t.next.Receive(p)
}

// Launch passes a frame launched early on when the next sink takes it
// (wire.LaunchSink); the generators still see PFC at end plus the delay.
func (t *pfcTee) Launch(p *wire.Packet, end clock.Time) bool {
	l, ok := t.next.(wire.LaunchSink)
	if !ok || !l.Launch(p, end) {
		return false
	}
	if len(t.r.gens[t.port]) > 0 {
		t.tee(p, end.Sub(t.r.lab.EngineOf(t.sw).Now())+t.delay)
	}
	return true
}

// tee hands a PFC or PAUSE frame to the port's traffic generators after d.
func (t *pfcTee) tee(p *wire.Packet, d clock.Duration) {
	if p.Kind == wire.KindPFC || p.Kind == wire.KindPause {
		src, dst := t.r.lab.EngineOf(t.sw), t.r.lab.EngineOf(t.port.Node)
		for _, g := range t.r.gens[t.port] {
			if src == dst {
				src.AfterFunc(d, func() { g.Receive(p) })
				continue
			}
			// The NIC runs on another partition: the frame crosses as the
			// link's own do, in a letter that takes the place in the order
			// the AfterFunc would have on one engine.
			src.Send(teeMail{dst}, src.Now().Add(d), teeLetter{g, p})
		}
	}
}

// partitions is the simlab Options.Partitions of a run of sc: what opts
// says, else the default cut, which pays on one goroutine too, or one
// engine for a scenario with a collective that needs one.
func partitions(sc *scenario.Scenario, opts Options) int {
	switch {
	case oneEngineCollective(sc) != "":
		return 1
	case opts.Partitions > 0:
		return opts.Partitions
	}
	return simlab.DefaultPartitions(max(opts.Workers, 1))
}

// AutoWorkers is the workers a run of sc takes when none are asked for:
// cpus, or one for a scenario that CheckWorkers would refuse more for (an
// all-to-all of more than 128 ranks). The results are the same whatever
// the number, and a topology of fewer
// than two zones runs on one anyway. Two workers paid on this project's
// 2-core machine from the smallest zoned fabric measured (the 128-host
// permutation of simbench -zones 2: 1.2×; docs/performance.md).
func AutoWorkers(sc *scenario.Scenario, cpus int) int {
	if cpus < 2 || oneEngineCollective(sc) != "" {
		return 1
	}
	return cpus
}

// teeMail delivers a PFC frame to a traffic generator on the NIC's
// engine (pfcTee).
type teeMail struct{ e *sim.Engine }

type teeLetter struct {
	g wire.Sink
	p *wire.Packet
}

func (m teeMail) Arrive(at clock.Time, arg any, sent sim.Ticket) {
	m.e.ScheduleSeq(at, m.e.Seq(sent), m, arg)
}

// Handle runs a delivered letter.
func (m teeMail) Handle(arg any) {
	l := arg.(teeLetter)
	l.g.Receive(l.p)
}

// CheckWorkers refuses workers > 1 for a scenario with a part that must
// run on the lab's one engine: an all-to-all of more than 128 ranks
// (simlab.CollectiveOnOneEngine). Faults, traffic generators and the
// other collectives run on several workers (startFaults, startGen,
// simlab's coordinator).
func CheckWorkers(sc *scenario.Scenario, workers int) error {
	if workers <= 1 {
		return nil
	}
	name := oneEngineCollective(sc)
	if name == "" {
		return nil
	}
	if w := sc.Workload(name); w != nil && w.Kind == scenario.KindChakra {
		return fmt.Errorf("%d workers: chakra workload %s (a replay acts on every rank at once) runs on one worker only; run it without --workers", workers, name)
	}
	return fmt.Errorf("%d workers: collective %s (an all-to-all of more than 128 ranks) runs on one worker only; run it without --workers", workers, name)
}

// oneEngineCollective returns the name of sc's first collective workload
// that needs one engine (or chakra workload: simlab.Lab.Chakra), or "".
func oneEngineCollective(sc *scenario.Scenario) string {
	for _, w := range sc.Workloads {
		if w.Kind == scenario.KindChakra {
			return w.Name
		}
		if w.Kind == scenario.KindCollective && !w.Hierarchical && simlab.CollectiveOnOneEngine(w.CollectiveOp, len(w.Ranks)) {
			return w.Name
		}
	}
	return ""
}
