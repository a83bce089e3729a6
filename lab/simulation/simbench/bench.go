package simbench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/fct"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/internal/hugepage"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

// Config is a workload run on a generated topology.
type Config struct {
	// Seed of the lab (and of the permutation).
	Seed uint64
	// Mode is the reliability mode of every QP ("rocev2" or "metaroce").
	Mode string
	// Paths is how many paths a MetaRoCE QP sprays over (1: single path).
	Paths int
	// CC is the congestion control ("none", "dcqcn", "credit").
	CC string
	// FlowBytes is the size of each permutation flow.
	FlowBytes int
	// QPs is the number of QPs each flow is split over (each sends one
	// message of FlowBytes/QPs; default 1), so that a MetaRoCE flow can
	// spray over QPs × Paths paths.
	QPs int
	// CollBytes is the all-reduce size (nccl-tests bytes).
	CollBytes int64
	// QPWindow is every QP's window in PSNs (default 512).
	QPWindow int
	// Limit is the most fabric time the run may take (default 1 s).
	Limit clock.Duration
	// NoHugePages leaves the heap on the kernel's default pages instead of
	// advising transparent huge pages before the run (internal/hugepage).
	NoHugePages bool
	// Workers is how many goroutines a scenario runs on, and Partitions
	// how many engines its fabric is cut into (simlab's Options;
	// Partitions 0: simlab.DefaultPartitions(Workers), 1: one engine).
	// The all-to-all runs on one engine whatever they say (its QP pairs
	// connect on first use). The results, and so the digest, do not
	// depend on them.
	Workers, Partitions int
	// HierZone and NVLink shape the hierarchical all-reduce
	// (simlab.HierSpec's Zone and NVLink; 0: a flat ring per rail, and
	// the groups' phases on the fabric).
	HierZone int
	NVLink   clock.Rate
	// Progress, if set, is the lab's progress callback (simlab.Options).
	Progress func(simlab.Progress)
}

// Report is what one run measured.
type Report struct {
	Name string
	// Topology size.
	Topology              string
	NICs, Switches, Links int
	// Build is the wall time of building the lab, Wall that of the run,
	// CPU the process's CPU time during the run (on a machine shared with
	// other work, CPU is the steadier figure).
	Build, Wall, CPU time.Duration
	// Fabric is the fabric time the run took.
	Fabric clock.Duration
	// DataPackets are RoCE data packets sent by NICs (retransmissions
	// included); Events are engine events run.
	DataPackets int64
	Events      uint64
	// PFCFrames are PFC frames the switches sent, PeakQueue the deepest
	// egress queue any switch saw (bytes), Drops the packets switches
	// dropped.
	PFCFrames, PeakQueue, Drops int64
	// PeakRSS is the process's peak resident set in bytes (VmHWM).
	PeakRSS int64
	// FCT summarises per-flow completion times (permutation only); Ideal is
	// the flow size at the line rate's payload throughput.
	FCT   fct.Stats
	Ideal clock.Duration
	// FCTs are every flow's completion time, in flow order.
	FCTs []clock.Duration
	// Phases are the hierarchical all-reduce's reduce-scatters, all-reduce
	// and all-gathers (simlab.HierResult), not in the digest.
	Phases []clock.Duration
	// Coll is the all-reduce's nccl-tests lines (all-reduce only).
	Coll []collective.Result
	// HugePages is what advising huge pages before the run did.
	HugePages HugePages
	// Workers is how many goroutines the run used, Partitions over how
	// many engines its nodes were cut.
	Workers, Partitions int

	follow *hugepage.Follower // until the run ends
}

// HugePages is what following the heap with huge pages did from the
// lab's build to the run's end (hugepage.Follow): Before bytes advised by
// the start of the run, the rest during it; Huge is the memory on huge
// pages at its end.
type HugePages struct {
	hugepage.Result
	Before int64
	Err    error
}

// stopHugePages stops following the heap, once.
func (r *Report) stopHugePages() {
	if r.follow != nil {
		r.HugePages.Result = r.follow.Stop()
		r.follow = nil
	}
}

// PacketsPerSecond returns data packets simulated per wall-second.
func (r *Report) PacketsPerSecond() float64 { return float64(r.DataPackets) / r.Wall.Seconds() }

// EventsPerSecond returns engine events per wall-second.
func (r *Report) EventsPerSecond() float64 { return float64(r.Events) / r.Wall.Seconds() }

// WorstRatio returns the slowest flow's completion time over the ideal.
func (r *Report) WorstRatio() float64 {
	if r.Ideal == 0 {
		return 0
	}
	return float64(r.FCT.Max) / float64(r.Ideal)
}

