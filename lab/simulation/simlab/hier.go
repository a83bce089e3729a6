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

// HierSpec is a hierarchical all-reduce, as NCCL runs it across hosts of
// several GPUs: a reduce-scatter inside each group of GroupSize
// consecutive ranks (a host), then one all-reduce of Size/GroupSize per
// local index across the groups (one ring per rail, all at once), then an
// all-gather inside each group. Every phase is a ring over the lab's
// fabric (the simulator has no NVLink: intra-host traffic crosses the
// host's leaf) unless NVLink is set.
//
// With Zone, the cross-group step is itself hierarchical, as a cluster of
// AI zones would run it: a reduce-scatter of Size/GroupSize among the
// Zone consecutive groups of each rail (a zone), an all-reduce of
// Size/GroupSize/Zone across the zones (a ring per rail and position in
// the zone), an all-gather back inside the zone. A flat ring across 3,072
// hosts takes 6,142 steps; this one 2 × (Zone-1) + 2 × (zones-1).
type HierSpec struct {
	// Name labels the job's samples (default "hierN").
	Name string
	// Ranks are NIC names in rank order (default every BE NIC in node
	// order); their number must be a multiple of GroupSize (× Zone).
	Ranks []string
	// GroupSize is the ranks per group (default 8).
	GroupSize int
	// Zone, if above 1, is the groups per zone: the cross-group
	// all-reduce runs in two levels (see above); ranks must then be at
	// least two zones.
	Zone int
	// NVLink, if set, is the rate of each rank's link inside its group:
	// the group's reduce-scatter and all-gather run off the fabric, as
	// ring steps of Size/GroupSize bytes at that rate, each after
	// NVLinkLatency (default 1 µs). Only cross-group traffic then
	// crosses the fabric, as on hosts whose GPUs share an NVSwitch.
	NVLink        clock.Rate
	NVLinkLatency clock.Duration
	// Size is the all-reduce size in nccl-tests bytes (default 64 MiB); it
	// is rounded down to a multiple of 4 × GroupSize (× Zone).
	Size int64
	// Mode, CC and Paths configure every QP (defaults: the lab's).
	Mode, CC string
	Paths    int
	// Start is the fabric time the job starts at.
	Start clock.Time
}

// hierPhase is one step of a hierarchical all-reduce: a collective of
// size bytes on each of comms, or (comms nil) an NVLink step of wait.
type hierPhase struct {
	comms []*collective.Comm
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
		spec.Ranks = l.NICNames()
	}
	if spec.GroupSize <= 0 {
		spec.GroupSize = 8
	}
	if spec.Zone < 1 {
		spec.Zone = 1
	}
	if spec.NVLink > 0 && spec.NVLinkLatency <= 0 {
		spec.NVLinkLatency = clock.Microsecond
	}
	if spec.Size <= 0 {
		spec.Size = 64 << 20
	}
	l.defaultModeCC(&spec.Mode, &spec.CC)
	g, z, n := spec.GroupSize, spec.Zone, len(spec.Ranks)
	if n%g != 0 || n/g < 2 {
		return nil, fmt.Errorf("hierarchical %s: %d ranks are not at least two groups of %d", spec.Name, n, g)
	}
	if z > 1 && (n%(g*z) != 0 || n/(g*z) < 2) {
		return nil, fmt.Errorf("hierarchical %s: %d ranks are not at least two zones of %d groups of %d", spec.Name, n, z, g)
	}
	unit := int64(4 * g * z)
	spec.Size = spec.Size / unit * unit
	if spec.Size == 0 {
		return nil, fmt.Errorf("hierarchical %s: size below %d bytes", spec.Name, unit)
	}
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
	// level returns the communicators of ranks that differ only in their
	// index at stride (consecutive groups of size members at that stride).
	level := func(what string, stride, size int) ([]*collective.Comm, error) {
		var comms []*collective.Comm
		for base := 0; base < n; base++ {
			if (base/stride)%size != 0 {
				continue
			}
			members := make([]*endpoint.NIC, size)
			for k := range size {
				members[k] = nics[base+k*stride]
			}
			tr, err := rdmacomm.New(rdmacomm.Options{NICs: members, Pairs: rdmacomm.Ring, QP: qp})
			if err == nil {
				var c *collective.Comm
				c, err = collective.New(l, tr, collective.Config{Ranks: size, Type: collective.Float32, Seed: l.opts.Seed})
				comms = append(comms, c)
			}
			if err != nil {
				return nil, fmt.Errorf("hierarchical %s: %s %d: %w", spec.Name, what, len(comms), err)
			}
		}
		return comms, nil
	}
	size := spec.Size
	var down, up []hierPhase // the reduce-scatters, the all-gathers (outermost first)
	if spec.NVLink > 0 {
		// A ring of g ranks: g-1 steps of size/g bytes each way.
		step := spec.NVLinkLatency + spec.NVLink.Serialize(int(size/int64(g)))
		wait := clock.Duration(g-1) * step
		down = append(down, hierPhase{wait: wait, bucket: 0})
		up = append(up, hierPhase{wait: wait, bucket: 2})
	} else {
		intra, err := level("group", 1, g)
		if err != nil {
			return nil, err
		}
		down = append(down, hierPhase{comms: intra, op: collective.ReduceScatter, size: size, bucket: 0})
		up = append(up, hierPhase{comms: intra, op: collective.AllGather, size: size, bucket: 2})
	}
	size /= int64(g)
	top := 1
	if z > 1 {
		zone, err := level("zone", g, z)
		if err != nil {
			return nil, err
		}
		down = append(down, hierPhase{comms: zone, op: collective.ReduceScatter, size: size, bucket: 0})
		up = append(up, hierPhase{comms: zone, op: collective.AllGather, size: size, bucket: 2})
		size /= int64(z)
		top = z
	}
	rails, err := level("rail", g*top, n/(g*top))
	if err != nil {
		return nil, err
	}
	j := &HierJob{l: l, spec: spec}
	j.phases = append(j.phases, down...)
	j.phases = append(j.phases, hierPhase{comms: rails, op: collective.AllReduce, size: size, bucket: 1})
	for i := len(up) - 1; i >= 0; i-- {
		j.phases = append(j.phases, up[i])
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
	if p.comms == nil {
		j.l.at(now.Add(p.wait), j.next)
		return
	}
	j.left = len(p.comms)
	for _, c := range p.comms {
		c.Sweep(p.op, []int64{p.size}, 0, 1, j.phaseDone)
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
type HierResult struct {
	Ranks, GroupSize int
	// Zone is the groups per zone (1: no zone level).
	Zone int
	Size int64
	// Phases are the fabric times of the reduce-scatters, the
	// all-reduce across the groups (or zones) and the all-gathers.
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
	r := HierResult{Ranks: n, GroupSize: j.spec.GroupSize, Zone: j.spec.Zone, Size: j.spec.Size, Time: j.end.Sub(j.start), Phases: j.spent}
	r.AlgBW = float64(r.Size) / r.Time.Seconds() / 1e9
	r.BusBW = r.AlgBW * 2 * float64(n-1) / float64(n)
	return r
}

// Collect emits the job's busbw, algbw and time once done, labelled job,
// op and size.
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
