package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/lab/scenarios/report"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
	"github.com/rocelab/rocelab/topologies"
)

// EmuOptions tune an emulated run (Emulate).
type EmuOptions struct {
	// Options: Seed, ReportDir and SnapshotEvery apply as in Sim, Scale
	// overrides the scenario's scale k (0: the scenario's, or auto),
	// and NodeGroups and SocketLinks shape the lab; Progress,
	// SampleInterval, MaxPoints and MatchEmulation do not apply (the
	// emulation scrapes telemetry snapshots only).
	Options
	// LabName names the lab (default: the scenario's name and the pid).
	LabName string
	// Root is the run-directory root (deploy's default if "").
	Root string
	// Binary is the rocelab executable the nodes run (default: this one).
	Binary string
	// ExactLinks is deploy.Options.ExactLinks: frames carry their sender's
	// lateness, for a closer comparison with the simulator.
	ExactLinks bool
	// Log, if set, receives progress lines.
	Log io.Writer
}

// Emulate runs sc in the emulation lab: it deploys the scenario's
// topology as a lab, runs the workloads on the endpoint nodes at their
// fabric-time starts (perf through nodeapi.RunPerf, one per flow, all
// concurrently; collectives through nodeapi.RunCollective; background
// elephants and incast bursts as traffic-generator faults on the senders'
// NICs), applies the fault schedule through the nodes' fault API at the
// dilated wall times, scrapes every node's telemetry every SnapshotEvery
// of fabric time, builds the job samples the simulated run emits, evaluates
// the expectations, writes the report, and destroys the lab — always, also
// when the run fails or ctx is cancelled. Front-end (fe) workloads are not
// supported in emulation yet (the FE NICs are the kernel's): such a
// scenario is refused before anything is deployed.
//
// Fabric time in the Outcome is the run's wall time since its start
// divided by the scale. Like Sim, an error means the run could not be
// set up, was cancelled, or the report could not be written; failed
// expectations and job problems are in the Outcome.
func Emulate(ctx context.Context, sc *scenario.Scenario, opts EmuOptions) (out *Outcome, err error) {
	if sc == nil || sc.Topology == nil {
		return nil, errors.New("run: no scenario")
	}
	if err := clearReport(opts.ReportDir); err != nil {
		return nil, err
	}
	for _, w := range sc.Workloads {
		if w.Kind == scenario.KindFE {
			return nil, fmt.Errorf("run %s: workload %s: kind fe is not supported in emulation yet (the FE NICs are the kernel's); run it with --sim", sc.Name, w.Name)
		}
		if w.Hierarchical {
			// Its phases would need the endpoints' collective in levels;
			// run as one all-reduce across every rank, it measured another
			// algorithm under the same name.
			return nil, fmt.Errorf("run %s: workload %s: op hier-allreduce is not supported in emulation yet; run it with --sim", sc.Name, w.Name)
		}
	}
	seed := sc.Seed
	if opts.SeedSet {
		seed = opts.Seed
	}
	if opts.SnapshotEvery <= 0 {
		opts.SnapshotEvery = max(sc.Duration/10, clock.Microsecond)
	}
	name := opts.LabName
	if name == "" {
		name = labName(sc.Name)
	}
	e := &emuRun{sc: sc, opts: opts, seed: seed, logw: opts.Log, clients: map[string]*nodeapi.Client{}}
	wallStart := time.Now()
	e.logf("deploying %s as lab %s …", sc.Topology.Name, name)
	do := emulatedLab(sc, opts.Options)
	do.LabName, do.Root, do.Binary, do.Seed, do.ExactLinks = name, opts.Root, opts.Binary, seed, opts.ExactLinks
	// One fabric clock for every node, so that the runner can name an
	// instant to all of them (nodeapi.PerfRequest.At: emuRun.nodeTime).
	do.Origin = time.Now()
	e.origin = do.Origin
	lab, err := deploy.Deploy(ctx, do)
	if err != nil {
		return nil, fmt.Errorf("run %s: deploy: %w", sc.Name, err)
	}
	defer func() {
		e.logf("destroying lab %s …", lab.Name)
		for _, c := range e.clients {
			c.Close()
		}
		// A fresh context: the lab must go even when ctx was cancelled.
		if _, derr := deploy.Destroy(context.Background(), opts.Root, lab.Name); derr != nil {
			err = errors.Join(err, fmt.Errorf("run %s: destroy lab %s: %w", sc.Name, lab.Name, derr))
		}
	}()
	e.lab, e.scale = lab, lab.Scale
	jl := &jobs.Lab{Root: opts.Root, Name: lab.Name}
	defer jl.Close()
	e.placer = jl.Faults()
	for _, n := range lab.Nodes {
		if n.Socket != "" {
			e.clients[n.Name] = nodeapi.NewClient(n.Socket)
		}
	}
	shape := "a process per node, links through their veths"
	switch {
	case do.OneLoop():
		shape = "its nodes in one process, links in memory, the profile's switches"
	case do.NodeGroups == 1:
		shape = "its nodes in one process, links through their veths"
	case do.NodeGroups > 1:
		shape = fmt.Sprintf("its nodes in up to %d processes", do.NodeGroups)
	}
	e.logf("deployed in %v at scale %d (%s): %v of fabric time takes %v", time.Since(wallStart).Round(time.Millisecond), e.scale,
		shape, sc.Duration, e.wall(sc.Duration).Round(time.Millisecond))
	if err := e.run(ctx); err != nil {
		return nil, fmt.Errorf("run %s: %w", sc.Name, err)
	}
	out = &Outcome{
		Verdict:   report.Verdict{Scenario: sc, Seed: seed, Mode: ModeEmulation, FabricTime: e.fabricNow(), Wall: time.Since(wallStart)},
		Snapshots: e.snaps, Problems: e.problems,
	}
	out.Metrics = &Metrics{Snapshots: e.snaps}
	if n := len(e.snaps); n > 0 {
		b := behindOf(e.snaps[n-1].Samples, e.scale)
		out.Behind = &b
		if b.Behind {
			out.Verdict.Behind = b.String()
		}
		e.logf("loops: %v", b)
	}
	e.mu.Lock()
	out.Series = flowRates(seriesOf(e.seriesSnaps), e.flowJobs)
	e.mu.Unlock()
	for _, j := range e.jobs {
		out.Jobs = append(out.Jobs, j.summary())
	}
	return out, out.conclude(opts.ReportDir)
}

