package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
)

// CapacityOptions configure FindCapacity. Zero values take the defaults
// named.
type CapacityOptions struct {
	// Setup as for Run (the lab name's default is "capacity").
	Setup
	// Start is the first scale tried (default: what scale: auto picks for
	// this lab, deploy.Options.PickScale — 1,888 for the laptop with a
	// process per node, 199 in one group); the search halves or doubles
	// from there to bracket the smallest lossless k, then bisects
	// (geometrically) until the bracket is within 20 %.
	Start int
	// Min and Max bound the search (default 100 and 40,000).
	Min, Max int
	// Repeats is how many times each workload runs at one k (default 2):
	// a k passes only when every run lost nothing on the lossless class.
	Repeats int
	// AllToAllSize is the per-rank size of the all-to-all across every GPU
	// NIC that follows each incast (default 4 MiB; negative: none). Every
	// NIC sends to every other at once: PFC-heavy at the NIC ports.
	AllToAllSize int64
	// Log receives progress lines.
	Log io.Writer
}

func (o *CapacityOptions) defaults() error {
	if err := o.Setup.defaults("capacity"); err != nil {
		return err
	}
	if o.Start <= 0 {
		o.Start, _ = o.deployOptions(0).PickScale()
	}
	if o.Min <= 0 {
		o.Min = 100
	}
	if o.Max <= 0 {
		o.Max = 40_000
	}
	if o.Repeats <= 0 {
		o.Repeats = 2
	}
	if o.AllToAllSize == 0 {
		o.AllToAllSize = 4 << 20
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// Probe is one deployment at one scale: its workloads' outcomes and what
// the node loops did meanwhile.
type Probe struct {
	Scale int `json:"scale"`
	// Pass: no run lost a packet on a lossless class, and the loops kept
	// up with the wall clock (OnTime).
	Pass bool `json:"pass"`
	// OnTime: the worst loop's p99 batch lag was at most MaxLagP99. A
	// loop that keeps up is late by its wake-ups' lateness (about a
	// millisecond here); one that cannot keep up falls further behind
	// turn after turn. Inside a node group, links between members are
	// exact whatever the lag (emu.Options.InLoopLinks), so a lab of one
	// group loses nothing however far behind it falls: only its lag says
	// that it no longer runs at its scale.
	OnTime bool `json:"on_time"`
	// LosslessDrops and Drops summed over the runs; PFCFrames the switches
	// sent.
	LosslessDrops float64 `json:"lossless_drops"`
	Drops         float64 `json:"drops"`
	PFCFrames     float64 `json:"pfc_frames"`
	// IncastGbps is the worst run's total goodput into the receiver (real
	// units), IncastLine the receiver's line rate.
	IncastGbps float64 `json:"incast_gbps"`
	IncastLine float64 `json:"incast_line_gbps"`
	// AllToAllBusBW is the worst run's busbw (GB/s), 0 when not run.
	AllToAllBusBW float64 `json:"alltoall_busbw_gbps"`
	Loops         Loops   `json:"loops"`
}

// Loops summarises every node loop of a lab over an interval.
type Loops struct {
	// LagP50, LagP99 and LagMax are the worst node's wall-clock batch
	// lag (p50 and p99 over its recent batches, and the maximum since it
	// started).
	LagP50 time.Duration `json:"lag_p50_ns"`
	LagP99 time.Duration `json:"lag_p99_ns"`
	LagMax time.Duration `json:"lag_max_ns"`
	// TurnMax is the longest turn of any loop, OversleepMax the longest
	// a loop slept past its timeout (the host scheduler's delay).
	TurnMax      time.Duration `json:"turn_max_ns"`
	TurnNode     string        `json:"turn_max_node"`
	OversleepMax time.Duration `json:"oversleep_max_ns"`
	// LagNode is the node with the worst p99.
	LagNode string `json:"lag_node"`
	// Frames is what every node read (one hop each); FramesPerSecond per
	// wall second of the interval.
	Frames          float64 `json:"frames"`
	FramesPerSecond float64 `json:"frames_per_second"`
	// WakeupsPerSecond over every node; FramesPerRead the mean frames one
	// read of a port returned; SyscallsPerTurn the port reads and writes
	// (and the wait) of one loop turn.
	WakeupsPerSecond float64 `json:"wakeups_per_second"`
	// WakeupsRx and WakeupsTimer are the shares of wake-ups caused by a
	// port with frames and by a due event (the rest: posts, spurious).
	WakeupsRx       float64 `json:"wakeups_rx_share"`
	WakeupsTimer    float64 `json:"wakeups_timer_share"`
	FramesPerRead   float64 `json:"frames_per_read"`
	SyscallsPerTurn float64 `json:"syscalls_per_turn"`
	// CPUPerFrame is the nodes' process CPU (every thread) per frame read;
	// ReadPerFrame, ModelPerFrame and WritePerFrame split the loops' time
	// in turns by phase.
	CPUPerFrame   time.Duration `json:"cpu_per_frame_ns"`
	ReadPerFrame  time.Duration `json:"read_per_frame_ns"`
	ModelPerFrame time.Duration `json:"model_per_frame_ns"`
	WritePerFrame time.Duration `json:"write_per_frame_ns"`
	// CPU is the nodes' CPU seconds over the interval, Wall its length.
	CPU  float64       `json:"cpu_seconds"`
	Wall time.Duration `json:"wall_ns"`
}

// MaxLagP99 is the worst p99 batch lag (wall clock) of a lab whose loops
// keep up (Probe.OnTime). On the 2-CPU development VM a loop of one
// group that keeps up showed 0.2–1.7 ms, and nine node processes sharing
// the two CPUs 1–14 ms at the k they were lossless at; a group that
// could not keep up 43–115 ms (docs/performance.md).
const MaxLagP99 = 20 * time.Millisecond

// Capacity is FindCapacity's answer.
type Capacity struct {
	Topology string `json:"topology"`
	// FabricPPS is the topology's frame rate at full load in real time
	// (deploy.FabricPPS); CPUs the processors of this machine.
	FabricPPS float64 `json:"fabric_pps"`
	CPUs      int     `json:"cpus"`
	// MinScale is the smallest k that passed (0: none in range), and
	// PerCPU = FabricPPS / MinScale / CPUs the lossless capacity per CPU
	// that deploy.AutoScale can be given.
	MinScale int     `json:"min_scale"`
	PerCPU   float64 `json:"capacity_pps_per_cpu"`
	Probes   []Probe `json:"probes"`
}

// FindCapacity measures the lab's lossless capacity: the smallest scale k
// at which the topology's incast (and an all-to-all) lose nothing on a
// lossless class while the loops keep up with the wall clock (Probe.OnTime), expressed as the frame rate per CPU that AutoScale
// would turn into that k. Each probe deploys the lab at one k, runs the
// workloads Repeats times and destroys it.
func FindCapacity(ctx context.Context, opts CapacityOptions) (*Capacity, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	res := &Capacity{Topology: opts.Topology.Name, FabricPPS: deploy.FabricPPS(opts.Topology), CPUs: runtime.NumCPU()}
	logf := func(format string, a ...any) { fmt.Fprintf(opts.Log, "# "+format+"\n", a...) }
	probe := func(k int) (bool, error) {
		p, err := probeScale(ctx, opts, k, logf)
		if err != nil {
			return false, err
		}
		res.Probes = append(res.Probes, p)
		l := p.Loops
		late := ""
		if !p.OnTime {
			late = fmt.Sprintf(" (behind the wall clock: lag p99 over %v)", MaxLagP99)
		}
		logf("k=%d: %s%s, lossless drops %.0f (all %.0f), incast %.0f of %.0f Gb/s, lag p99 %v (%s) max %v, longest turn %v (%s), oversleep %v, %.0f frames/s, %v CPU/frame, %.0f wake-ups/s (%.0f%% rx, %.0f%% timer)",
			k, map[bool]string{true: "pass", false: "FAIL"}[p.Pass], late, p.LosslessDrops, p.Drops, p.IncastGbps, p.IncastLine,
			l.LagP99.Round(time.Microsecond), l.LagNode, l.LagMax.Round(time.Microsecond), l.TurnMax.Round(time.Microsecond), l.TurnNode, l.OversleepMax.Round(time.Microsecond), l.FramesPerSecond, l.CPUPerFrame,
			l.WakeupsPerSecond, 100*l.WakeupsRx, 100*l.WakeupsTimer)
		return p.Pass, nil
	}
	// Bracket: lo fails (or is below Min), hi passes.
	lo, hi := 0, 0
	// try probes k and moves the end of the bracket it belongs to.
	try := func(k int) error {
		ok, err := probe(k)
		if err != nil {
			return err
		}
		if ok {
			hi = k
		} else {
			lo = k
		}
		return nil
	}
	if err := try(min(max(opts.Start, opts.Min), opts.Max)); err != nil {
		return res, err
	}
	if hi != 0 {
		for lo == 0 {
			next := max(hi/2, opts.Min)
			if next == hi {
				lo = opts.Min - 1
				break
			}
			if err := try(next); err != nil {
				return res, err
			}
		}
	} else {
		for hi == 0 {
			next := min(lo*2, opts.Max)
			if next == lo {
				return res, nil // nothing passed up to Max
			}
			if err := try(next); err != nil {
				return res, err
			}
		}
	}
	for lo >= opts.Min && float64(hi) > 1.2*float64(lo) {
		mid := int(math.Round(math.Sqrt(float64(lo) * float64(hi))))
		if err := try(mid); err != nil {
			return res, err
		}
	}
	res.MinScale = hi
	res.PerCPU = res.FabricPPS / float64(hi) / float64(res.CPUs)
	return res, nil
}

// probeScale deploys the lab at scale k, runs the workloads and destroys
// the lab.
func probeScale(ctx context.Context, opts CapacityOptions, k int, logf func(string, ...any)) (p Probe, err error) {
	p.Scale = k
	lab, err := deploy.Deploy(ctx, opts.deployOptions(k))
	if err != nil {
		return p, fmt.Errorf("capacity: deploy at k=%d: %w", k, err)
	}
	defer func() {
		if _, derr := deploy.Destroy(context.Background(), opts.Root, lab.Name); derr != nil {
			err = errors.Join(err, fmt.Errorf("capacity: destroy: %w", derr))
		}
	}()
	nics, clients, err := labNICs(lab)
	if err != nil {
		return p, err
	}
	defer clients.Close()
	before, err := labSamples(ctx, lab, false)
	if err != nil {
		return p, err
	}
	t0 := time.Now()
	run := Options{Setup: opts.Setup}
	p.IncastGbps = math.Inf(1)
	for range opts.Repeats {
		in, err := runIncast(ctx, run, nics, clients, lab, logf)
		if err != nil {
			return p, err
		}
		p.LosslessDrops += in.LosslessDrops
		p.Drops += in.Drops
		p.PFCFrames += in.PFCFrames
		p.IncastGbps = min(p.IncastGbps, in.TotalGbps)
		p.IncastLine = float64(in.ReceiverRate) / 1e9
		if opts.AllToAllSize > 0 {
			sw0, err := switchSamples(ctx, lab)
			if err != nil {
				return p, err
			}
			rs, err := jobs.RunCollective(ctx, jobs.CollectiveSpec{
				Op: "alltoall", Ranks: nics, Sizes: []int64{opts.AllToAllSize}, Iters: 2, Warmup: 0, Check: true,
			}, nil)
			if err != nil {
				return p, fmt.Errorf("capacity: all-to-all at k=%d: %w", k, err)
			}
			sw1, err := switchSamples(ctx, lab)
			if err != nil {
				return p, err
			}
			p.LosslessDrops += losslessDrops(opts.Topology, sw1) - losslessDrops(opts.Topology, sw0)
			p.Drops += telemetry.Sum(sw1, "switch_drop_packets_total") - telemetry.Sum(sw0, "switch_drop_packets_total")
			p.PFCFrames += telemetry.Sum(sw1, "switch_port_pfc_tx_frames_total") - telemetry.Sum(sw0, "switch_port_pfc_tx_frames_total")
			if bw := rs[len(rs)-1].BusBW; p.AllToAllBusBW == 0 || bw < p.AllToAllBusBW {
				p.AllToAllBusBW = bw
			}
		}
	}
	after, err := labSamples(ctx, lab, false)
	if err != nil {
		return p, err
	}
	p.Loops = SummariseLoops(before, after, time.Since(t0))
	p.OnTime = p.Loops.LagP99 <= MaxLagP99
	p.Pass = p.LosslessDrops == 0 && p.OnTime
	return p, nil
}

// labSamples gathers the telemetry of every node of lab that runs a node
// process, or of its switches only.
func labSamples(ctx context.Context, lab *deploy.Lab, switchesOnly bool) ([]telemetry.Sample, error) {
	var all []telemetry.Sample
	for _, n := range lab.Nodes {
		if n.Socket == "" || switchesOnly && n.Kind != topologies.KindSwitch {
			continue
		}
		c := nodeapi.NewClient(n.Socket)
		s, err := c.Telemetry(ctx)
		c.Close()
		if err != nil {
			return nil, fmt.Errorf("demo: telemetry of %s: %w", n.Name, err)
		}
		all = append(all, s...)
	}
	return all, nil
}

// switchSamples gathers every switch node's telemetry.
func switchSamples(ctx context.Context, lab *deploy.Lab) ([]telemetry.Sample, error) {
	return labSamples(ctx, lab, true)
}

// SummariseLoops turns two telemetry snapshots of a lab's nodes, wall
// apart, into the loops' figures (docs/performance.md names them).
func SummariseLoops(before, after []telemetry.Sample, wall time.Duration) Loops {
	d := func(name string, match ...telemetry.Label) float64 {
		return telemetry.Sum(after, name, match...) - telemetry.Sum(before, name, match...)
	}
	l := Loops{Wall: wall}
	l.Frames = d("emu_rx_frames_total")
	sec := wall.Seconds()
	if sec > 0 {
		l.FramesPerSecond = l.Frames / sec
		l.WakeupsPerSecond = d("emu_wakeups_total") / sec
	}
	if w := d("emu_wakeups_total"); w > 0 {
		l.WakeupsRx = d("emu_wakeups_total", telemetry.Label{Name: "cause", Value: "rx"}) / w
		l.WakeupsTimer = d("emu_wakeups_total", telemetry.Label{Name: "cause", Value: "timer"}) / w
	}
	if r := d("emu_rx_batches_total"); r > 0 {
		l.FramesPerRead = l.Frames / r
	}
	if turns := d("emu_batches_total"); turns > 0 {
		l.SyscallsPerTurn = (d("emu_rx_syscalls_total") + d("emu_tx_syscalls_total") + turns) / turns
	}
	l.CPU = d("node_cpu_seconds_total")
	perFrame := func(v float64) time.Duration {
		if l.Frames <= 0 {
			return 0
		}
		return time.Duration(v / l.Frames * 1e9)
	}
	l.CPUPerFrame = perFrame(l.CPU)
	ph := func(p string) float64 {
		return d("emu_loop_seconds_total", telemetry.Label{Name: "phase", Value: p})
	}
	l.ReadPerFrame, l.ModelPerFrame, l.WritePerFrame = perFrame(ph("read")), perFrame(ph("model")), perFrame(ph("write"))
	for _, s := range after {
		v := time.Duration(s.Value * 1e9)
		switch s.Name {
		case "emu_turn_max_seconds":
			if v > l.TurnMax {
				l.TurnMax, l.TurnNode = v, s.Label("node")
			}
		case "emu_oversleep_max_seconds":
			l.OversleepMax = max(l.OversleepMax, v)
		case "emu_batch_lag_seconds":
			if s.Label("clock") != "wall" {
				continue
			}
			switch s.Label("quantile") {
			case "0.5":
				l.LagP50 = max(l.LagP50, v)
			case "0.99":
				if v > l.LagP99 {
					l.LagP99, l.LagNode = v, s.Label("node")
				}
			case "1":
				l.LagMax = max(l.LagMax, v)
			}
		}
	}
	return l
}
