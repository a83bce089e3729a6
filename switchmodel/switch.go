package switchmodel

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/wire"
)

// PortSpec describes one port.
type PortSpec struct {
	// Rate is the line rate the egress serializes at.
	Rate clock.Rate
	// Delay is the one-way propagation delay of the cable on this port; it
	// sizes the port's automatic PFC headroom (see HeadroomFor).
	Delay clock.Duration
}

// Options are what New needs.
type Options struct {
	// Name labels the switch's telemetry (node=Name).
	Name   string
	Config Config
	// Sched gives time and callbacks; required.
	Sched clock.Scheduler
	// Rand drives WRED coin flips, random spraying and (when
	// Config.ECMP.Seed is 0) the ECMP seed. Nil uses a PCG seeded from Name.
	Rand  *rand.Rand
	Ports []PortSpec

	// OnPFC, if set, is told each time a PG decides to pause (xoff) or
	// resume its upstream — at the decision, before the frame is sent.
	OnPFC func(port, prio int, xoff bool)

	// Prefixes, if set, numbers the prefixes of the switch's routes, shared
	// with the other switches of its fabric that run on the same scheduler
	// (see Prefixes); nil gives the switch a numbering of its own.
	Prefixes *Prefixes

	// Control, if set, answers the packets addressed to the switch's own
	// addresses (AddLocal): ARP, neighbour discovery, ICMP echo. Nil drops
	// them (reason "to_switch").
	Control ControlPlane
}

// Switch is the model of one switch ASIC: ports with eight traffic classes,
// a shared-buffer MMU, PFC, WRED/ECN, strict+DWRR scheduling and an L3
// forwarding table with ECMP. It is single-threaded: Receive and the
// scheduler's callbacks must not run concurrently.
type Switch struct {
	name  string
	cfg   Config
	sched clock.Scheduler
	fast  clock.HandlerScheduler // sched's allocation-free path, or nil
	rng   *rand.Rand
	// observer from Options.
	onPFC func(port, prio int, xoff bool)
	ctl   ControlPlane

	ports []*Port
	mmu   mmu
	fib   fib

	hashSeed uint64
	spray    [64]bool
	strict   []uint8 // strict classes, highest first
	dwrr     []uint8 // the other classes, in round-robin order
}

// MaxPorts is the most ports a switch may have: a queued packet keeps its
// ingress port in 16 bits, so that a queue entry is 16 bytes.
const MaxPorts = 1<<16 - 1

// New builds a switch. It fails when the configuration is inconsistent or
// leaves no shared buffer.
func New(opts Options) (*Switch, error) {
	cfg := opts.Config
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("switch %q: config: %w", opts.Name, err)
	}
	if opts.Sched == nil {
		return nil, fmt.Errorf("switch %q: no scheduler", opts.Name)
	}
	if len(opts.Ports) == 0 {
		return nil, fmt.Errorf("switch %q: no ports", opts.Name)
	}
	if len(opts.Ports) > MaxPorts {
		return nil, fmt.Errorf("switch %q: %d ports, more than the %d a switch may have", opts.Name, len(opts.Ports), MaxPorts)
	}
	rng := opts.Rand
	if rng == nil {
		h := fnv.New64a()
		h.Write([]byte(opts.Name))
		rng = rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	}
	s := &Switch{
		name:  opts.Name,
		cfg:   cfg,
		sched: opts.Sched,
		rng:   rng,
		onPFC: opts.OnPFC,
		ctl:   opts.Control,
		fib:   fib{prefixes: opts.Prefixes, shared: opts.Prefixes != nil},
	}
	if s.fib.prefixes == nil {
		s.fib.prefixes = NewPrefixes(0, 0)
	}
	s.fast, _ = opts.Sched.(clock.HandlerScheduler)
	s.hashSeed = cfg.ECMP.Seed
	if s.hashSeed == 0 {
		s.hashSeed = rng.Uint64()
	}
	for _, d := range cfg.ECMP.SprayDSCPs {
		s.spray[d] = true
	}
	for tc := NumTC - 1; tc >= 0; tc-- {
		if cfg.Sched.Strict.Has(tc) {
			s.strict = append(s.strict, uint8(tc))
		}
	}
	for tc := range NumTC {
		if !cfg.Sched.Strict.Has(tc) {
			s.dwrr = append(s.dwrr, uint8(tc))
		}
	}

	s.mmu = mmu{
		size:    cfg.BufferBytes,
		reserve: cfg.PFC.Reserved,
		alpha:   cfg.PFC.Alpha,
		static:  cfg.PFC.XOffThreshold,
	}
	var reserved, headroom int64
	for i, spec := range opts.Ports {
		if spec.Rate <= 0 {
			return nil, fmt.Errorf("switch %q: port %d: rate must be positive", opts.Name, i)
		}
		p := newPort(s, i, spec)
		s.ports = append(s.ports, p)
		for j := range p.pg {
			reserved += cfg.PFC.Reserved
			headroom += int64(p.pg[j].headroom)
		}
	}
	s.mmu.shared = cfg.BufferBytes - reserved - headroom
	if s.mmu.shared <= 0 {
		return nil, fmt.Errorf("switch %q: buffer %d B leaves no shared pool after %d B reserved and %d B headroom",
			opts.Name, cfg.BufferBytes, reserved, headroom)
	}
	return s, nil
}

