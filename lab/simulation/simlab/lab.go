package simlab

import (
	"errors"
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/cc"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

// Options configure Build. The zero value is a payload-free lab, seed 0,
// RoCEv2 QPs without congestion control.
type Options struct {
	// Seed seeds every random stream of the lab (switches, NICs).
	Seed uint64
	// Raw makes NICs build real frames carrying payload bytes, with the
	// ICRC, and verify it on receive; otherwise frames are payload-free
	// descriptors (cheaper, for scale).
	Raw bool
	// CC is the default congestion control of jobs ("none", "dcqcn",
	// "credit"; default "none"); a job may override it.
	CC string
	// CCParams are passed to every controller (see endpoint.Options).
	CCParams map[string]string
	// Mode is the default reliability mode of jobs ("rocev2" or
	// "metaroce"; default "rocev2"); a job may override it.
	Mode string
	// MTU is the RDMA payload per packet of every BE NIC. Default: the
	// largest power of two, at most 4096, whose frames fit the NIC's link
	// MTU.
	MTU int
	// QPWindow is the most PSNs each QP keeps in flight
	// (endpoint.QPConfig.Window; default the endpoint's, 4096). Each QP
	// holds per-PSN state of this size on both ends, so labs with
	// thousands of QPs use a smaller window (512 PSNs of 4 KiB is 2 MiB in
	// flight, several bandwidth-delay products of a 400G fabric).
	QPWindow int
	// QPTimeout is every QP's initial retransmission timeout
	// (endpoint.QPConfig.Timeout; default the endpoint's, 200 µs).
	QPTimeout clock.Duration
	// Workers is how many goroutines the lab's engines run on, side by
	// side (see workers.go); 0 or 1 is one. Partitions is how many engines
	// a fabric of several zones is cut into (at most one per zone, or per
	// group of racks when twice the zones or more are asked for); 0 is
	// DefaultPartitions(Workers) when Workers > 1, else one engine.
	// Several partitions pay on one goroutine too: a window runs each
	// partition's events together, while its switches and NICs are in
	// cache (docs/performance.md, "Partitions on one core"). A topology of
	// fewer than two zones, or without delay on the links between them,
	// runs on one engine. Perf, incast and collective jobs run on several,
	// but for an all-to-all of more than 128 ranks
	// (CollectiveOnOneEngine). Results are the same whatever the numbers. Close a lab of
	// several. Its Fabric.Wrap sinks and OnPFC callbacks run on the
	// goroutine of the partition of the link or switch they belong to,
	// side by side.
	Workers, Partitions int
	// Fabric is passed to fabric.BuildSim (switch configuration hooks,
	// PFC callback, fault and capture wrappers).
	Fabric fabric.SimOptions
	// Progress, if set, is called every ProgressEvery of fabric time while
	// Run or RunUntilIdle runs.
	Progress func(Progress)
	// ProgressEvery is the fabric time between Progress calls (default
	// 100 µs).
	ProgressEvery clock.Duration
}

// Progress is what the progress callback is told.
type Progress struct {
	Now    clock.Time // fabric time
	Events uint64     // events run so far
	Jobs   int        // jobs not finished yet
}

// Lab is a topology running in the simulator.
type Lab struct {
	opts  Options
	e     *sim.Engine
	topo  *topologies.Topology
	fab   *fabric.SimFabric
	reg   *cc.Registry
	mode  endpoint.Mode
	nics  []*endpoint.NIC // BE NICs in node order
	byNIC map[string]*endpoint.NIC
	// nicEng is the engine of each BE NIC (the lab's one, or its partition's).
	nicEng map[string]*sim.Engine
	// descs is the descriptor pool of each engine's NICs (see attach).
	descs map[*sim.Engine]*wire.PacketPool
	ports map[string]*topologies.Port
	fe    []*IPHost
	byFE  map[string]*IPHost

	jobs     []job
	running  int  // jobs started and not finished
	stopIdle bool // RunUntilIdle in progress: stop when running drops to 0
	ticks    int  // periodic events of the lab's own pending in the engine

	w *workers // nil on one engine
}

// job is what Perf, Incast and Collective jobs share.
type job interface {
	telemetry.Source
	Done() bool
}

// Build builds the lab for t.
func Build(t *topologies.Topology, opts Options) (*Lab, error) {
	if t == nil {
		return nil, errors.New("simlab: no topology")
	}
	if opts.CC == "" {
		opts.CC = "none"
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 100 * clock.Microsecond
	}
	mode, err := endpoint.ParseMode(opts.Mode)
	if err != nil {
		return nil, fmt.Errorf("simlab: %w", err)
	}
	l := &Lab{
		opts: opts, e: sim.New(opts.Seed), topo: t, reg: endpoint.CCRegistry(), mode: mode,
		byNIC: map[string]*endpoint.NIC{}, nicEng: map[string]*sim.Engine{}, descs: map[*sim.Engine]*wire.PacketPool{}, ports: map[string]*topologies.Port{}, byFE: map[string]*IPHost{},
	}
	if _, err := l.reg.Get(opts.CC); err != nil {
		return nil, fmt.Errorf("simlab: %w", err)
	}
	parts := opts.Partitions
	if parts == 0 && opts.Workers > 1 {
		parts = DefaultPartitions(opts.Workers)
	}
	if parts > 1 {
		if l.w, err = partition(t, parts, max(opts.Workers, 1), opts.Seed); err != nil {
			return nil, fmt.Errorf("simlab: %w", err)
		}
	}
	fo := opts.Fabric
	if l.w != nil {
		l.e = l.w.g.Engine(0)
		fo.EngineOf = l.engineOf
		l.w.g.Serial = l.serial
	}
	if l.fab, err = fabric.BuildSim(l.e, t, fo); err != nil {
		l.Close()
		return nil, fmt.Errorf("simlab: %w", err)
	}
	for _, n := range t.Nodes {
		if n.Kind == topologies.KindSwitch {
			continue
		}
		for _, p := range n.Ports {
			if p.Peer == nil || p.Peer.Node.Kind != topologies.KindSwitch {
				continue
			}
			name := n.Name + ":" + p.Name
			if err := l.attach(name, p); err != nil {
				l.Close()
				return nil, fmt.Errorf("simlab: %s: %w", name, err)
			}
		}
	}
	return l, nil
}

// engineDescriptors bounds the descriptors an engine's NICs keep for
// reuse: 4,096 of 192 bytes, 768 KiB an engine.
const engineDescriptors = 4096

// attach builds the NIC (BE ports of hosts) or IP sink (the rest) of p.
func (l *Lab) attach(name string, p *topologies.Port) error {
	l.ports[name] = p
	if p.Plane != topologies.BE || p.Node.Kind != topologies.KindHost {
		h := newIPHost(name, l.engineOf(p.Node), p)
		out, err := l.fab.Attach(p.Node.Name, p.Name, h)
		if err != nil {
			return err
		}
		h.out = out
		l.fe = append(l.fe, h)
		l.byFE[name] = h
		return nil
	}
	mtu := l.opts.MTU
	if mtu == 0 {
		mtu = endpoint.PayloadMTU(p.MTU)
	}
	var mac [6]byte
	copy(mac[:], p.MAC)
	e := l.engineOf(p.Node)
	// The NICs of one engine share their descriptors: the one a NIC
	// received last, still in cache, carries the next packet any of them
	// sends, and a sender need not wait for its own peer's traffic to
	// stop allocating.
	descs := l.descs[e]
	if descs == nil {
		descs = wire.NewPacketPool(engineDescriptors)
		l.descs[e] = descs
	}
	nic, err := endpoint.NewNIC(endpoint.Options{
		Name: name, Sched: e, Rand: e.Rand("nic/" + name),
		LineRate: p.Rate, MAC: mac, IP: p.Addr.Addr(), MTU: mtu, Raw: l.opts.Raw,
		CC: l.reg, CCParams: l.opts.CCParams, Descriptors: descs,
	})
	if err != nil {
		return err
	}
	out, err := l.fab.Attach(p.Node.Name, p.Name, nic)
	if err != nil {
		return err
	}
	nic.Attach(out)
	l.nics = append(l.nics, nic)
	l.byNIC[name] = nic
	l.nicEng[name] = e
	return nil
}

// Engine returns the simulator engine: the first of several when the lab
// runs on workers (then use the Lab's own Now, Executed and Run).
func (l *Lab) Engine() *sim.Engine { return l.e }

// Now returns the fabric time.
func (l *Lab) Now() clock.Time { return l.now() }

// Topology returns the topology the lab was built from.
func (l *Lab) Topology() *topologies.Topology { return l.topo }

// Fabric returns the switches and links.
func (l *Lab) Fabric() *fabric.SimFabric { return l.fab }

// Switch returns the switch called name, or nil.
func (l *Lab) Switch(name string) *switchmodel.Switch { return l.fab.Switch(name) }

// NIC returns the BE NIC called name ("host1:gpu0"), or nil.
func (l *Lab) NIC(name string) *endpoint.NIC { return l.byNIC[name] }

// NICs returns every BE NIC, in node and port order.
func (l *Lab) NICs() []*endpoint.NIC { return l.nics }

// NICNames returns the names of every BE NIC, in node and port order.
func (l *Lab) NICNames() []string {
	out := make([]string, len(l.nics))
	for i, n := range l.nics {
		out[i] = n.Name()
	}
	return out
}

// Host returns the IP sink of the FE (or storage) NIC called name
// ("host1:fe0", "st1:fe0"), or nil.
func (l *Lab) Host(name string) *IPHost { return l.byFE[name] }

// Port returns the topology port of the NIC called name, or nil.
func (l *Lab) Port(name string) *topologies.Port { return l.ports[name] }

// nic returns the BE NIC called name or an error naming the known ones.
func (l *Lab) nic(name string) (*endpoint.NIC, error) {
	if n := l.byNIC[name]; n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("no back-end NIC %q (NICs are named host:port, e.g. %q)", name, l.firstNIC())
}

func (l *Lab) firstNIC() string {
	if len(l.nics) == 0 {
		return "host1:gpu0"
	}
	return l.nics[0].Name()
}

// defaultModeCC fills a job spec's empty reliability mode and congestion
// control with the lab's defaults.
func (l *Lab) defaultModeCC(mode, cc *string) {
	if *mode == "" {
		*mode = l.mode.String()
	}
	if *cc == "" {
		*cc = l.opts.CC
	}
}

// addJob registers j; it counts as running until finished is called.
func (l *Lab) addJob(j job) {
	l.jobs = append(l.jobs, j)
	l.running++
}

// finished is called once by each job when it completes.
func (l *Lab) finished() {
	l.lock()
	l.running--
	stop := l.running == 0 && l.stopIdle
	l.unlock()
	if stop {
		l.stop()
	}
}

// Running returns how many jobs have not finished.
func (l *Lab) Running() int { return l.running }

// Run runs the lab until fabric time until (measured from the start of the
// simulation; a time already passed runs nothing).
func (l *Lab) Run(until clock.Duration) {
	end := clock.Time(until)
	for l.now() < end {
		next := min(end, l.now().Add(l.opts.ProgressEvery))
		l.runUntil(next)
		l.progress()
	}
}

// RunFor runs the lab for d more fabric time.
func (l *Lab) RunFor(d clock.Duration) { l.Run(clock.Duration(l.now().Add(d))) }

// RunUntilIdle runs until every job finished, or until no event but the
// lab's own samplers is left. It returns an error if jobs are left
// unfinished with nothing left to run (a stuck job) or if limit (> 0) of
// fabric time passed first.
func (l *Lab) RunUntilIdle(limit clock.Duration) error {
	deadline := clock.Never
	if limit > 0 {
		deadline = l.now().Add(limit)
	}
	l.stopIdle = true
	defer func() { l.stopIdle = false }()
	for l.running > 0 {
		if l.pending() <= l.ticks {
			return fmt.Errorf("simlab: %d job(s) unfinished and nothing left to run at %v", l.running, l.now())
		}
		if l.now() >= deadline {
			return fmt.Errorf("simlab: %d job(s) unfinished after %v of fabric time", l.running, limit)
		}
		next := min(deadline, l.now().Add(l.opts.ProgressEvery))
		l.runUntil(next)
		l.progress()
	}
	return nil
}

func (l *Lab) progress() {
	if l.opts.Progress != nil {
		l.opts.Progress(Progress{Now: l.now(), Events: l.Executed(), Jobs: l.running})
	}
}

// Collect emits the samples of every switch, BE NIC, FE sink and job
// (telemetry.Source).
func (l *Lab) Collect(emit func(telemetry.Sample)) { l.CollectNamed(nil, emit) }

// CollectNamed is Collect leaving out what the NICs can skip by name
// (telemetry.NamedSource; nil want: everything).
func (l *Lab) CollectNamed(want func(name string) bool, emit func(telemetry.Sample)) {
	l.fab.Collect(emit)
	for _, n := range l.nics {
		telemetry.CollectWanted(n, want, emit)
	}
	for _, h := range l.fe {
		h.Collect(emit)
	}
	for _, j := range l.jobs {
		j.Collect(emit)
	}
}

// Samples gathers every sample of the lab, sorted (telemetry.Gather).
func (l *Lab) Samples() []telemetry.Sample { return telemetry.Gather(l) }
