package flowsim

import (
	"fmt"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/endpoint/collective/hierplan"
)

// HierSpec is a hierarchical all-reduce, as simlab.HierSpec: a
// reduce-scatter inside each group of GroupSize consecutive ranks (a
// host), an all-reduce of Size/GroupSize per local index across the
// groups (one ring per rail, all at once), an all-gather inside each
// group — every phase a ring of the collective engine over flow-level
// writes, every communicator connected as the packet simulator connects
// it (groups, zones, then rails), so its QPs are numbered and routed
// alike. With Levels the cross-group step runs level by level (as
// simlab.HierSpec.Levels: reduce-scatters among consecutive groups, then
// among consecutive units of those, an all-reduce across the outermost,
// the all-gathers back); with NVLink the groups' phases run off
// the fabric.
type HierSpec struct {
	// Name labels the job's samples (default "hierN").
	Name string
	// Ranks are NIC names in rank order (default every BE NIC in node
	// order); their number must be a multiple of GroupSize × Levels, at
	// least two of the outermost units.
	Ranks []string
	// GroupSize is the ranks per group (default 8).
	GroupSize int
	// Levels are the sizes of the levels above the groups, innermost
	// first (simlab.HierSpec.Levels; each at least 2).
	Levels []int
	// NVLink, if set, is the rate of each rank's link inside its group:
	// the group's phases take g−1 steps of Size/GroupSize bytes at that
	// rate, each after NVLinkLatency (default 1 µs), off the fabric.
	NVLink        clock.Rate
	NVLinkLatency clock.Duration
	// Size is the all-reduce size in nccl-tests bytes (default 64 MiB),
	// rounded down to a multiple of 4 × GroupSize × Levels.
	Size int64
	// Mode and Paths configure every QP (defaults: the lab's).
	Mode  string
	Paths int
	// Start is the fabric time the job starts at.
	Start clock.Time
	// Rings, if not "", times every ring phase by the ring recurrence
	// (ring.go) at fixed rates instead of running the collective engine:
	// "alone" (each QP at its narrowest link's rate) or "shared" (the
	// max-min rates of all the phase's QPs sending at once). "auto" is
	// "shared" when the rings make more than RecurrenceWrites writes or
	// one has more ranks than the engine takes (collective.MaxRanks), the
	// engine otherwise. The recurrence sees no other job's flows, nor do
	// they see its: for a job alone on the fabric.
	Rings string
}

// RecurrenceWrites is the most writes the rings of a hierarchical
// all-reduce make under the engine with HierSpec.Rings "auto": a write
// costs the engine ~3 µs on a quiet fabric and ~22 µs when 24,576 QPs
// share it (seed-24k's all-reduce in levels [4, 96], 5.2 M writes: 116 s
// under the engine, 4 s by the recurrence, 1.02 against 1.03 ms).
const RecurrenceWrites = 2_000_000

// hierPhase is one step of the plan (hierplan.Phase) with its rings
// connected (trs, and comms under the engine); trs nil for an NVLink
// step.
type hierPhase struct {
	hierplan.Phase
	comms []*collective.Comm
	trs   []*transport
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
		spec.Ranks = l.names
	}
	plan := hierplan.Spec{GroupSize: spec.GroupSize, Levels: spec.Levels, NVLink: spec.NVLink, NVLinkLatency: spec.NVLinkLatency, Size: spec.Size}
	n := len(spec.Ranks)
	if err := plan.Check(spec.Name, n); err != nil {
		return nil, err
	}
	spec.GroupSize, spec.NVLinkLatency, spec.Size = plan.GroupSize, plan.NVLinkLatency, plan.Size
	if spec.Mode == "" {
		spec.Mode = l.opts.Mode
	}
	mode, err := endpoint.ParseMode(spec.Mode)
	if err != nil {
		return nil, fmt.Errorf("hierarchical %s: %w", spec.Name, err)
	}
	switch spec.Rings {
	case "", "alone", "shared":
	case "auto":
		spec.Rings = ""
		if phases := hierplan.Plan(plan, n); hierWrites(phases, n) > RecurrenceWrites || hierLongest(phases) > collective.MaxRanks {
			spec.Rings = "shared"
		}
	default:
		return nil, fmt.Errorf("hierarchical %s: rings %q: want alone, shared or auto", spec.Name, spec.Rings)
	}
	nics := make([]*nic, n)
	for i, r := range spec.Ranks {
		if nics[i], err = l.nic(r); err != nil {
			return nil, fmt.Errorf("hierarchical %s: %w", spec.Name, err)
		}
	}
	// A level's rings are connected once, in the plan's order (groups,
	// levels, rails: simlab's, so that QPs are numbered and routed
	// alike), and shared by its reduce-scatter and all-gather; no engine
	// under the recurrence (nor its limit of collective.MaxRanks ranks,
	// from its immediates).
	j := &HierJob{l: l, spec: spec, plan: plan}
	type conn struct {
		comms []*collective.Comm
		trs   []*transport
	}
	connected := map[*[]int]conn{}
	for _, p := range hierplan.Plan(plan, n) {
		hp := hierPhase{Phase: p}
		if len(p.Rings) > 0 {
			key := &p.Rings[0]
			c, ok := connected[key]
			for k := 0; !ok && k < len(p.Rings); k++ {
				members := make([]*nic, len(p.Rings[k]))
				for m, r := range p.Rings[k] {
					members[m] = nics[r]
				}
				tr, err := l.newTransport(members, mode, spec.Paths, false, false)
				if err == nil && spec.Rings == "" {
					var cm *collective.Comm
					cm, err = collective.New(l.e, tr, collective.Config{Ranks: len(members), Type: collective.Float32, Seed: l.opts.Seed})
					c.comms = append(c.comms, cm)
				}
				if err != nil {
					return nil, fmt.Errorf("hierarchical %s: %s %d: %w", spec.Name, p.Level, k, err)
				}
				c.trs = append(c.trs, tr)
			}
			connected[key] = c
			hp.comms, hp.trs = c.comms, c.trs
		}
		j.phases = append(j.phases, hp)
	}
	l.addJob(j)
	l.At(spec.Start, j.next)
	return j, nil
}

