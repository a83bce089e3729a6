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
}

// HierJob is a running hierarchical all-reduce.
type HierJob struct {
	l      *Lab
	spec   HierSpec
	intra  []*collective.Comm // one per group
	rails  []*collective.Comm // one per local index
	phase  int                // 0 not started, 1–3 running, 4 done
	left   int                // comms of the phase still running
	starts [4]clock.Time      // start of phases 1–3, and the end
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
	comm := func(members []*nic) (*collective.Comm, error) {
		tr, err := l.newTransport(members, mode, spec.Paths, false, false)
		if err != nil {
			return nil, err
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
	l.addJob(j)
	l.At(spec.Start, j.next)
	return j, nil
}

// next starts the next phase (or finishes the job).
func (j *HierJob) next() {
	j.starts[j.phase] = j.l.Now()
	j.phase++
	var comms []*collective.Comm
	var op collective.Op
	size := j.spec.Size
	switch j.phase {
	case 1:
		comms, op = j.intra, collective.ReduceScatter
	case 2:
		comms, op, size = j.rails, collective.AllReduce, size/int64(j.spec.GroupSize)
	case 3:
		comms, op = j.intra, collective.AllGather
	default:
		j.l.finished()
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