// partitions is the simlab Options.Partitions of a run: the default cut
// for the workers, or one engine.
func (c *Config) partitions() int {
	if c.Partitions == 0 {
		return simlab.DefaultPartitions(max(c.Workers, 1))
	}
	return c.Partitions
}

func (c *Config) defaults() {
	if c.Mode == "" {
		c.Mode = "rocev2"
	}
	if c.CC == "" {
		c.CC = "none"
	}
	if c.Paths <= 0 {
		c.Paths = 1
	}
	if c.QPs <= 0 {
		c.QPs = 1
	}
	if c.FlowBytes <= 0 {
		c.FlowBytes = 2 << 20
	}
	if c.CollBytes <= 0 {
		c.CollBytes = 8 << 20
	}
	if c.QPWindow <= 0 {
		c.QPWindow = 512
	}
	if c.Limit <= 0 {
		c.Limit = clock.Second
	}
}

// progressEvery is the fabric time between Config.Progress calls: short,
// since a large fabric runs a microsecond in seconds of wall clock. The
// run ends at the first multiple of it after the last job finished, so a
// run with Progress reports another fabric time (and digest) than one
// without; without, simlab's default.
func (c *Config) progressEvery() clock.Duration {
	if c.Progress == nil {
		return 0
	}
	return clock.Microsecond
}

func build(spec ClosSpec, cfg Config) (*simlab.Lab, *Report, error) {
	t0 := time.Now()
	t, err := spec.Build()
	if err != nil {
		return nil, nil, err
	}
	var follow *hugepage.Follower
	var followErr error
	if !cfg.NoHugePages {
		// Before the lab, so that its state is born on huge pages rather
		// than copied onto them after, with the heap the run will grow
		// into mapped ahead (hugepage.ReserveHeap).
		follow, followErr = hugepage.Follow(hugepage.DefaultPeriod, simlab.HeapReserve(t))
	}
	l, err := simlab.Build(t, simlab.Options{Seed: cfg.Seed, Mode: cfg.Mode, CC: cfg.CC, QPWindow: cfg.QPWindow, Workers: cfg.Workers, Partitions: cfg.partitions(), Progress: cfg.Progress, ProgressEvery: cfg.progressEvery()})
	if err != nil {
		if follow != nil {
			follow.Stop()
		}
		return nil, nil, fmt.Errorf("simbench: %w", err)
	}
	r := &Report{follow: follow, HugePages: HugePages{Err: followErr}, Topology: spec.Name, NICs: len(l.NICs()), Links: len(t.Links), Workers: l.Workers(), Partitions: l.Partitions()}
	for _, n := range t.Nodes {
		if n.Kind == topologies.KindSwitch {
			r.Switches++
		}
	}
	r.Build = time.Since(t0)
	return l, r, nil
}

// Permutation runs a random permutation: every NIC sends one message of
// cfg.FlowBytes to another NIC, each NIC receiving exactly one flow (a
// seeded derangement), all starting at once.
func Permutation(spec ClosSpec, cfg Config) (*Report, error) {
	cfg.defaults()
	l, r, err := build(spec, cfg)
	if err != nil {
		return nil, err
	}
	defer r.stopHugePages()
	names := l.NICNames()
	to := derangement(len(names), rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)))
	ps := simlab.PerfSpec{Name: "permutation", Op: "write", Pairwise: true, Size: cfg.FlowBytes / cfg.QPs, Iterations: 1,
		TxDepth: 1, Paths: cfg.Paths, QPs: cfg.QPs}
	for i, j := range to {
		ps.From = append(ps.From, names[i])
		ps.To = append(ps.To, names[j])
	}
	defer l.Close()
	job, err := l.Perf(ps)
	if err != nil {
		return nil, fmt.Errorf("simbench: %w", err)
	}
	r.Name = fmt.Sprintf("permutation %s qps=%d paths=%d", cfg.Mode, cfg.QPs, cfg.Paths)
	if err := run(l, r, cfg, job.Err); err != nil {
		return r, err
	}
	for _, f := range job.Flows() {
		res := f.Result()
		r.FCTs = append(r.FCTs, res.FCT.Max)
	}
	r.FCT = fct.Summarize(r.FCTs)
	nic := l.NICs()[0]
	r.Ideal = idealTime(cfg.FlowBytes/cfg.QPs*cfg.QPs, endpoint.PayloadMTU(l.Port(nic.Name()).MTU), nic.LineRate())
	return r, nil
}

// AllReduce runs one ring all-reduce of cfg.CollBytes across every NIC.
func AllReduce(spec ClosSpec, cfg Config) (*Report, error) {
	return collectiveRun(spec, cfg, "all_reduce", "ring all_reduce")
}

