package simlab

import (
	"fmt"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/endpoint/rdmacomm"
)

// CollSpec is an NCCL-style collective job over the lab's NICs (RDMA
// WRITE WITH IMMEDIATE on queue pairs, through endpoint/rdmacomm).
type CollSpec struct {
	// Name labels the job's samples (default "collN").
	Name string
	// Op is all_reduce (default), all_gather, reduce_scatter or alltoall.
	Op string
	// Ranks are NIC names in rank order (default every BE NIC, in node
	// order).
	Ranks []string
	// Sizes to sweep, in nccl-tests bytes (default 64 MiB).
	Sizes []int64
	// Iters measured per size (default 5) after Warmup (default 1).
	Iters, Warmup int
	// Mode ("rocev2", "metaroce"), CC and Paths configure every QP;
	// Mode and CC default to the lab's.
	Mode, CC string
	Paths    int
	// Check carries real data and verifies every element; it needs a Raw
	// lab (payload-free NICs carry lengths only), and a payload-free lab
	// needs Check false.
	Check bool
	// SliceBytes and Window tune the engine (collective.Config).
	SliceBytes, Window int
	// Start is the fabric time the job starts at.
	Start clock.Time
}

// CollJob is a running collective job.
type CollJob struct {
	l       *Lab
	spec    CollSpec
	op      collective.Op
	nics    []*endpoint.NIC
	comm    *collective.Comm
	tr      *rdmacomm.Transport
	results []collective.Result
	err     error
	started bool
	done    bool
	start   clock.Time
	end     clock.Time
}

// Collective adds a collective job; it starts at spec.Start and sweeps
// spec.Sizes one after the other.
func (l *Lab) Collective(spec CollSpec) (*CollJob, error) {
	if spec.Name == "" {
		spec.Name = "coll" + strconv.Itoa(len(l.jobs))
	}
	if spec.Op == "" {
		spec.Op = "all_reduce"
	}
	if len(spec.Ranks) == 0 {
		spec.Ranks = l.NICNames()
	}
	if len(spec.Sizes) == 0 {
		spec.Sizes = []int64{64 << 20}
	}
	if spec.Iters <= 0 {
		spec.Iters = 5
	}
	if spec.Warmup < 0 {
		spec.Warmup = 0
	} else if spec.Warmup == 0 {
		spec.Warmup = 1
	}
	l.defaultModeCC(&spec.Mode, &spec.CC)
	j := &CollJob{l: l, spec: spec}
	var err error
	if j.op, err = collective.ParseOp(spec.Op); err != nil {
		return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
	}
	if spec.Check != l.opts.Raw {
		return nil, fmt.Errorf("collective %s: check %v on a lab with raw %v: data checks need real bytes (Options.Raw), a payload-free lab needs check off", spec.Name, spec.Check, l.opts.Raw)
	}
	mode, err := endpoint.ParseMode(spec.Mode)
	if err != nil {
		return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
	}
	if _, err := l.reg.Get(spec.CC); err != nil {
		return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
	}
	for _, r := range spec.Ranks {
		n, err := l.nic(r)
		if err != nil {
			return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
		}
		j.nics = append(j.nics, n)
	}
	pairs := rdmacomm.Ring
	if j.op == collective.AllToAll {
		// A full mesh is n(n-1) QPs; past onDemandRanks pairs are
		// connected on first use and idle ones destroyed (rdmacomm.OnDemand).
		pairs = rdmacomm.All
		if CollectiveOnOneEngine(j.op, len(j.nics)) {
			// Connecting on first use sets up both ends of a pair at once,
			// on whichever partitions they are.
			pairs = rdmacomm.OnDemand
			if err := l.checkOneEngine("collective all-to-all of more than 128 ranks"); err != nil {
				return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
			}
		}
	}
	// QPs are connected now (no packets move until the job starts).
	j.tr, err = rdmacomm.New(rdmacomm.Options{NICs: j.nics, Pairs: pairs,
		QP: endpoint.QPConfig{Mode: mode, CC: spec.CC, Paths: spec.Paths, Window: l.opts.QPWindow, Timeout: l.opts.QPTimeout}})
	if err != nil {
		return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
	}
	// The communicator is the job's coordinator: it starts and ends each
	// iteration on every rank at once, so it schedules on the lab (a
	// global event of a partitioned lab; see coordinating).
	j.comm, err = collective.New(l, j.tr, collective.Config{Ranks: len(j.nics), Type: collective.Float32,
		SliceBytes: spec.SliceBytes, Window: spec.Window, Check: spec.Check, Seed: l.opts.Seed})
	if err != nil {
		return nil, fmt.Errorf("collective %s: %w", spec.Name, err)
	}
	l.addJob(j)
	l.at(spec.Start, j.begin)
	return j, nil
}

