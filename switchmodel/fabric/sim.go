package fabric

import (
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/pipe"
)

// SimOptions tune BuildSim. The zero value builds the fabric as the
// topology says.
type SimOptions struct {
	// Configure, if set, may adjust each switch's configuration after the
	// profile was converted (ECMP hashing, spraying, …). The result is
	// validated by the switch model.
	Configure func(n *topologies.Node, c *switchmodel.Config)
	// OnPFC, if set, is told each time a switch's priority group decides
	// to pause (xoff) or resume its upstream (see switchmodel.Options).
	OnPFC func(node string, port, prio int, xoff bool)
	// Wrap, if set, wraps what the port from transmits into — the link
	// direction from → from.Peer — before the propagation delay: the place
	// for fault injection and capture taps. Returning s leaves it alone.
	Wrap func(from *topologies.Port, s wire.Sink) wire.Sink
	// EngineOf, if set, gives the engine each node runs on, the fabric's
	// engine otherwise: engines of one sim.Group when the fabric is cut
	// over several (the simulator's workers). A link between nodes on two
	// engines is a pipe.NewAcross.
	EngineOf func(n *topologies.Node) *sim.Engine
	// RoutesOnDemand, if set, installs no routes: Path computes, at each
	// switch it asks, the route to the flow's destination the full tables
	// hold (same ports, same order) the first time it needs it and lets
	// the switch choose among them (switchmodel.Switch.NextHopsAmong: the
	// same hash and spraying), so the paths are the same. For a
	// flow-level simulator that only asks for paths: routing every switch
	// of a large fabric about every prefix is most of its build. A fabric
	// built so has empty tables: packets sent through it are dropped ("no
	// route").
	RoutesOnDemand bool
}

// SimFabric is a topology's switches wired together in the simulator. Host
// and storage NICs are attachment points (Attach); until a NIC is
// attached, what a switch routes toward it is dropped (reason "no_link").
type SimFabric struct {
	e        *sim.Engine
	t        *topologies.Topology
	opts     SimOptions
	byName   map[string]*switchmodel.Switch
	switches []*switchmodel.Switch // node order
	attached map[*topologies.Port]bool
	local    [][]netip.Addr // each switch's own addresses, while building
	onDemand *onDemand      // SimOptions.RoutesOnDemand
}

var _ telemetry.Source = (*SimFabric)(nil)

// BuildSim builds one switchmodel.Switch per switch node of t on engine e
// — configured from its profile (SwitchConfig), its randomness from
// e.Rand("switch/"+name), its routes from Routes — and one pipe.Pipe per
// direction of every switch-to-switch link, with the link's propagation
// delay. Serialization belongs to the sender: switch ports serialize at
// their link's rate; NICs serialize themselves.
func BuildSim(e *sim.Engine, t *topologies.Topology, opts SimOptions) (*SimFabric, error) {
	f := &SimFabric{
		e: e, t: t, opts: opts,
		byName:   map[string]*switchmodel.Switch{},
		attached: map[*topologies.Port]bool{},
	}
	// Every switch routes about every prefix a switch owns: the prefixes
	// are numbered once for all of them, and each table sized for all.
	// On demand, each switch numbers the few prefixes it is asked about.
	var n4, n6 int
	var prefixes *switchmodel.Prefixes
	if !opts.RoutesOnDemand {
		n4, n6 = countOwned(t)
		prefixes = switchmodel.NewPrefixes(n4, n6)
	}
	for _, n := range t.Nodes {
		if n.Kind != topologies.KindSwitch {
			continue
		}
		cfg, err := NodeConfig(n)
		if err != nil {
			return nil, fmt.Errorf("build sim fabric: %w", err)
		}
		if opts.Configure != nil {
			opts.Configure(n, &cfg)
		}
		var onPFC func(port, prio int, xoff bool)
		if opts.OnPFC != nil {
			name := n.Name
			onPFC = func(port, prio int, xoff bool) { opts.OnPFC(name, port, prio, xoff) }
		}
		se := f.engine(n)
		cp, err := ControlPlane(n)
		if err != nil {
			return nil, fmt.Errorf("build sim fabric: %w", err)
		}
		sw, err := switchmodel.New(switchmodel.Options{
			Name:     n.Name,
			Config:   cfg,
			Sched:    se,
			Rand:     se.Rand("switch/" + n.Name),
			Ports:    PortSpecs(n.Ports),
			OnPFC:    onPFC,
			Prefixes: prefixes,
			Control:  cp,
		})
		if err != nil {
			return nil, fmt.Errorf("build sim fabric: %w", err)
		}
		f.local = append(f.local, cp.Addrs())
		f.byName[n.Name] = sw
		f.switches = append(f.switches, sw)
	}
	if opts.RoutesOnDemand {
		f.onDemand = newOnDemand(t)
	} else if err := f.installRoutes(n4, n6); err != nil {
		return nil, err
	}
	// A switch's own addresses, more specific than the /31 of their
	// link, are delivered to its control plane, not forwarded.
	for i, sw := range f.switches {
		if err := sw.AddLocal(f.local[i]...); err != nil {
			return nil, fmt.Errorf("build sim fabric: %w", err)
		}
	}
	f.local = nil
	for _, l := range t.Links {
		a, b := l.A, l.B
		if a.Node.Kind != topologies.KindSwitch || b.Node.Kind != topologies.KindSwitch {
			continue
		}
		swA, swB := f.byName[a.Node.Name], f.byName[b.Node.Name]
		swA.Attach(a.Index-1, f.wrap(a, f.pipe(a, l.Delay, swB.Port(b.Index-1))))
		swB.Attach(b.Index-1, f.wrap(b, f.pipe(b, l.Delay, swA.Port(a.Index-1))))
	}
	return f, nil
}

