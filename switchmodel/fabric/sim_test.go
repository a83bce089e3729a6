package fabric

import (
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/switchmodel/testbench"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

// bench is a simulated fabric with a test host on every BE NIC.
type bench struct {
	e     *sim.Engine
	topo  *topologies.Topology
	f     *SimFabric
	hosts map[*topologies.Port]*testbench.Host
	nics  []*topologies.Port // BE NICs with a host, in node order
	// got counts packets by (destination NIC, source address); ttl records
	// the TTLs seen by (source address, destination address).
	got map[*topologies.Port]map[netip.Addr]int64
	ttl map[[2]netip.Addr]map[uint8]bool
}

func newBench(t *testing.T, name string, seed uint64) *bench {
	t.Helper()
	b := &bench{
		e: sim.New(seed), topo: loadTopo(t, name),
		hosts: map[*topologies.Port]*testbench.Host{},
		got:   map[*topologies.Port]map[netip.Addr]int64{},
		ttl:   map[[2]netip.Addr]map[uint8]bool{},
	}
	f, err := BuildSim(b.e, b.topo, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.f = f
	for _, p := range nics(b.topo) {
		if p.Plane != topologies.BE {
			continue
		}
		h := testbench.NewHost(p.Node.Name+":"+p.Name, b.e, p.Rate, nil)
		got := map[netip.Addr]int64{}
		b.got[p] = got
		h.OnReceive = func(pkt *wire.Packet) {
			got[pkt.SrcIP]++
			k := [2]netip.Addr{pkt.SrcIP, pkt.DstIP}
			if b.ttl[k] == nil {
				b.ttl[k] = map[uint8]bool{}
			}
			b.ttl[k][pkt.TTL] = true
			if pkt.DstIP != p.Addr.Addr() {
				t.Errorf("%s received a packet for %v", h.Name, pkt.DstIP)
			}
		}
		out, err := f.Attach(p.Node.Name, p.Name, h)
		if err != nil {
			t.Fatal(err)
		}
		h.SetOut(out)
		b.hosts[p] = h
		b.nics = append(b.nics, p)
	}
	return b
}

// flow sends n MTU-sized RoCEv2 packets (DSCP 26, ECT(0)) from src to dst.
func (b *bench) flow(src, dst *topologies.Port, n int64, sport uint16) {
	b.hosts[src].AddFlow(&testbench.Flow{
		Template: wire.Packet{
			Kind: wire.KindRoCE, Len: src.MTU + 14,
			IPVersion: 4, SrcIP: src.Addr.Addr(), DstIP: dst.Addr.Addr(),
			DSCP: 26, ECN: 2, TTL: 64, Protocol: 17,
			SrcPort: sport, DstPort: 4791, DestQP: uint32(dst.Node.Index<<8 | dst.Index),
		},
		Count:    n,
		Priority: 3,
	})
}

// hostPorts returns the telemetry port labels of every switch port facing a
// host or storage NIC, by switch name.
func hostPorts(topo *topologies.Topology) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, p := range nics(topo) {
		sp := p.Peer
		if out[sp.Node.Name] == nil {
			out[sp.Node.Name] = map[string]bool{}
		}
		out[sp.Node.Name][strconv.Itoa(sp.Index-1)] = true
	}
	return out
}

// sumEdge sums samples called name on host-facing switch ports.
func sumEdge(samples []telemetry.Sample, edge map[string]map[string]bool, name string, match ...telemetry.Label) int64 {
	var n float64
	for _, s := range samples {
		if s.Name == name && edge[s.Label("node")][s.Label("port")] {
			n += telemetry.Sum([]telemetry.Sample{s}, name, match...)
		}
	}
	return int64(n)
}

func TestSimAllPairs(t *testing.T) {
	for _, name := range []string{"laptop", "incast"} {
		t.Run(name, func(t *testing.T) {
			const n = 40
			b := newBench(t, name, 1)
			var sent int64
			for _, src := range b.nics {
				for _, dst := range b.nics {
					if src != dst {
						b.flow(src, dst, n, uint16(49152+dst.Node.Index*8+dst.Index))
						sent += n
					}
				}
			}
			b.e.Run()

			dist := switchDist(b.topo)
			var recv int64
			for dst, got := range b.got {
				for _, src := range b.nics {
					if src == dst {
						continue
					}
					if got[src.Addr.Addr()] != n {
						t.Errorf("%s:%s got %d of %d packets from %s:%s", dst.Node.Name, dst.Name, got[src.Addr.Addr()], n, src.Node.Name, src.Name)
					}
					// TTL tells how many switches the packets crossed.
					want := uint8(64 - 1 - dist[[2]string{src.Peer.Node.Name, dst.Peer.Node.Name}])
					ttls := b.ttl[[2]netip.Addr{src.Addr.Addr(), dst.Addr.Addr()}]
					if len(ttls) != 1 || !ttls[want] {
						t.Errorf("%s:%s → %s:%s: TTLs %v, want only %d", src.Node.Name, src.Name, dst.Node.Name, dst.Name, ttls, want)
					}
					recv += got[src.Addr.Addr()]
				}
			}
			var counted int64
			for _, h := range b.hosts {
				counted += h.Packets
			}
			if recv != sent || counted != sent {
				t.Errorf("received %d (hosts counted %d) of %d packets", recv, counted, sent)
			}

			samples := telemetry.Gather(b.f)
			edge := hostPorts(b.topo)
			if d := telemetry.Sum(samples, "switch_drop_packets_total"); d != 0 {
				t.Errorf("%v packets dropped", d)
			}
			if got := sumEdge(samples, edge, "switch_pg_rx_packets_total", telemetry.Label{Name: "pg", Value: "3"}); got != sent {
				t.Errorf("edge ports received %d packets in PG3, hosts sent %d", got, sent)
			}
			if got := sumEdge(samples, edge, "switch_queue_tx_packets_total", telemetry.Label{Name: "tc", Value: "3"}); got != sent {
				t.Errorf("edge ports sent %d packets from TC3, hosts received %d", got, sent)
			}
			rx := sumEdge(samples, edge, "switch_port_rx_packets_total") - sumEdge(samples, edge, "switch_port_pfc_rx_frames_total")
			tx := sumEdge(samples, edge, "switch_port_tx_packets_total") - sumEdge(samples, edge, "switch_port_pfc_tx_frames_total")
			if rx != sent || tx != recv {
				t.Errorf("edge ports: rx %d data frames (hosts sent %d), tx %d (hosts received %d)", rx, sent, tx, recv)
			}
			if got := telemetry.Sum(samples, "switch_buffer_used_bytes"); got != 0 {
				t.Errorf("%v bytes left in buffers", got)
			}
		})
	}
}

func TestSimIncastPFC(t *testing.T) {
	const n = 1000
	b := newBench(t, "incast", 7)
	rcv := b.topo.Node("receiver").Port("gpu0")
	var senders []*topologies.Port
	for _, p := range b.nics {
		if p != rcv {
			senders = append(senders, p)
			b.flow(p, rcv, n, uint16(50000+p.Node.Index))
		}
	}
	if len(senders) != 8 {
		t.Fatalf("%d senders, want 8", len(senders))
	}
	b.e.Run()

	samples := telemetry.Gather(b.f)
	if got := b.hosts[rcv].Packets; got != 8*n {
		t.Errorf("receiver got %d of %d packets", got, 8*n)
	}
	pfcTx := telemetry.Sum(samples, "switch_port_pfc_tx_frames_total")
	xoff := telemetry.Sum(samples, "switch_pg_pfc_xoff_frames_total", telemetry.Label{Name: "pg", Value: "3"})
	if pfcTx == 0 || xoff == 0 {
		t.Errorf("no PFC: %v frames sent, %v XOFF for PG3", pfcTx, xoff)
	}
	for _, p := range senders {
		if b.hosts[p].Pauses.Frames[3] == 0 {
			t.Errorf("%s was never paused", p.Node.Name)
		}
	}
	if d := telemetry.Sum(samples, "switch_drop_packets_total", telemetry.Label{Name: "tc", Value: "3"}); d != 0 {
		t.Errorf("%v lossless packets dropped", d)
	}
	if d := telemetry.Sum(samples, "switch_drop_packets_total"); d != 0 {
		t.Errorf("%v packets dropped", d)
	}
	if m := telemetry.Sum(samples, "switch_queue_ecn_marked_packets_total", telemetry.Label{Name: "tc", Value: "3"}); m == 0 || b.hosts[rcv].CE == 0 {
		t.Errorf("no ECN marks (%v marked, %d CE received)", m, b.hosts[rcv].CE)
	}
	// Totals sums what Collect labels.
	tot := b.f.Totals()
	var peak float64
	for _, sm := range samples {
		if sm.Name == "switch_queue_peak_bytes" {
			peak = max(peak, sm.Value)
		}
	}
	xoffTime := telemetry.Sum(samples, "switch_pg_xoff_seconds_total")
	if float64(tot.PFCFrames) != pfcTx || float64(tot.Drops) != telemetry.Sum(samples, "switch_drop_packets_total") ||
		float64(tot.PeakQueue) != peak || tot.PeakQueue == 0 || tot.XOffTime <= 0 || math.Abs(tot.XOffTime.Seconds()-xoffTime) > 1e-12 {
		t.Errorf("Totals %+v; the samples say %v PFC frames, %v drops, peak queue %v B, %v s in XOFF",
			tot, pfcTx, telemetry.Sum(samples, "switch_drop_packets_total"), peak, xoffTime)
	}
	t.Logf("incast: %v PFC frames, %v XOFF, %d CE of %d, peak buffer %v B, done at %v",
		pfcTx, xoff, b.hosts[rcv].CE, b.hosts[rcv].Packets, telemetry.Sum(samples, "switch_buffer_peak_bytes"), b.e.Now())
}

func TestSimDeterministic(t *testing.T) {
	run := func() []string {
		b := newBench(t, "laptop", 42)
		for _, src := range b.nics {
			for _, dst := range b.nics {
				if src != dst {
					b.flow(src, dst, 20, uint16(1000+src.Node.Index*16+dst.Node.Index))
				}
			}
		}
		b.e.Run()
		var out []string
		for _, s := range telemetry.Gather(b.f) {
			out = append(out, fmt.Sprintf("%s %v", s, s.Value))
		}
		return append(out, b.e.Now().String())
	}
	if d := cmp.Diff(run(), run()); d != "" {
		t.Errorf("two runs with one seed differ:\n%s", d)
	}
}

func TestSimAttachErrors(t *testing.T) {
	topo := loadTopo(t, "laptop")
	f, err := BuildSim(sim.New(1), topo, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &testbench.Counter{}
	if _, err := f.Attach("host1", "gpu0", c); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ node, port, want string }{
		{"host1", "gpu0", "already attached"},
		{"nohost", "gpu0", "no node"},
		{"rtsw1", "p1", "is a switch"},
		{"host1", "gpu7", "no port"},
	} {
		if _, err := f.Attach(tt.node, tt.port, c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Attach(%s, %s) = %v, want %q", tt.node, tt.port, err, tt.want)
		}
	}
	if f.Switch("ctsw2") == nil || len(f.Switches()) != 5 {
		t.Errorf("switches: ctsw2 %v, %d in all", f.Switch("ctsw2"), len(f.Switches()))
	}
}

// TestSimUnattachedAndWrap: frames toward a NIC nobody attached drop as
// no_link, and Wrap sees both directions of every cable it is asked for.
func TestSimUnattachedAndWrap(t *testing.T) {
	topo := loadTopo(t, "laptop")
	e := sim.New(1)
	wrapped := map[string]int{}
	f, err := BuildSim(e, topo, SimOptions{Wrap: func(from *topologies.Port, s wire.Sink) wire.Sink {
		wrapped[from.Node.Name+":"+from.Name]++
		return s
	}})
	if err != nil {
		t.Fatal(err)
	}
	src, dst := topo.Node("host1").Port("gpu0"), topo.Node("host4").Port("gpu1")
	h := testbench.NewHost("h", e, src.Rate, nil)
	out, err := f.Attach("host1", "gpu0", h)
	if err != nil {
		t.Fatal(err)
	}
	h.SetOut(out)
	h.AddFlow(&testbench.Flow{Template: wire.Packet{
		Kind: wire.KindRoCE, Len: 1000, IPVersion: 4, SrcIP: src.Addr.Addr(), DstIP: dst.Addr.Addr(),
		DSCP: 26, TTL: 64, Protocol: 17, SrcPort: 1, DstPort: 4791,
	}, Count: 5, Priority: 3})
	e.RunFor(100 * clock.Microsecond)
	if got := f.Drops("no_link"); got != 5 {
		t.Errorf("no_link drops %d, want 5", got)
	}
	// 16 switch-to-switch cable ends, host1:gpu0 and the rtsw1 port facing it.
	if len(wrapped) != 16+2 || wrapped["host1:gpu0"] != 1 || wrapped["rtsw1:p1"] != 1 {
		t.Errorf("wrapped %v", wrapped)
	}
}

// TestSimInstalledFIB: the switches forward on exactly the computed
// routes: every flow hash lands in the route's port set, and the flows
// spread over all of it.
func TestSimInstalledFIB(t *testing.T) {
	topo := loadTopo(t, "laptop")
	f, err := BuildSim(sim.New(3), topo, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	routes := Routes(topo)
	src := topo.Node("host1").Port("gpu0").Addr.Addr()
	for _, n := range topo.Nodes {
		if n.Kind != topologies.KindSwitch {
			continue
		}
		sw := f.Switch(n.Name)
		for _, r := range routes[n.Name] {
			// A NIC's /31: its second address is the NIC's (the first is
			// the switch's own, delivered locally).
			dst := r.Prefix.Addr()
			if r.Prefix.Bits() < dst.BitLen() {
				dst = dst.Next()
			}
			hit := map[int]int{}
			for sport := range 256 {
				p := &wire.Packet{IPVersion: 4, SrcIP: src, DstIP: dst, Protocol: 17, SrcPort: uint16(sport), DstPort: 4791}
				out, err := sw.NextHop(p)
				if err != nil {
					t.Fatalf("%s: %v: %v", n.Name, r.Prefix, err)
				}
				hit[out]++
			}
			if len(hit) != len(r.Ports) {
				t.Errorf("%s → %v: flows used ports %v, route has %v", n.Name, r.Prefix, hit, r.Ports)
			}
			for _, p := range r.Ports {
				if hit[p] == 0 {
					t.Errorf("%s → %v: port %d never used (%v)", n.Name, r.Prefix, p, hit)
				}
			}
		}
	}
}