// labName is a lab name from the scenario's and the process's.
func labName(scenarioName string) string {
	n := []byte(scenarioName)
	for i, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			n[i] = '-'
		}
	}
	if len(n) > 32 {
		n = n[:32]
	}
	return fmt.Sprintf("%s-%d", n, pid())
}

// emuRun is one emulated run in progress.
type emuRun struct {
	sc      *scenario.Scenario
	opts    EmuOptions
	seed    uint64 // the run's (the scenario's or Options.Seed)
	logw    io.Writer
	lab     *deploy.Lab
	scale   int
	clients map[string]*nodeapi.Client // by node name
	// placer places the run's faults and generators; fclock is the lab's
	// fabric clock they run on, stopFaults stops the schedule (in
	// fclock.Close).
	placer     *jobs.Faults
	fclock     *jobs.FabricClock
	stopFaults func()
	t0         time.Time // wall time of fabric time 0
	origin     time.Time // wall time of the nodes' fabric time 0 (deploy.Options.Origin)
	// lastProgress is when (Unix ns) a chakra job last measured an
	// operation: its steps run on a clock of their own, so the run's end
	// waits for them as long as they move on.
	lastProgress atomic.Int64

	mu       sync.Mutex // guards what follows
	jobs     []*emuJob
	problems []string
	snaps    expect.Snapshots
	// seriesSnaps are the switch readings recordSeries takes (a report's
	// time series).
	seriesSnaps expect.Snapshots
	// flowJobs are the perf flows' client jobs, for their rate series.
	flowJobs []flowJob
}

func (e *emuRun) logf(format string, a ...any) {
	if e.logw != nil {
		fmt.Fprintf(e.logw, "# "+format+"\n", a...)
	}
}

func (e *emuRun) problem(format string, a ...any) {
	e.mu.Lock()
	e.problems = append(e.problems, fmt.Sprintf(format, a...))
	e.mu.Unlock()
}

// wall is d of fabric time in wall-clock time.
func (e *emuRun) wall(d clock.Duration) time.Duration {
	return time.Duration(int64(d) / int64(clock.Nanosecond) * int64(e.scale))
}

// nodeTime is the nodes' fabric time of the run's fabric time t: their
// clock starts at e.origin, the run's at e.t0.
func (e *emuRun) nodeTime(t clock.Duration) clock.Time {
	return clock.Time(clock.Duration(e.t0.Sub(e.origin).Nanoseconds()*int64(clock.Nanosecond)/int64(e.scale)) + t)
}

// fabricNow is the run's fabric time now.
func (e *emuRun) fabricNow() clock.Duration {
	return clock.Duration(time.Since(e.t0).Nanoseconds() * int64(clock.Nanosecond) / int64(e.scale))
}