// installRoutes installs every switch's routes (Routes), as they are
// computed: a large fabric has millions.
func (f *SimFabric) installRoutes(n4, n6 int) error {
	for _, sw := range f.switches {
		sw.ReserveRoutes(n4, n6)
	}
	var rerr error
	eachRoute(f.t, func(n *topologies.Node, prefixes []netip.Prefix, ports []int) {
		if rerr == nil {
			if err := f.byName[n.Name].AddRoutes(prefixes, ports...); err != nil {
				rerr = fmt.Errorf("build sim fabric: switch %s: install routes: %w", n.Name, err)
			}
		}
	})
	return rerr
}

// engine returns the engine node n runs on.
func (f *SimFabric) engine(n *topologies.Node) *sim.Engine {
	if f.opts.EngineOf != nil {
		return f.opts.EngineOf(n)
	}
	return f.e
}

// pipe returns the link from port from to its peer, which delivers to to:
// across engines when the two ends run on different ones.
func (f *SimFabric) pipe(from *topologies.Port, delay clock.Duration, to wire.Sink) *pipe.Pipe {
	src, dst := f.engine(from.Node), f.engine(from.Peer.Node)
	if src == dst {
		return pipe.New(src, delay, to)
	}
	return pipe.NewAcross(src, dst, delay, to)
}

func (f *SimFabric) wrap(from *topologies.Port, s wire.Sink) wire.Sink {
	if f.opts.Wrap != nil {
		return f.opts.Wrap(from, s)
	}
	return s
}

// Attach connects nic, the receive side of the host or storage NIC
// node:port, to the fabric: frames the switch sends toward that NIC reach
// nic after the link's delay. It returns the sink the NIC transmits into
// (the link toward its switch, delay included; the NIC serializes frames
// itself, at the port's rate). Each NIC attaches once.
func (f *SimFabric) Attach(node, port string, nic wire.Sink) (toFabric wire.Sink, err error) {
	n := f.t.Node(node)
	if n == nil {
		return nil, fmt.Errorf("attach %s:%s: no node %q", node, port, node)
	}
	if n.Kind == topologies.KindSwitch {
		return nil, fmt.Errorf("attach %s:%s: %s is a switch; attach NICs of hosts and storage nodes", node, port, node)
	}
	p := n.Port(port)
	if p == nil {
		return nil, fmt.Errorf("attach %s:%s: %s has no port %q", node, port, node, port)
	}
	if p.Peer == nil || p.Peer.Node.Kind != topologies.KindSwitch {
		return nil, fmt.Errorf("attach %s:%s: the port is not cabled to a switch", node, port)
	}
	if nic == nil {
		return nil, fmt.Errorf("attach %s:%s: nil NIC", node, port)
	}
	if f.attached[p] {
		return nil, fmt.Errorf("attach %s:%s: already attached", node, port)
	}
	f.attached[p] = true
	sp := p.Peer
	sw := f.byName[sp.Node.Name]
	delay := p.Link.Delay
	sw.Attach(sp.Index-1, f.wrap(sp, f.pipe(sp, delay, nic)))
	return f.wrap(p, f.pipe(p, delay, sw.Port(sp.Index-1))), nil
}

// Switch returns the switch called name, or nil.
func (f *SimFabric) Switch(name string) *switchmodel.Switch { return f.byName[name] }

// Switches returns every switch, in the topology's node order.
func (f *SimFabric) Switches() []*switchmodel.Switch { return f.switches }

// Topology returns the topology the fabric was built from.
func (f *SimFabric) Topology() *topologies.Topology { return f.t }

// Engine returns the engine the fabric runs on.
func (f *SimFabric) Engine() *sim.Engine { return f.e }

// Collect emits every switch's samples (labelled node=switch name), in
// node order.
func (f *SimFabric) Collect(emit func(telemetry.Sample)) {
	for _, sw := range f.switches {
		sw.Collect(emit)
	}
}

// Totals is what every port of a fabric's switches counted, summed.
type Totals struct {
	PFCFrames int64          // PFC frames the switches sent
	Drops     int64          // packets dropped, every class and reason
	PeakQueue int64          // the deepest any egress queue got, bytes
	XOffTime  clock.Duration // time ingress priority groups spent in XOFF, summed
}

// Totals sums the counters of every switch port: what a run's report
// needs, without building the labelled samples of Collect.
func (f *SimFabric) Totals() Totals {
	var t Totals
	for _, sw := range f.switches {
		for i := range sw.NumPorts() {
			pt := sw.Port(i)
			st := pt.Stats()
			t.PFCFrames += st.PFCTx
			for _, d := range st.Drops {
				t.Drops += d
			}
			for tc := range switchmodel.NumTC {
				t.PeakQueue = max(t.PeakQueue, pt.Queue(tc).PeakBytes)
				t.XOffTime += pt.PG(tc).XOffTime
			}
		}
	}
	return t
}

// Drops returns the packets every switch dropped for reason (a
// switch_drop_packets_total reason label, e.g. "no_headroom").
func (f *SimFabric) Drops(reason string) int64 {
	var n int64
	for _, sw := range f.switches {
		n += sw.Drops(reason)
	}
	return n
}