// Name returns the switch's name.
func (s *Switch) Name() string { return s.name }

// NumPorts returns the number of ports.
func (s *Switch) NumPorts() int { return len(s.ports) }

// Port returns port i. Its Receive is the port's ingress.
func (s *Switch) Port(i int) *Port { return s.ports[i] }

// Attach sets what port i's egress transmits into (a link toward the
// neighbour). A port with nothing attached drops what is routed to it
// (reason "no_link").
func (s *Switch) Attach(i int, out wire.Sink) {
	pt := s.ports[i]
	pt.out = out
	pt.linked = out != nil
	pt.launch, _ = out.(wire.LaunchSink)
}

// SharedPool returns the size of the shared pool: the buffer minus every
// PG's reserve and every lossless PG's headroom.
func (s *Switch) SharedPool() int64 { return s.mmu.shared }

// BufferUsed returns the bytes in the buffer now.
func (s *Switch) BufferUsed() int64 { return s.mmu.used }

// SharedUsed returns the bytes in the shared pool now.
func (s *Switch) SharedUsed() int64 { return s.mmu.sharedUsed }

// Threshold returns the dynamic (or static) per-PG shared-pool threshold now.
func (s *Switch) Threshold() int64 { return s.mmu.threshold(0) }

// AddRoute adds ports to the next-hop set of prefix (equal-cost paths).
func (s *Switch) AddRoute(prefix netip.Prefix, ports ...int) error {
	if !prefix.IsValid() {
		return fmt.Errorf("switch %q: add route: invalid prefix", s.name)
	}
	if len(ports) == 0 {
		return fmt.Errorf("switch %q: add route %v: no ports", s.name, prefix)
	}
	for _, p := range ports {
		if p < 0 || p >= len(s.ports) {
			return fmt.Errorf("switch %q: add route %v: port %d out of range", s.name, prefix, p)
		}
	}
	s.fib.add(prefix.Masked(), ports)
	return nil
}

// ReserveRoutes makes room in the forwarding table for n4 IPv4 and n6
// IPv6 routes before a builder adds them (a table grown step by step
// rehashes several times); it does nothing after the first route.
func (s *Switch) ReserveRoutes(n4, n6 int) { s.fib.reserve(n4, n6) }

// AddRoutes adds a route over ports for every prefix of prefixes: what a
// fabric builder installs for the addresses one destination owns. It is
// AddRoute for each, with the checks and the port set's interning done
// once (a 1,024-host fabric installs 1.4 million routes).
func (s *Switch) AddRoutes(prefixes []netip.Prefix, ports ...int) error {
	if len(ports) == 0 {
		return fmt.Errorf("switch %q: add routes %v: no ports", s.name, prefixes)
	}
	for _, p := range ports {
		if p < 0 || p >= len(s.ports) {
			return fmt.Errorf("switch %q: add routes %v: port %d out of range", s.name, prefixes, p)
		}
	}
	for _, pfx := range prefixes {
		if !pfx.IsValid() {
			return fmt.Errorf("switch %q: add route: invalid prefix", s.name)
		}
	}
	s.fib.addAll(prefixes, ports)
	return nil
}

// NextHop returns the egress port the switch would pick for p now. For a
// sprayed packet this advances the round-robin, like forwarding would.
func (s *Switch) NextHop(p *wire.Packet) (int, error) {
	out, ok := s.route(p)
	if !ok {
		return 0, errors.New("no route")
	}
	if out == localPort {
		return 0, errors.New("addressed to the switch")
	}
	return out, nil
}
