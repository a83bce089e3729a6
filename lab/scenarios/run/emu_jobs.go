package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"
	"github.com/rocelab/rocelab/lab/simulation/simlab"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/lab/scenarios/report"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/workloads/chakra"
)

func pid() int { return os.Getpid() }

// emuJob is one workload of an emulated run; its fields are written by
// the job's goroutine and read after it ended (under emuRun.mu).
type emuJob struct {
	w     *scenario.Workload
	index int             // in the file
	flows []scenario.Flow // for the run's seed, as Sim draws them
	// pflows are a perf job's flows with their QPs, created and
	// connected before the run's clock started (e.setupPerf), and
	// perr what went wrong doing so.
	pflows []jobs.Flow
	perr   error
	done   bool
	err    error
	perf   []jobs.PerfReport
	coll   []collective.Result
	gens   []*emuGen
	check  bool
	// chakra: each step's result on the step clock, and the fabric time
	// it started at.
	chakra       []*chakra.Result
	chakraStarts []clock.Time
}

// newEmuJob is workload w, the index-th of the file, in a run with seed.
func newEmuJob(w *scenario.Workload, index int, seed uint64) *emuJob {
	return &emuJob{w: w, index: index, flows: w.Permutation(seed)}
}

// emuGen is one generator flow of a background workload: a traffic
// fault on the sender's NIC.
type emuGen struct {
	from, to    *topologies.Port
	frameLen    int
	start, stop clock.Duration
	generated   int64
	err         error
}

// runJob runs workload j.w from its start time to its end.
func (e *emuRun) runJob(ctx context.Context, j *emuJob) {
	w := j.w
	var err error
	starts := w.Start
	if w.Kind != scenario.KindPerf {
		// A perf workload does not wait: its QPs were set up before the
		// clock started, and its flows are told to begin at w.Start
		// (nodeapi.PerfRequest.At), every flow at once as in --sim,
		// however long the API calls take.
		err = e.sleepUntil(ctx, w.Start)
		starts = e.fabricNow() / clock.Microsecond * clock.Microsecond
	}
	if err == nil {
		e.logf("job %s (%s) starts at %v", w.Name, w.Kind, starts)
		switch w.Kind {
		case scenario.KindPerf:
			pctx, cancel := ctx, context.CancelFunc(func() {})
			if w.Duration > 0 {
				// As in --sim, a timed perf job that cannot finish (its
				// receiver is stormed, say) is no problem: it is
				// stopped once the run's end is well past, and its
				// flows report what they completed. The messages still
				// queued when its time is up drain through a congested
				// fabric (an incast's queues): emuGrace allows that.
				grace := emuGrace(e.sc, w, j.flows, e.scale)
				pctx, cancel = context.WithDeadline(ctx, e.t0.Add(e.wall(e.sc.Duration+grace)))
			}
			err = e.runPerf(pctx, j)
			if err != nil && ctx.Err() == nil && errors.Is(err, jobs.ErrStopped) {
				e.logf("job %s not finished %v after the end of the run: stopped", w.Name, e.fabricNow()-e.sc.Duration)
				err = nil
			}
			cancel()
		case scenario.KindCollective:
			err = e.runCollective(ctx, j)
		case scenario.KindBackground:
			err = e.runBackground(ctx, j)
		case scenario.KindChakra:
			err = e.runChakra(ctx, j)
		default:
			err = fmt.Errorf("kind %s is not supported in emulation yet", w.Kind)
		}
	}
	e.mu.Lock()
	j.done, j.err = err == nil, err
	e.mu.Unlock()
	if err != nil {
		e.problem("%s %s: %v", w.Kind, w.Name, err)
		return
	}
	e.logf("job %s done at %v", w.Name, e.fabricNow()/clock.Microsecond*clock.Microsecond)
}

// runCollective runs the collective over the workload's ranks.
func (e *emuRun) runCollective(ctx context.Context, j *emuJob) error {
	w := j.w
	spec := jobs.CollectiveSpec{Op: w.CollectiveOp.String(), Sizes: w.Sizes, Warmup: w.Warmup, Iters: w.Iters,
		Check: needsRaw(e.sc), Seed: e.sc.Seed, Mode: w.Mode, CC: ccName(w), Paths: w.Paths}
	j.check = spec.Check
	for _, p := range w.Ranks {
		ref, err := e.nic(p)
		if err != nil {
			return err
		}
		spec.Ranks = append(spec.Ranks, ref)
	}
	res, err := jobs.RunCollective(ctx, spec, nil)
	e.mu.Lock()
	j.coll = res
	e.mu.Unlock()
	return err
}