// AllToAll runs one all-to-all of cfg.CollBytes across every NIC: each
// rank writes CollBytes/n to every other. Past 128 ranks the QP pairs are
// connected on first use and idle ones destroyed (rdmacomm.OnDemand), so
// 2,048 ranks hold a few dozen QPs each, not 2,047.
func AllToAll(spec ClosSpec, cfg Config) (*Report, error) {
	return collectiveRun(spec, cfg, "alltoall", "all-to-all")
}

func collectiveRun(spec ClosSpec, cfg Config, op, title string) (*Report, error) {
	cfg.defaults()
	if op == "alltoall" {
		// 2,048 ranks connect their QP pairs on first use, both ends at
		// once: one engine (simlab refuses a cut).
		cfg.Workers, cfg.Partitions = 1, 1
	}
	l, r, err := build(spec, cfg)
	if err != nil {
		return nil, err
	}
	defer r.stopHugePages()
	job, err := l.Collective(simlab.CollSpec{Name: op, Op: op, Sizes: []int64{cfg.CollBytes},
		Warmup: -1, Iters: 1, Paths: cfg.Paths})
	if err != nil {
		return nil, fmt.Errorf("simbench: %w", err)
	}
	r.Name = fmt.Sprintf("%s %s %d ranks", title, cfg.Mode, r.NICs)
	if err := run(l, r, cfg, job.Err); err != nil {
		return r, err
	}
	r.Coll = job.Results()
	return r, nil
}

// HierAllReduce runs one hierarchical all-reduce of cfg.CollBytes across
// every NIC, in groups of the NICs of one host (spec.GPUs).
func HierAllReduce(spec ClosSpec, cfg Config) (*Report, error) {
	cfg.defaults()
	l, r, err := build(spec, cfg)
	if err != nil {
		return nil, err
	}
	defer r.stopHugePages()
	job, err := l.Hierarchical(simlab.HierSpec{Name: "hier", GroupSize: spec.GPUs, Zone: cfg.HierZone, NVLink: cfg.NVLink, Size: cfg.CollBytes, Paths: cfg.Paths})
	if err != nil {
		return nil, fmt.Errorf("simbench: %w", err)
	}
	r.Name = fmt.Sprintf("hierarchical all_reduce %s %d ranks", cfg.Mode, r.NICs)
	if cfg.HierZone > 1 {
		r.Name += fmt.Sprintf(" zones of %d groups", cfg.HierZone)
	}
	if cfg.NVLink > 0 {
		r.Name += " nvlink " + cfg.NVLink.String()
	}
	if err := run(l, r, cfg, job.Err); err != nil {
		return r, err
	}
	h := job.Result()
	r.Coll = []collective.Result{{Op: "hier_all_reduce", Ranks: h.Ranks, Size: h.Size, TimeUs: h.Time.Micros(), AlgBW: h.AlgBW, BusBW: h.BusBW}}
	r.Phases = h.Phases[:]
	return r, nil
}

func run(l *simlab.Lab, r *Report, cfg Config, jobErr func() error) error {
	limit := cfg.Limit
	if f := r.follow; f != nil {
		r.HugePages.Before = f.Result().Bytes
		defer r.stopHugePages()
	}
	t0, c0 := time.Now(), CPUTime()
	err := l.RunUntilIdle(limit)
	r.Wall, r.CPU = time.Since(t0), CPUTime()-c0
	r.Fabric = clock.Duration(l.Now())
	r.Events = l.Executed()
	r.PeakRSS = PeakRSS()
	// Counted from the models' accessors, not their telemetry: labelling
	// every port's and path's samples allocated about 20 MB, which made
	// the process's peak RSS the end of the run's, not the run's.
	txPackets := func(name string) bool { return name == "qp_tx_packets_total" }
	for _, n := range l.NICs() {
		n.CollectNamed(txPackets, func(s telemetry.Sample) {
			if txPackets(s.Name) {
				r.DataPackets += int64(s.Value)
			}
		})
	}
	t := l.Fabric().Totals()
	r.PFCFrames, r.Drops, r.PeakQueue = t.PFCFrames, t.Drops, t.PeakQueue
	if err != nil {
		return fmt.Errorf("simbench: %w", err)
	}
	if err := jobErr(); err != nil {
		return fmt.Errorf("simbench: %w", err)
	}
	return nil
}

