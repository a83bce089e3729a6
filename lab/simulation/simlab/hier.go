package simlab

import (
	"fmt"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/endpoint/collective/hierplan"
	"github.com/rocelab/rocelab/endpoint/rdmacomm"
)

// HierSpec is a hierarchical all-reduce, as NCCL runs it across hosts of
// several GPUs: a reduce-scatter inside each group of GroupSize
// consecutive ranks (a host), then one all-reduce of Size/GroupSize per
// local index across the groups (one ring per rail, all at once), then an
// all-gather inside each group. Every phase is a ring over the lab's
// fabric (the simulator has no NVLink: intra-host traffic crosses the
// host's leaf) unless NVLink is set.
//
// With Levels, the cross-group step is itself hierarchical, as a cluster
// of racks and AI zones could run it: for Levels [4, 96], a
// reduce-scatter among the 4 consecutive groups of each rail (a rack),
// then among the 96 consecutive racks (a zone) on each rail and position,
// an all-reduce across the zones, and the all-gathers back in reverse
// order, each level a ring over Size divided by the levels below it. A
// flat ring across 3,072 hosts takes 6,142 latency-bound steps; Levels
// [384] 2 × 383 + 2 × 7, Levels [4, 96] 2 × (3 + 95 + 7).
type HierSpec struct {
	// Name labels the job's samples (default "hierN").
	Name string
	// Ranks are NIC names in rank order (default every BE NIC in node
	// order); their number must be a multiple of GroupSize × Levels.
	Ranks []string
	// GroupSize is the ranks per group (default 8).
	GroupSize int
	// Levels are the sizes of the levels above the groups, innermost
	// first (see above; each at least 2): ranks must then be at least two
	// of the outermost level's units.
	Levels []int
	// NVLink, if set, is the rate of each rank's link inside its group:
	// the group's reduce-scatter and all-gather run off the fabric, as
	// ring steps of Size/GroupSize bytes at that rate, each after
	// NVLinkLatency (default 1 µs). Only cross-group traffic then
	// crosses the fabric, as on hosts whose GPUs share an NVSwitch.
	NVLink        clock.Rate
	NVLinkLatency clock.Duration
	// Size is the all-reduce size in nccl-tests bytes (default 64 MiB); it
	// is rounded down to a multiple of 4 × GroupSize × Levels.
	Size int64
	// Mode, CC and Paths configure every QP (defaults: the lab's).
	Mode, CC string
	Paths    int
	// Start is the fabric time the job starts at.
	Start clock.Time
}

// hierPhase is one step of the plan (hierplan.Phase), its rings
// connected: comms nil for an NVLink step.
type hierPhase struct {
	hierplan.Phase
	comms []*collective.Comm
}

// HierJob is a running hierarchical all-reduce.
type HierJob struct {
	l      *Lab
	spec   HierSpec
	plan   hierplan.Spec
	phases []hierPhase
	phase  int        // phases started; len(phases)+1 once done
	left   int        // comms of the running phase still running
	last   clock.Time // start of the running phase
	spent  [3]clock.Duration
	err    error
}