// runBackground puts one traffic generator per flow on the sender's NIC
// (the simulated run's generators, as faults through the node API) and
// takes them off at their end.
func (e *emuRun) runBackground(ctx context.Context, j *emuJob) error {
	w := j.w
	type placed struct {
		g   *emuGen
		id  string
		end clock.Duration
	}
	var ps []placed
	sim := &runner{sc: e.sc}
	for i, f := range j.flows {
		g, spec, err := sim.genSpec(w, i, f)
		if err != nil {
			return err
		}
		t := spec.Params.(faults.Traffic)
		eg := &emuGen{from: f.From, to: f.To, frameLen: trafficFrameLen(t.Size), start: e.fabricNow()}
		j.gens = append(j.gens, eg)
		target := scenario.PortName(f.From)
		pl, err := e.placer.Add(ctx, target, spec)
		if err != nil {
			return fmt.Errorf("generator on %s: %w", target, err)
		}
		end := e.sc.Duration
		if g.stop != clock.Never {
			end = clock.Duration(g.stop)
		}
		ps = append(ps, placed{eg, pl[0].ID, end})
	}
	for _, p := range ps {
		if err := e.sleepUntil(ctx, p.end); err != nil && ctx.Err() == nil {
			return err
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		fi, err := e.placer.Remove(cctx, p.id)
		cancel()
		p.g.stop = e.fabricNow()
		if err != nil {
			p.g.err = err
			return fmt.Errorf("generator %s on %s: %w", p.id, scenario.PortName(p.g.from), err)
		}
		p.g.generated = fi.Packets["generated"]
	}
	return nil
}

// trafficFrameLen is the length of the frames a raw traffic generator of
// frame size size sends (faults.Traffic: the payload cut to RoCE's 4-byte
// alignment; IPv4).
func trafficFrameLen(size int) int {
	const hdr = 14 + 20 + 8 + 12 + 4
	return hdr + max(0, (size-hdr)&^3)
}

// startFaults starts the scenario's fault schedule — the one the
// simulated run applies on its engine (runner.startFaults) — on the lab's
// fabric clock, through the lab's fault placer (jobs.Faults): each step
// is placed on its ports at its scaled wall time and removed For later.
// Stop it with e.fclock.Close.
func (e *emuRun) startFaults(ctx context.Context) {
	e.fclock = &jobs.FabricClock{Start: e.t0, Scale: e.scale}
	sched := e.sc.FaultSchedule()
	if len(sched.Events) == 0 {
		return
	}
	e.fclock.Do(func() {
		run := sched.Start(ctx, e.fclock, loggedPlacer{e.placer, e}, func(err error) { e.problem("%v", err) })
		e.stopFaults = func() { run.Stop(false) }
	})
}

// loggedPlacer logs every fault the run places.
type loggedPlacer struct {
	faults.Placer
	e *emuRun
}

func (p loggedPlacer) Add(ctx context.Context, target string, s faults.Spec) ([]faults.Placed, error) {
	placed, err := p.Placer.Add(ctx, target, s)
	for _, pl := range placed {
		p.e.logf("fault %s %s on %s at %v", pl.ID, pl.Spec, target, p.e.fabricNow()/clock.Microsecond*clock.Microsecond)
	}
	return placed, err
}

// samples emits the job's samples as the simulated run does (see the
// package documentation): a perf flow's goodput (a timed one's within its
// window, as the simulator's), the job's completion times as fct
// statistics, merged over its flows (the endpoint nodes send each flow's
// distribution: nodeapi.PerfResult.FCT) and into all, and a latency
// test's median.
func (j *emuJob) samples(emit func(telemetry.Sample), all *fct.Dist) {
	name := j.w.Name
	jl := []telemetry.Label{{Name: "job", Value: name}}
	var fcts fct.Dist
	for _, rep := range j.perf {
		if rep.From == "" {
			continue
		}
		l := []telemetry.Label{{Name: "job", Value: name}, {Name: "from", Value: rep.From}, {Name: "to", Value: rep.To}}
		emit(telemetry.Sample{Name: "flow_goodput_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: flowGoodput(j.w, rep) / 8})
		if j.w.Latency && rep.Client.Lat != nil {
			emit(telemetry.Sample{Name: "perftest_latency_seconds", Kind: telemetry.Gauge, Labels: jl, Value: rep.Client.Lat.Typical.Seconds()})
		}
		fcts.Merge(rep.Client.FCT)
	}
	if fcts.Count() > 0 {
		emitFCT(emit, jl, &fcts)
		all.Merge(&fcts)
	}
	if j.w.Kind == scenario.KindCollective {
		var wrong int64
		for _, res := range j.coll {
			l := []telemetry.Label{{Name: "job", Value: name}, {Name: "size", Value: strconv.FormatInt(res.Size, 10)}}
			emit(telemetry.Sample{Name: "collective_busbw_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: res.BusBW * 1e9})
			emit(telemetry.Sample{Name: "collective_algbw_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: res.AlgBW * 1e9})
			emit(telemetry.Sample{Name: "collective_time_seconds", Kind: telemetry.Gauge, Labels: l, Value: res.TimeUs / 1e6})
			wrong += res.Wrong
		}
		if j.check {
			emit(telemetry.Sample{Name: "collective_wrong_elements_total", Kind: telemetry.Counter, Labels: jl, Value: float64(wrong)})
		}
	}
	if j.w.Kind == scenario.KindChakra {
		simlab.ChakraSamples(emit, name, j.chakra)
	}
	for _, g := range j.gens {
		emit(telemetry.Sample{Name: "flow_goodput_bytes_per_second", Kind: telemetry.Gauge, Labels: flowLabels(name, g.from, g.to), Value: g.rate() / 8})
		emit(telemetry.Sample{Name: "generator_tx_bytes_total", Kind: telemetry.Counter, Labels: flowLabels(name, g.from, g.to), Value: float64(g.generated * int64(g.frameLen))})
	}
}

// rate is the generator's mean sending rate while it was on.
func (g *emuGen) rate() float64 {
	if g.stop <= g.start {
		return 0
	}
	return float64(g.generated*int64(g.frameLen)) * 8 / (g.stop - g.start).Seconds()
}

// flowGoodput is a perf flow's goodput in bits/s, as the simulator
// measures it: a timed flow's, the data that arrived by the end of its
// window over the window (its server's PerfResult.WindowBytes); else the
// client's bytes completed over first post to last completion.
func flowGoodput(w *scenario.Workload, rep jobs.PerfReport) float64 {
	if w.Duration > 0 && rep.Server.WindowBytes > 0 {
		return float64(rep.Server.WindowBytes) * 8 / w.Duration.Seconds()
	}
	return rep.Client.BWAvg * 1e9
}

// summary is the report's view of the job.
func (j *emuJob) summary() report.Job {
	s := report.Job{Name: j.w.Name, Kind: string(j.w.Kind), Done: j.done}
	if j.err != nil {
		s.Err = j.err.Error()
	}
	for _, rep := range j.perf {
		if rep.From == "" {
			continue
		}
		f := report.Flow{From: rep.From, To: rep.To, Bytes: rep.Client.Bytes, GoodputBps: flowGoodput(j.w, rep), Messages: rep.Client.Messages}
		if l := rep.Client.Lat; l != nil {
			f.FCTMedian, f.FCTP99 = l.Typical.Seconds(), l.P99.Seconds()
		} else if d := rep.Client.FCT; d != nil {
			st := d.Stats()
			f.FCTMedian, f.FCTP99 = st.Median.Seconds(), st.P99.Seconds()
		}
		s.Flows = append(s.Flows, f)
	}
	s.Collective = append(s.Collective, j.coll...)
	if j.w.Kind == scenario.KindChakra {
		s.Chakra = chakraRun(j.w, j.chakra, j.chakraStarts)
	}
	for _, g := range j.gens {
		s.Flows = append(s.Flows, report.Flow{From: scenario.PortName(g.from), To: scenario.PortName(g.to),
			Bytes: g.generated * int64(g.frameLen), GoodputBps: g.rate()})
	}
	return s
}