// onDemandRanks is the largest all-to-all connected as a full mesh.
const onDemandRanks = 128

// CollectiveOnOneEngine reports whether a collective of op over ranks
// ranks must run on one engine (Options.Workers and Partitions 1): an
// all-to-all of more than 128 ranks, which connects its queue pairs on
// first use, both ends at once. Every other collective runs on a
// partitioned lab.
func CollectiveOnOneEngine(op collective.Op, ranks int) bool {
	return op == collective.AllToAll && ranks > onDemandRanks
}

func (j *CollJob) begin() {
	j.start, j.started = j.l.now(), true
	j.comm.Sweep(j.op, j.spec.Sizes, j.spec.Warmup, j.spec.Iters, func(res []collective.Result, err error) {
		// A sweep ends where the lab is still (a serial window or a global
		// event); a failure may come from a rank's partition mid-window,
		// where the lab's time is not read (Elapsed reads it later).
		j.results, j.err, j.done = res, err, true
		if err != nil {
			j.err = fmt.Errorf("collective %s: %w", j.spec.Name, err)
		} else {
			j.end = j.l.now()
		}
		j.l.finished()
	})
}

// mayEnd reports whether the job might end an iteration (or the sweep)
// in the next window: it is running and no rank still expects an
// arrival (collective.Comm.Expecting).
func (j *CollJob) mayEnd() bool {
	return j.started && !j.done && !j.comm.Expecting()
}

// Name returns the job's name.
func (j *CollJob) Name() string { return j.spec.Name }

// Spec returns the job's specification, defaults filled in.
func (j *CollJob) Spec() CollSpec { return j.spec }

// Done reports whether the sweep finished (or failed).
func (j *CollJob) Done() bool { return j.done }

// Err returns the error that ended the sweep, if any.
func (j *CollJob) Err() error { return j.err }

// Results returns one nccl-tests line per size completed.
func (j *CollJob) Results() []collective.Result { return j.results }

// Elapsed returns the fabric time the sweep took (so far, if running; up
// to the run's stop, if it failed).
func (j *CollJob) Elapsed() clock.Duration {
	if j.done && j.err == nil {
		return j.end.Sub(j.start)
	}
	return j.l.now().Sub(j.start)
}

// Collect emits the communicator's counters and, per size, the busbw,
// algbw and time (labelled job, op and size): the samples a scenario's
// expectations read for a simulated collective.
func (j *CollJob) Collect(emit func(telemetry.Sample)) {
	job := telemetry.Label{Name: "job", Value: j.spec.Name}
	j.comm.Collect(func(s telemetry.Sample) {
		s.Labels = telemetry.With([]telemetry.Label{job}, s.Labels...)
		emit(s)
	})
	for _, r := range j.results {
		l := []telemetry.Label{job, {Name: "op", Value: r.Op}, {Name: "size", Value: strconv.FormatInt(r.Size, 10)}}
		emit(telemetry.Sample{Name: "collective_busbw_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: r.BusBW * 1e9})
		emit(telemetry.Sample{Name: "collective_algbw_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: r.AlgBW * 1e9})
		emit(telemetry.Sample{Name: "collective_time_seconds", Kind: telemetry.Gauge, Labels: l, Value: r.TimeUs / 1e6})
	}
}