// sleepUntil waits until fabric time t of the run, or ctx ends.
func (e *emuRun) sleepUntil(ctx context.Context, t clock.Duration) error {
	d := time.Until(e.t0.Add(e.wall(t)))
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// nic is the reference to NIC port p of an endpoint node.
func (e *emuRun) nic(p *topologies.Port) (jobs.NICRef, error) {
	c := e.clients[p.Node.Name]
	if c == nil || p.Node.Kind == topologies.KindSwitch {
		return jobs.NICRef{}, fmt.Errorf("%s: no endpoint process", scenario.PortName(p))
	}
	return jobs.NICRef{Node: p.Node.Name, NIC: scenario.PortName(p), Client: c}, nil
}

// run starts everything at fabric time 0 and waits for the end.
func (e *emuRun) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i, w := range e.sc.Workloads {
		e.jobs = append(e.jobs, newEmuJob(w, i, e.seed))
	}
	e.setupPerf(ctx)
	// Fabric time 0 a little ahead, so that every start is in the future.
	e.t0 = time.Now().Add(100 * time.Millisecond)
	for _, j := range e.jobs {
		wg.Go(func() { e.runJob(ctx, j) })
	}
	e.startFaults(ctx)
	defer e.fclock.Close(e.stopFaults)
	if e.opts.ReportDir != "" {
		sctx, stopSeries := context.WithCancel(ctx)
		var swg sync.WaitGroup
		swg.Go(func() { e.recordSeries(sctx) })
		defer func() { stopSeries(); swg.Wait() }()
	}
	// Snapshots every SnapshotEvery of fabric time until the jobs are done
	// and the scenario's duration has passed.
	jobsDone := make(chan struct{})
	go func() { wg.Wait(); close(jobsDone) }()
	e.snapshot(ctx, 0, false)
	every := max(e.wall(e.opts.SnapshotEvery), 20*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	end := e.t0.Add(e.wall(e.sc.Duration))
	// Jobs that outlive the run's duration by far are stopped.
	deadline := time.NewTimer(time.Until(end) + max(2*time.Until(end), 30*time.Second))
	defer deadline.Stop()
	done := false
	lastLog := time.Now()
	for !(done && !time.Now().Before(end)) {
		select {
		case <-jobsDone:
			done, jobsDone = true, nil
			if d := time.Until(end); d > 0 {
				tick.Reset(min(every, d))
			}
		case <-tick.C:
			e.snapshot(ctx, e.fabricNow(), false)
			if time.Since(lastLog) > 2*time.Second {
				lastLog = time.Now()
				e.logf("fabric time %v of %v", e.fabricNow()/clock.Microsecond*clock.Microsecond, e.sc.Duration)
			}
		case <-deadline.C:
			if e.progressedWithin(chakraStallWall) {
				deadline.Reset(chakraStallWall)
				continue
			}
			e.problem("workloads still running %v of wall time after the run's end: stopped", time.Since(end).Round(time.Second))
			cancel()
			<-jobsDone
			done = true
		case <-ctx.Done():
			wg.Wait()
			e.fclock.Close(e.stopFaults)
			return fmt.Errorf("stopped at %v of %v: %w", e.fabricNow(), e.sc.Duration, context.Cause(ctx))
		}
	}
	e.fclock.Close(e.stopFaults) // the fault schedule's pending events end
	e.snapshot(context.Background(), e.fabricNow(), true)
	return nil
}

// errNoClient is telemetry's answer for a node the run has no client of.
var errNoClient = errors.New("no client")

// telemetry reads a node's telemetry, waiting at most timeout.
func (e *emuRun) telemetry(ctx context.Context, node string, timeout time.Duration, names ...string) ([]telemetry.Sample, error) {
	c := e.clients[node]
	if c == nil {
		return nil, errNoClient
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, s, err := c.TelemetryAt(ctx, names...)
	return s, err
}

// snapshot scrapes every node's telemetry (and, at the end, the jobs').
func (e *emuRun) snapshot(ctx context.Context, at clock.Duration, final bool) {
	var all []telemetry.Sample
	for _, n := range e.lab.Nodes {
		s, err := e.telemetry(ctx, n.Name, 5*time.Second)
		if errors.Is(err, errNoClient) {
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				e.problem("telemetry of %s: %v", n.Name, err)
			}
			continue
		}
		all = append(all, s...)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if final {
		var fcts fct.Dist // every job's completion times
		for _, j := range e.jobs {
			j.samples(func(s telemetry.Sample) { all = append(all, s) }, &fcts)
		}
		if fcts.Count() > 0 {
			emitFCT(func(s telemetry.Sample) { all = append(all, s) }, nil, &fcts)
		}
	}
	e.snaps = append(e.snaps, expect.Snapshot{At: clock.Time(at), Samples: all})
}