// Hierarchical adds a hierarchical all-reduce job.
func (l *Lab) Hierarchical(spec HierSpec) (*HierJob, error) {
	if spec.Name == "" {
		spec.Name = "hier" + strconv.Itoa(len(l.jobs))
	}
	if len(spec.Ranks) == 0 {
		spec.Ranks = l.NICNames()
	}
	plan := hierplan.Spec{GroupSize: spec.GroupSize, Levels: spec.Levels, NVLink: spec.NVLink, NVLinkLatency: spec.NVLinkLatency, Size: spec.Size}
	n := len(spec.Ranks)
	if err := plan.Check(spec.Name, n); err != nil {
		return nil, err
	}
	spec.GroupSize, spec.NVLinkLatency, spec.Size = plan.GroupSize, plan.NVLinkLatency, plan.Size
	l.defaultModeCC(&spec.Mode, &spec.CC)
	if l.opts.Raw {
		return nil, fmt.Errorf("hierarchical %s: needs a payload-free lab (Options.Raw false)", spec.Name)
	}
	mode, err := endpoint.ParseMode(spec.Mode)
	if err != nil {
		return nil, fmt.Errorf("hierarchical %s: %w", spec.Name, err)
	}
	if _, err := l.reg.Get(spec.CC); err != nil {
		return nil, fmt.Errorf("hierarchical %s: %w", spec.Name, err)
	}
	nics := make([]*endpoint.NIC, n)
	for i, r := range spec.Ranks {
		if nics[i], err = l.nic(r); err != nil {
			return nil, fmt.Errorf("hierarchical %s: %w", spec.Name, err)
		}
	}
	qp := endpoint.QPConfig{Mode: mode, CC: spec.CC, Paths: spec.Paths, Window: l.opts.QPWindow, Timeout: l.opts.QPTimeout}
	j := &HierJob{l: l, spec: spec, plan: plan}
	// A level's rings are connected once, in the plan's order (groups,
	// levels, rails), and shared by its reduce-scatter and all-gather.
	connected := map[*[]int][]*collective.Comm{}
	for _, p := range hierplan.Plan(plan, n) {
		hp := hierPhase{Phase: p}
		if len(p.Rings) > 0 {
			key := &p.Rings[0]
			comms, ok := connected[key]
			for k := 0; !ok && k < len(p.Rings); k++ {
				ring := p.Rings[k]
				members := make([]*endpoint.NIC, len(ring))
				for m, r := range ring {
					members[m] = nics[r]
				}
				tr, err := rdmacomm.New(rdmacomm.Options{NICs: members, Pairs: rdmacomm.Ring, QP: qp})
				var c *collective.Comm
				if err == nil {
					c, err = collective.New(l, tr, collective.Config{Ranks: len(ring), Type: collective.Float32, Seed: l.opts.Seed})
				}
				if err != nil {
					return nil, fmt.Errorf("hierarchical %s: %s %d: %w", spec.Name, p.Level, k, err)
				}
				comms = append(comms, c)
			}
			connected[key] = comms
			hp.comms = comms
		}
		j.phases = append(j.phases, hp)
	}
	l.addJob(j)
	l.at(spec.Start, j.next)
	return j, nil
}

// next starts the next phase (or finishes the job).
// It runs where the lab is still: the job's start or an NVLink step's end
// (global events), or the end of the phase's last communicator (a serial
// window: see mayEnd).
func (j *HierJob) next() {
	now := j.l.now()
	if j.phase > 0 {
		j.spent[j.phases[j.phase-1].Bucket] += now.Sub(j.last)
	}
	j.last = now
	j.phase++
	if j.phase > len(j.phases) {
		j.l.finished()
		return
	}
	p := j.phases[j.phase-1]
	if p.comms == nil {
		j.l.at(now.Add(p.Wait), j.next)
		return
	}
	j.left = len(p.comms)
	for _, c := range p.comms {
		c.Sweep(p.Op, []int64{p.Size}, 0, 1, j.phaseDone)
	}
}

func (j *HierJob) phaseDone(_ []collective.Result, err error) {
	// A failure may come from any partition mid-window; an end, only
	// where the lab is still (mayEnd).
	j.l.lock()
	if j.err != nil {
		j.l.unlock()
		return
	}
	if err != nil {
		j.err = fmt.Errorf("hierarchical %s: phase %d: %w", j.spec.Name, j.phase, err)
		j.phase = len(j.phases) + 1
		j.l.unlock()
		j.l.finished()
		return
	}
	j.l.unlock()
	j.left--
	if j.left == 0 {
		j.next()
	}
}

// mayEnd reports whether a communicator of the running phase might end
// in the next window: one running whose ranks expect no arrival
// (collective.Comm.Expecting).
func (j *HierJob) mayEnd() bool {
	if j.phase < 1 || j.phase > len(j.phases) {
		return false
	}
	for _, c := range j.phases[j.phase-1].comms {
		if c.Busy() && !c.Expecting() {
			return true
		}
	}
	return false
}

// Name returns the job's name.
func (j *HierJob) Name() string { return j.spec.Name }

// Spec returns the job's specification, defaults filled in.
func (j *HierJob) Spec() HierSpec { return j.spec }

// Done reports whether the job finished (or failed).
func (j *HierJob) Done() bool { return j.phase > len(j.phases) }

// Err returns the error that ended the job, if any.
func (j *HierJob) Err() error { return j.err }

// HierResult is what a hierarchical all-reduce measured.
type HierResult = hierplan.Result

// Result returns the job's figures (zero until it is done).
func (j *HierJob) Result() HierResult {
	if !j.Done() || j.err != nil {
		return HierResult{}
	}
	return hierplan.NewResult(j.plan, len(j.spec.Ranks), j.spent)
}

// Results returns the job as one nccl-tests line once done (none before).
func (j *HierJob) Results() []collective.Result { return j.Result().NCCL() }

// Collect emits the job's busbw, algbw and time once done, labelled job,
// op and size.
func (j *HierJob) Collect(emit func(telemetry.Sample)) { j.Result().Collect(j.spec.Name, emit) }
