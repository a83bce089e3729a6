package flowsim

import (
	"fmt"
	"strconv"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
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

// hierPhase is one step of a hierarchical all-reduce: a collective of
// size bytes on each communicator (trs, and comms under the engine), or
// (trs nil) an NVLink step of wait.
type hierPhase struct {
	comms []*collective.Comm
	trs   []*transport
	op    collective.Op
	size  int64
	wait  clock.Duration
	// bucket is the result's phase it counts in: 0 reduce-scatter, 1
	// all-reduce, 2 all-gather.
	bucket int
}

// HierJob is a running hierarchical all-reduce.
type HierJob struct {
	l      *Lab
	spec   HierSpec
	phases []hierPhase
	phase  int // phases started; len(phases)+1 once done
	left   int // comms of the running phase still running
	start  clock.Time
	last   clock.Time // start of the running phase
	spent  [3]clock.Duration
	end    clock.Time
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
	if spec.GroupSize <= 0 {
		spec.GroupSize = 8
	}
	if spec.NVLink > 0 && spec.NVLinkLatency <= 0 {
		spec.NVLinkLatency = clock.Microsecond
	}
	if spec.Size <= 0 {
		spec.Size = 64 << 20
	}
	if spec.Mode == "" {
		spec.Mode = l.opts.Mode
	}
	g, n := spec.GroupSize, len(spec.Ranks)
	if n%g != 0 || n/g < 2 {
		return nil, fmt.Errorf("hierarchical %s: %d ranks are not at least two groups of %d", spec.Name, n, g)
	}
	span := g // ranks in one unit of the outermost level
	for _, z := range spec.Levels {
		if z < 2 {
			return nil, fmt.Errorf("hierarchical %s: level of %d: want at least 2", spec.Name, z)
		}
		span *= z
	}
	if n%span != 0 || n/span < 2 {
		return nil, fmt.Errorf("hierarchical %s: %d ranks are not at least two units of %d (groups of %d, levels %v)", spec.Name, n, span, g, spec.Levels)
	}
	unit := int64(4 * span)
	spec.Size = spec.Size / unit * unit
	if spec.Size == 0 {
		return nil, fmt.Errorf("hierarchical %s: size below %d bytes", spec.Name, unit)
	}
	mode, err := endpoint.ParseMode(spec.Mode)
	if err != nil {
		return nil, fmt.Errorf("hierarchical %s: %w", spec.Name, err)
	}
	switch spec.Rings {
	case "", "alone", "shared":
	case "auto":
		spec.Rings = ""
		if hierWrites(spec, n) > RecurrenceWrites || hierLongest(spec, n) > collective.MaxRanks {
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
	// level returns the communicators of ranks that differ only in their
	// index at stride (consecutive groups of size members at that
	// stride), in simlab's order; no engine under the recurrence (nor its
	// limit of collective.MaxRanks ranks, from its immediates).
	level := func(what string, stride, size int) ([]*collective.Comm, []*transport, error) {
		var comms []*collective.Comm
		var trs []*transport
		for base := 0; base < n; base++ {
			if (base/stride)%size != 0 {
				continue
			}
			members := make([]*nic, size)
			for k := range size {
				members[k] = nics[base+k*stride]
			}
			tr, err := l.newTransport(members, mode, spec.Paths, false, false)
			if err == nil && spec.Rings == "" {
				var c *collective.Comm
				c, err = collective.New(l.e, tr, collective.Config{Ranks: size, Type: collective.Float32, Seed: l.opts.Seed})
				comms = append(comms, c)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("hierarchical %s: %s %d: %w", spec.Name, what, len(trs), err)
			}
			trs = append(trs, tr)
		}
		return comms, trs, nil
	}
	size := spec.Size
	var down, up []hierPhase // the reduce-scatters, the all-gathers (outermost first)
	if spec.NVLink > 0 {
		wait := nvlinkWait(spec)
		down = append(down, hierPhase{wait: wait, bucket: 0})
		up = append(up, hierPhase{wait: wait, bucket: 2})
	} else {
		comms, trs, err := level("group", 1, g)
		if err != nil {
			return nil, err
		}
		down = append(down, hierPhase{comms: comms, trs: trs, op: collective.ReduceScatter, size: size, bucket: 0})
		up = append(up, hierPhase{comms: comms, trs: trs, op: collective.AllGather, size: size, bucket: 2})
	}
	size /= int64(g)
	stride := g
	for i, z := range spec.Levels {
		comms, trs, err := level("level "+strconv.Itoa(i+1), stride, z)
		if err != nil {
			return nil, err
		}
		down = append(down, hierPhase{comms: comms, trs: trs, op: collective.ReduceScatter, size: size, bucket: 0})
		up = append(up, hierPhase{comms: comms, trs: trs, op: collective.AllGather, size: size, bucket: 2})
		size /= int64(z)
		stride *= z
	}
	comms, trs, err := level("rail", stride, n/stride)
	if err != nil {
		return nil, err
	}
	j := &HierJob{l: l, spec: spec}
	j.phases = append(j.phases, down...)
	j.phases = append(j.phases, hierPhase{comms: comms, trs: trs, op: collective.AllReduce, size: size, bucket: 1})
	for i := len(up) - 1; i >= 0; i-- {
		j.phases = append(j.phases, up[i])
	}
	l.addJob(j)
	l.At(spec.Start, j.next)
	return j, nil
}

// nvlinkWait is an NVLink phase: a ring of g ranks, g−1 steps of
// Size/GroupSize bytes, each after the latency.
func nvlinkWait(spec HierSpec) clock.Duration {
	g := spec.GroupSize
	step := spec.NVLinkLatency + spec.NVLink.Serialize(int(spec.Size/int64(g)))
	return clock.Duration(g-1) * step
}

// hierRings lists the ring phases of spec over n ranks, once each: ring
// length, steps, and bytes reduced.
func hierRings(spec HierSpec, n int) (rings [][3]int64) {
	g, size := spec.GroupSize, spec.Size
	if spec.NVLink <= 0 {
		rings = append(rings, [3]int64{int64(g), int64(2 * (g - 1)), size}) // reduce-scatter and all-gather
	}
	size /= int64(g)
	stride := g
	for _, z := range spec.Levels {
		rings = append(rings, [3]int64{int64(z), int64(2 * (z - 1)), size})
		size /= int64(z)
		stride *= z
	}
	m := n / stride
	return append(rings, [3]int64{int64(m), int64(2 * (m - 1)), size})
}

// hierWrites is the writes the rings of spec over n ranks make: each rank
// a chunk a step, in slices.
func hierWrites(spec HierSpec, n int) int64 {
	var w int64
	for _, r := range hierRings(spec, n) {
		m, steps, size := r[0], r[1], r[2]
		elems := (size/4 + m - 1) / m
		slices := (elems + collective.DefaultSliceBytes/4 - 1) / (collective.DefaultSliceBytes / 4)
		w += int64(n) * steps * slices
	}
	return w
}

// hierLongest is the most ranks a ring of spec over n ranks has.
func hierLongest(spec HierSpec, n int) int {
	longest := 0
	for _, r := range hierRings(spec, n) {
		longest = max(longest, int(r[0]))
	}
	return longest
}

// next starts the next phase (or finishes the job).
func (j *HierJob) next() {
	now := j.l.Now()
	if j.phase == 0 {
		j.start = now
	} else {
		j.spent[j.phases[j.phase-1].bucket] += now.Sub(j.last)
	}
	j.last = now
	j.phase++
	if j.phase > len(j.phases) {
		j.end = now
		j.l.finished()
		return
	}
	p := j.phases[j.phase-1]
	switch {
	case p.trs == nil:
		j.l.At(now.Add(p.wait), j.next)
	case j.spec.Rings != "":
		j.recur(p)
	default:
		j.left = len(p.comms)
		for _, c := range p.comms {
			c.Sweep(p.op, []int64{p.size}, 0, 1, j.phaseDone)
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
		e, err := ringEnd(ringConfig{op: p.op, size: p.size, slice: collective.DefaultSliceBytes, window: collective.DefaultWindow}, es, now)
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
type HierResult struct {
	Ranks, GroupSize int
	// Levels are the sizes of the levels above the groups (HierSpec).
	Levels []int
	Size   int64
	// Phases are the fabric times of the reduce-scatters, the all-reduce
	// across the groups (or zones) and the all-gathers.
	Phases [3]clock.Duration
	Time   clock.Duration
	// AlgBW and BusBW in GB/s, as nccl-tests computes them for an
	// all-reduce of Size over Ranks.
	AlgBW, BusBW float64
}

// Result returns the job's figures (zero until it is done).
func (j *HierJob) Result() HierResult {
	if !j.Done() || j.err != nil {
		return HierResult{}
	}
	n := len(j.spec.Ranks)
	r := HierResult{Ranks: n, GroupSize: j.spec.GroupSize, Levels: j.spec.Levels, Size: j.spec.Size, Time: j.end.Sub(j.start), Phases: j.spent}
	r.AlgBW = float64(r.Size) / r.Time.Seconds() / 1e9
	r.BusBW = r.AlgBW * 2 * float64(n-1) / float64(n)
	return r
}

// Results returns the job as one nccl-tests line once done (none before).
func (j *HierJob) Results() []collective.Result {
	h := j.Result()
	if h.Time == 0 {
		return nil
	}
	return []collective.Result{{Op: "hier_all_reduce", Ranks: h.Ranks, Size: h.Size, Count: h.Size / 4, Type: "float", RedOp: "sum",
		TimeUs: h.Time.Micros(), AlgBW: h.AlgBW, BusBW: h.BusBW}}
}

// Collect emits the job's busbw, algbw and time once done, labelled job,
// op and size, as simlab.HierJob does.
func (j *HierJob) Collect(emit func(telemetry.Sample)) {
	r := j.Result()
	if r.Time == 0 {
		return
	}
	l := []telemetry.Label{{Name: "job", Value: j.spec.Name}, {Name: "op", Value: "hier_all_reduce"}, {Name: "size", Value: strconv.FormatInt(r.Size, 10)}}
	emit(telemetry.Sample{Name: "collective_busbw_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: r.BusBW * 1e9})
	emit(telemetry.Sample{Name: "collective_algbw_bytes_per_second", Kind: telemetry.Gauge, Labels: l, Value: r.AlgBW * 1e9})
	emit(telemetry.Sample{Name: "collective_time_seconds", Kind: telemetry.Gauge, Labels: l, Value: r.Time.Seconds()})
}