// derangement returns a random permutation of 0..n-1 without fixed points
// (Sattolo's algorithm: a single cycle).
func derangement(n int, rng *rand.Rand) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := rng.IntN(i)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// idealTime is size bytes at the payload throughput of a link of rate r
// carrying RDMA packets of mtu payload bytes (every header, the ICRC, FCS,
// preamble and inter-frame gap counted).
func idealTime(size, mtu int, r clock.Rate) clock.Duration {
	full, rest := size/mtu, size%mtu
	frame := func(n int) clock.Duration {
		return r.Serialize(wire.OnWireBytes(wire.EthernetLen + wire.IPv4MinLen + wire.UDPLen + wire.BTHLen + n + wire.ICRCLen))
	}
	d := clock.Duration(full) * frame(mtu)
	if rest > 0 {
		d += frame(rest)
	}
	return d
}

// Table writes the run's deterministic results — every flow's completion
// time, the collective lines, packet and event counts, fabric time — one
// line each; wall-clock figures are left out.
func (r *Report) Table() string {
	// A builder: with 24,576 flows, adding line by line to a string made
	// ~9 GB of garbage, which took the process's peak RSS from 9 GB to
	// 16 GB after the run.
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s: nics=%d switches=%d links=%d fabric=%d ps data_packets=%d events=%d pfc=%d peak_queue=%d drops=%d\n",
		r.Name, r.Topology, r.NICs, r.Switches, r.Links, r.Fabric, r.DataPackets, r.Events, r.PFCFrames, r.PeakQueue, r.Drops)
	for i, d := range r.FCTs {
		fmt.Fprintf(&b, "flow %d fct %d\n", i, d)
	}
	for _, c := range r.Coll {
		fmt.Fprintf(&b, "coll %s size %d time_us %.6f algbw %.6f busbw %.6f\n", c.Op, c.Size, c.TimeUs, c.AlgBW, c.BusBW)
	}
	return b.String()
}

// Digest returns the SHA-256 of Table, in hex.
func (r *Report) Digest() string {
	h := sha256.Sum256([]byte(r.Table()))
	return hex.EncodeToString(h[:])
}

// Summary returns the human-readable figures of the run.
func (r *Report) Summary() string {
	s := fmt.Sprintf("== %s\n", r.Name)
	s += fmt.Sprintf("topology        %s: %d NICs, %d switches, %d links\n", r.Topology, r.NICs, r.Switches, r.Links)
	s += fmt.Sprintf("build wall      %v\n", r.Build.Round(time.Millisecond))
	s += fmt.Sprintf("run wall        %v, CPU %v (fabric time %v, %d worker(s), %d partition(s))\n", r.Wall.Round(time.Millisecond), r.CPU.Round(time.Millisecond), r.Fabric, max(r.Workers, 1), max(r.Partitions, 1))
	s += fmt.Sprintf("data packets    %d (%.0f per wall-second, %.0f per CPU-second)\n", r.DataPackets, r.PacketsPerSecond(),
		float64(r.DataPackets)/r.CPU.Seconds())
	s += fmt.Sprintf("events          %d (%.0f per wall-second, %.0f per CPU-second)\n", r.Events, r.EventsPerSecond(),
		float64(r.Events)/r.CPU.Seconds())
	s += fmt.Sprintf("peak RSS        %.1f MB\n", float64(r.PeakRSS)/(1<<20))
	switch hp := r.HugePages; {
	case hp.Err != nil:
		s += fmt.Sprintf("huge pages      not used: %v\n", hp.Err)
	case hp.Regions > 0:
		s += fmt.Sprintf("huge pages      %.0f MB advised by the run's start, %.0f MB during it; %.0f MB on huge pages at the end\n",
			float64(hp.Before)/(1<<20), float64(hp.Bytes-hp.Before)/(1<<20), float64(hp.Huge)/(1<<20))
	}
	s += fmt.Sprintf("fabric          %d PFC frames, deepest queue %d B, %d drops\n", r.PFCFrames, r.PeakQueue, r.Drops)
	if len(r.FCTs) > 0 {
		s += fmt.Sprintf("flow FCT        n=%d min=%v mean=%v median=%v p99=%v max=%v\n", r.FCT.Count, r.FCT.Min, r.FCT.Mean, r.FCT.Median, r.FCT.P99, r.FCT.Max)
		s += fmt.Sprintf("ideal FCT       %v  worst-flow ratio %.3f  median ratio %.3f\n", r.Ideal, r.WorstRatio(),
			float64(r.FCT.Median)/float64(r.Ideal))
	}
	for _, c := range r.Coll {
		s += fmt.Sprintf("%-15s %d B in %.1f us: algbw %.2f GB/s busbw %.2f GB/s\n", c.Op, c.Size, c.TimeUs, c.AlgBW, c.BusBW)
	}
	if len(r.Phases) == 3 {
		s += fmt.Sprintf("phases          reduce-scatter %v, all-reduce %v, all-gather %v\n", r.Phases[0], r.Phases[1], r.Phases[2])
	}
	s += fmt.Sprintf("digest          %s\n", r.Digest())
	return s
}
