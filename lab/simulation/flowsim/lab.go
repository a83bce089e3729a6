package flowsim

import (
	"errors"
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

// Options configure Build. The zero value: seed 0, RoCEv2 QPs.
type Options struct {
	// Seed is the packet simulator's seed: it draws each switch's hash
	// seed and each NIC's first QP number as simlab does, so a flow takes
	// the path it takes there.
	Seed uint64
	// Mode is the default reliability mode of jobs ("rocev2" or
	// "metaroce"); only MetaRoCE QPs spray over several paths.
	Mode string
	// MTU is the RDMA payload per packet (default as simlab's:
	// endpoint.PayloadMTU of the NIC link's MTU).
	MTU int
}

// Lab is a topology in the flow-level simulator: links as capacities, the
// switches' routing (fabric.BuildSim's switch models, asked for paths,
// never sent a packet), and the NICs' QP numbering.
type Lab struct {
	opts  Options
	e     *sim.Engine
	topo  *topologies.Topology
	fab   *fabric.SimFabric
	net   *Net
	links map[*topologies.Port]int32
	ports []*topologies.Port // by link index
	nics  map[string]*nic
	names []string // BE NICs, in node and port order
	jobs  []job
	left  int // jobs not finished
}

// nic is a BE NIC as the flow simulator needs it.
type nic struct {
	name    string
	port    *topologies.Port
	nextQPN uint32
	mtu     int
}

// job is what the lab's jobs share.
type job interface{ Done() bool }

// Build builds the flow-level lab of t.
func Build(t *topologies.Topology, opts Options) (*Lab, error) {
	if t == nil {
		return nil, errors.New("flowsim: no topology")
	}
	if _, err := endpoint.ParseMode(opts.Mode); err != nil {
		return nil, fmt.Errorf("flowsim: %w", err)
	}
	l := &Lab{opts: opts, e: sim.New(opts.Seed), topo: t, links: map[*topologies.Port]int32{}, nics: map[string]*nic{}}
	var err error
	if l.fab, err = fabric.BuildSim(l.e, t, fabric.SimOptions{RoutesOnDemand: true}); err != nil {
		return nil, fmt.Errorf("flowsim: %w", err)
	}
	var caps []float64
	descs := wire.NewPacketPool(1)
	for _, n := range t.Nodes {
		for _, p := range n.Ports {
			if p.Peer == nil {
				continue
			}
			l.links[p] = int32(len(caps))
			l.ports = append(l.ports, p)
			caps = append(caps, float64(p.Rate))
			if n.Kind != topologies.KindHost || p.Plane != topologies.BE || p.Peer.Node.Kind != topologies.KindSwitch {
				continue
			}
			mtu := opts.MTU
			if mtu == 0 {
				mtu = endpoint.PayloadMTU(p.MTU)
			}
			name := n.Name + ":" + p.Name
			// The NIC the packet simulator builds, for the QP numbers it
			// hands out (drawn from its random stream).
			var mac [6]byte
			copy(mac[:], p.MAC)
			en, err := endpoint.NewNIC(endpoint.Options{Name: name, Sched: l.e, Rand: l.e.Rand("nic/" + name),
				LineRate: p.Rate, MAC: mac, IP: p.Addr.Addr(), MTU: mtu, Descriptors: descs})
			if err != nil {
				return nil, fmt.Errorf("flowsim: %s: %w", name, err)
			}
			l.nics[name] = &nic{name: name, port: p, nextQPN: en.NextQPN(), mtu: mtu}
			l.names = append(l.names, name)
		}
	}
	l.net = NewNet(l.e, caps)
	return l, nil
}

// Engine returns the engine the lab runs on.
func (l *Lab) Engine() *sim.Engine { return l.e }

// Net returns the lab's network.
func (l *Lab) Net() *Net { return l.net }

// Now returns the fabric time.
func (l *Lab) Now() clock.Time { return l.e.Now() }

// Topology returns the topology the lab was built from.
func (l *Lab) Topology() *topologies.Topology { return l.topo }

// Fabric returns the switch models the lab asks for paths.
func (l *Lab) Fabric() *fabric.SimFabric { return l.fab }

// NICNames returns the BE NICs' names, in node and port order.
func (l *Lab) NICNames() []string { return l.names }

// At runs f at fabric time t (now, if t has passed).
func (l *Lab) At(t clock.Time, f func()) { l.e.At(max(t, l.e.Now()), f) }

// RunUntil runs the lab until fabric time t.
func (l *Lab) RunUntil(t clock.Time) { l.e.RunUntil(t) }

// Running returns how many jobs have not finished.
func (l *Lab) Running() int { return l.left }

// Executed returns the events run so far.
func (l *Lab) Executed() uint64 { return l.e.Executed() }

func (l *Lab) addJob(j job) {
	l.jobs = append(l.jobs, j)
	l.left++
}

func (l *Lab) finished() { l.left-- }

func (l *Lab) nic(name string) (*nic, error) {
	if n := l.nics[name]; n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("no back-end NIC %q (NICs are named host:port, e.g. host1:gpu0)", name)
}

// newQPN hands out n's next QP number, as its NIC's CreateQP would.
func (n *nic) newQPN() uint32 {
	q := n.nextQPN
	n.nextQPN = (q + 1) & 0xFFFFFF
	return q
}

// qpEnd is one end of a connected QP pair: its NIC and number.
type qpEnd struct {
	n   *nic
	qpn uint32
}

// newQP builds the flow-level QP that sends from a to b over its source
// ports (the paths of a MetaRoCE QP, else one), each routed as the
// switches route its packets. The QP is one flow whose bytes split evenly
// over its paths — its packets go round-robin over them, as a MetaRoCE QP
// sends when its paths' rates are equal — so a link its paths share
// carries their shares summed (a QP spraying over 64 ports is one flow on
// a few dozen links, not 64 flows).
func (l *Lab) newQP(a, b qpEnd, mode endpoint.Mode, paths int) (*QP, error) {
	if mode != endpoint.ModeMetaRoCE || paths < 1 {
		paths = 1
	}
	paths = min(paths, endpoint.MaxPaths)
	var uses []Use
	at := map[int32]int{}
	var oneWay, back float64
	for i := range paths {
		sport := endpoint.PathPort(a.qpn, a.n.port.Addr.Addr(), i)
		pkt := fabric.FlowPacket(a.n.port, b.n.port, sport, b.qpn, endpoint.DefaultDataDSCP)
		hops, err := l.fab.Path(a.n.port, pkt)
		if err != nil {
			return nil, err
		}
		frame := wire.OnWireBytes(wire.EthernetLen + wire.IPv4MinLen + wire.UDPLen + wire.BTHLen + a.n.mtu + wire.ICRCLen)
		var ow, bk float64
		for k, h := range hops {
			li := l.links[h.From]
			if i, ok := at[li]; ok {
				uses[i].Share += h.Share / float64(paths)
			} else {
				at[li] = len(uses)
				uses = append(uses, Use{Link: li, Share: h.Share / float64(paths)})
			}
			// The last frame is stored and forwarded at every hop after
			// the NIC's own link; each link adds its propagation delay
			// both ways (the acknowledgement returns the same way).
			d := float64(h.From.Link.Delay)
			ow += h.Share * d
			bk += h.Share * d
			if k > 0 {
				ow += h.Share * float64(h.From.Rate.Serialize(frame))
			}
		}
		oneWay = max(oneWay, ow)
		back = max(back, bk)
	}
	return l.net.NewQP([][]Use{uses}, clock.Duration(oneWay), clock.Duration(back)), nil
}

// LinkPort returns the port link i leaves by.
func (l *Lab) LinkPort(i int32) *topologies.Port { return l.ports[i] }

// Path returns the links a QP from NIC from (numbered qpn) to NIC to
// (its peer numbered peerQPN) crosses on path i, as the switches route its
// packets: for tests and tools.
func (l *Lab) Path(from, to string, qpn, peerQPN uint32, i int) ([]fabric.Hop, error) {
	a, err := l.nic(from)
	if err != nil {
		return nil, err
	}
	b, err := l.nic(to)
	if err != nil {
		return nil, err
	}
	sport := endpoint.PathPort(qpn, a.port.Addr.Addr(), i)
	return l.fab.Path(a.port, fabric.FlowPacket(a.port, b.port, sport, peerQPN, endpoint.DefaultDataDSCP))
}
