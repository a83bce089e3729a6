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
// host), then one all-reduce of Size/GroupSize per local index across the
// groups (one ring per rail, all at once), then an all-gather inside each
// group — every phase a ring of the collective engine over flow-level
// writes, every communicator connected as the packet simulator connects
// it (groups in order, then rails), so its QPs are numbered and routed
// alike.
type HierSpec struct {
	// Name labels the job's samples (default "hierN").
	Name string
	// Ranks are NIC names in rank order (default every BE NIC in node
	// order); their number must be a multiple of GroupSize, at least two
	// groups.
	Ranks []string
	// GroupSize is the ranks per group (default 8).
	GroupSize int
	// Size is the all-reduce size in nccl-tests bytes (default 64 MiB),
	// rounded down to a multiple of 4 × GroupSize.
	Size int64
	// Mode and Paths configure every QP (defaults: the lab's).
	Mode  string
	Paths int
	// Start is the fabric time the job starts at.
	Start clock.Time
	// Rings, if not "", times every phase by the ring recurrence (ring.go)
	// at fixed rates instead of running the collective engine: "alone"
	// (each QP at its narrowest link's rate) or "shared" (the max-min rates
	// of all the phase's QPs sending at once). "auto" is "shared" when the
	// rails' rings make more than RecurrenceWrites writes or have more
	// ranks than the engine takes (collective.MaxRanks), the engine
	// otherwise. The recurrence sees no other job's flows, nor do they see
	// its: for a job alone on the fabric.
	Rings string
}

// HierJob is a running hierarchical all-reduce.
type HierJob struct {
	l     *Lab
	spec  HierSpec
	intra []*collective.Comm // one per group
	rails []*collective.Comm // one per local index
	// Their transports, for the ring recurrence.
	intraTr, railTr []*transport
	phase           int           // 0 not started, 1–3 running, 4 done
	left            int           // comms of the phase still running
	starts          [4]clock.Time // start of phases 1–3, and the end
	err             error
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
	unit := int64(4 * g)
	spec.Size = spec.Size / unit * unit
	if spec.Size == 0 {
		return nil, fmt.Errorf("hierarchical %s: size below %d bytes", spec.Name, unit)
	}
	mode, err := endpoint.ParseMode(spec.Mode)
	if err != nil {
		return nil, fmt.Errorf("hierarchical %s: %w", spec.Name, err)
	}
	nics := make([]*nic, n)
	for i, r := range spec.Ranks {
		if nics[i], err = l.nic(r); err != nil {
			return nil, fmt.Errorf("hierarchical %s: %w", spec.Name, err)
		}
	}
	switch spec.Rings {
	case "", "alone", "shared":
	case "auto":
		spec.Rings = ""
		if m := n / g; m > collective.MaxRanks || railWrites(m, g, spec.Size/int64(g)) > RecurrenceWrites {
			spec.Rings = "shared"
		}
	default:
		return nil, fmt.Errorf("hierarchical %s: rings %q: want alone, shared or auto", spec.Name, spec.Rings)
	}
	var trs []*transport
	comm := func(members []*nic) (*collective.Comm, error) {
		tr, err := l.newTransport(members, mode, spec.Paths, false, false)
		if err != nil {
			return nil, err
		}
		trs = append(trs, tr)
		if spec.Rings != "" {
			// The recurrence needs no engine (nor its limit of
			// collective.MaxRanks ranks, from its immediates).
			return nil, nil
		}
		return collective.New(l.e, tr, collective.Config{Ranks: len(members), Type: collective.Float32, Seed: l.opts.Seed})
	}
	j := &HierJob{l: l, spec: spec}
	for k := 0; k < n; k += g {
		c, err := comm(nics[k : k+g])
		if err != nil {
			return nil, fmt.Errorf("hierarchical %s: group %d: %w", spec.Name, k/g, err)
		}
		j.intra = append(j.intra, c)
	}
	j.intraTr, trs = trs, nil
	for i := range g {
		var members []*nic
		for k := i; k < n; k += g {
			members = append(members, nics[k])
		}
		c, err := comm(members)
		if err != nil {
			return nil, fmt.Errorf("hierarchical %s: rail %d: %w", spec.Name, i, err)
		}
		j.rails = append(j.rails, c)
	}
	j.railTr = trs
	l.addJob(j)
	l.At(spec.Start, j.next)
	return j, nil
}