// hierWrites is the writes the rings of a plan over n ranks make: each
// rank a chunk a step, in slices.
func hierWrites(phases []hierplan.Phase, n int) int64 {
	var w int64
	for _, p := range phases {
		if len(p.Rings) == 0 {
			continue
		}
		m := int64(len(p.Rings[0]))
		steps := m - 1
		if p.Op == collective.AllReduce {
			steps *= 2
		}
		elems := (p.Size/4 + m - 1) / m
		slices := (elems + collective.DefaultSliceBytes/4 - 1) / (collective.DefaultSliceBytes / 4)
		w += int64(n) * steps * slices
	}
	return w
}

// hierLongest is the most ranks a ring of a plan has.
func hierLongest(phases []hierplan.Phase) int {
	longest := 0
	for _, p := range phases {
		if len(p.Rings) > 0 {
			longest = max(longest, len(p.Rings[0]))
		}
	}
	return longest
}

// next starts the next phase (or finishes the job).
func (j *HierJob) next() {
	now := j.l.Now()
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
	switch {
	case p.trs == nil:
		j.l.At(now.Add(p.Wait), j.next)
	case j.spec.Rings != "":
		j.recur(p)
	default:
		j.left = len(p.comms)
		for _, c := range p.comms {
			c.Sweep(p.Op, []int64{p.Size}, 0, 1, j.phaseDone)
		}
	}
}

func (j *HierJob) phaseDone(_ []collective.Result, err error) {
	if j.err != nil {
		return
	}
	if err != nil {
		j.err = fmt.Errorf("hierarchical %s: phase %d: %w", j.spec.Name, j.phase, err)
		j.phase = len(j.phases) + 1
		j.l.finished()
		return
	}
	j.left--
	if j.left == 0 {
		j.next()
	}
}

// recur times the phase's rings by the recurrence (ringEnd) and goes on
// to the next phase when the last one ends.
func (j *HierJob) recur(p hierPhase) {
	now := j.l.Now()
	edges := make([][]ringEdge, len(p.trs))
	var qps []*QP
	for i, tr := range p.trs {
		n := len(tr.ranks)
		for r := range n {
			q := tr.conns[[2]int{r, (r + 1) % n}]
			rate := 0.0
			for _, path := range q.paths {
				rate += j.l.net.solver.ubOf(path)
			}
			edges[i] = append(edges[i], ringEdge{rate: rate, oneWay: q.oneWay, back: q.back, mtu: tr.ranks[r].mtu})
			qps = append(qps, q)
		}
	}
	if j.spec.Rings == "shared" {
		var uses [][]Use
		for _, q := range qps {
			uses = append(uses, q.paths...)
		}
		rates := make([]float64, len(uses))
		MaxMin(j.l.net.caps, uses, nil, rates)
		k := 0
		for i := range edges {
			for r := range edges[i] {
				edges[i][r].rate = 0
				for range qps[k].paths {
					edges[i][r].rate += rates[0]
					rates = rates[1:]
				}
				k++
			}
		}
	}
	end := now
	for _, es := range edges {
		e, err := ringEnd(ringConfig{op: p.Op, size: p.Size, slice: collective.DefaultSliceBytes, window: collective.DefaultWindow}, es, now)
		if err != nil {
			j.phaseDone(nil, err)
			return
		}
		end = max(end, e)
	}
	j.l.At(end, j.next)
}

// Name returns the job's name.
func (j *HierJob) Name() string { return j.spec.Name }

// Spec returns the job's specification, defaults filled in.
func (j *HierJob) Spec() HierSpec { return j.spec }

// Done reports whether the job finished (or failed).
func (j *HierJob) Done() bool { return j.phase > len(j.phases) }

// Err returns the error that ended the job, if any.
func (j *HierJob) Err() error { return j.err }

// HierResult is what a hierarchical all-reduce measured, as
// simlab.HierResult.
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
// op and size, as simlab.HierJob does.
func (j *HierJob) Collect(emit func(telemetry.Sample)) { j.Result().Collect(j.spec.Name, emit) }