// RecurrenceWrites is the most writes the rails' rings of a hierarchical
// all-reduce make under the engine with HierSpec.Rings "auto": about half
// a minute of the collective engine over flow-level writes (~3 µs a write).
const RecurrenceWrites = 10_000_000

// railWrites is the writes of g ring all-reduces of size bytes over m
// ranks each: 2(m−1) steps of a chunk in slices, per rank.
func railWrites(m, g int, size int64) int64 {
	elems := (size/4 + int64(m) - 1) / int64(m)
	slices := (elems + collective.DefaultSliceBytes/4 - 1) / (collective.DefaultSliceBytes / 4)
	return int64(g) * int64(m) * 2 * int64(m-1) * slices
}

// next starts the next phase (or finishes the job).
func (j *HierJob) next() {
	j.starts[j.phase] = j.l.Now()
	j.phase++
	var comms []*collective.Comm
	var trs []*transport
	var op collective.Op
	size := j.spec.Size
	switch j.phase {
	case 1:
		comms, trs, op = j.intra, j.intraTr, collective.ReduceScatter
	case 2:
		comms, trs, op, size = j.rails, j.railTr, collective.AllReduce, size/int64(j.spec.GroupSize)
	case 3:
		comms, trs, op = j.intra, j.intraTr, collective.AllGather
	default:
		j.l.finished()
		return
	}
	if j.spec.Rings != "" {
		j.recur(trs, op, size)
		return
	}
	j.left = len(comms)
	for _, c := range comms {
		c.Sweep(op, []int64{size}, 0, 1, j.phaseDone)
	}
}

func (j *HierJob) phaseDone(_ []collective.Result, err error) {
	if j.err != nil {
		return
	}
	if err != nil {
		j.err = fmt.Errorf("hierarchical %s: phase %d: %w", j.spec.Name, j.phase, err)
		j.phase = 4
		j.l.finished()
		return
	}
	j.left--
	if j.left == 0 {
		j.next()
	}
}

// Name returns the job's name.
func (j *HierJob) Name() string { return j.spec.Name }

// Spec returns the job's specification, defaults filled in.
func (j *HierJob) Spec() HierSpec { return j.spec }

// Done reports whether the job finished (or failed).
func (j *HierJob) Done() bool { return j.phase >= 4 }

// Err returns the error that ended the job, if any.
func (j *HierJob) Err() error { return j.err }

// HierResult is what a hierarchical all-reduce measured, as
// simlab.HierResult.
type HierResult struct {
	Ranks, GroupSize int
	Size             int64
	// Phases are the fabric times of the reduce-scatter, the cross-group
	// all-reduce and the all-gather.
	Phases [3]clock.Duration
	Time   clock.Duration
	// AlgBW and BusBW in GB/s, as nccl-tests computes them for an
	// all-reduce of Size over Ranks.
	AlgBW, BusBW float64
}

// Result returns the job's figures (zero until it is done).
func (j *HierJob) Result() HierResult {
	if j.phase < 4 || j.err != nil {
		return HierResult{}
	}
	n := len(j.spec.Ranks)
	r := HierResult{Ranks: n, GroupSize: j.spec.GroupSize, Size: j.spec.Size, Time: j.starts[3].Sub(j.starts[0])}
	for i := range 3 {
		r.Phases[i] = j.starts[i+1].Sub(j.starts[i])
	}
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

// recur times the phase's rings by the recurrence (ringEnd) and goes on
// to the next phase when the last one ends.
func (j *HierJob) recur(trs []*transport, op collective.Op, size int64) {
	now := j.l.Now()
	edges := make([][]ringEdge, len(trs))
	var qps []*QP
	for i, tr := range trs {
		n := len(tr.ranks)
		for r := range n {
			q := tr.conns[[2]int{r, (r + 1) % n}]
			rate := 0.0
			for _, p := range q.paths {
				rate += j.l.net.solver.ubOf(p)
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
		e, err := ringEnd(ringConfig{op: op, size: size, slice: collective.DefaultSliceBytes, window: collective.DefaultWindow}, es, now)
		if err != nil {
			j.phaseDone(nil, err)
			return
		}
		end = max(end, e)
	}
	j.l.At(end, j.next)
}
