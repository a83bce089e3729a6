package switchmodel_test

import (
	"fmt"
	"net"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/ctlplane"
	"github.com/rocelab/rocelab/wire"
)

// A two-port switch as rsw1 of the laptop lab sees host1 (port 0, link
// 198.19.0.0/31) and st1 (port 1, link 198.19.0.8/31), with a loopback.
var (
	swMAC    = [2][6]byte{{2, 0, 0, 0, 9, 1}, {2, 0, 0, 0, 9, 2}}
	hostMAC  = net.HardwareAddr{2, 0, 0, 0, 1, 1}
	gw4      = netip.MustParseAddr("198.19.0.0")
	host4    = netip.MustParseAddr("198.19.0.1")
	toSt4    = netip.MustParseAddr("198.19.0.8")
	loop4    = netip.MustParseAddr("198.19.128.1")
	gw6      = netip.MustParseAddr("2001:2:0:1::")
	host6    = netip.MustParseAddr("2001:2:0:1::1")
	toSt6    = netip.MustParseAddr("2001:2:0:1::8")
	unicast6 = netip.MustParseAddr("fe80::1")
)

// recorder keeps what a port transmits.
type recorder struct{ got []*wire.Packet }

func (r *recorder) Receive(p *wire.Packet) { r.got = append(r.got, p) }

// newLocalSwitch builds the two-port switch with its control plane (none
// if bare), the connected routes of both links and its own addresses.
func newLocalSwitch(t *testing.T, bare bool) (*sim.Engine, *switchmodel.Switch, [2]*recorder) {
	t.Helper()
	e := sim.New(1)
	cp, err := ctlplane.New([]ctlplane.Port{
		{MAC: swMAC[0], Addrs: []netip.Addr{gw4, gw6}},
		{MAC: swMAC[1], Addrs: []netip.Addr{toSt4, toSt6}},
	}, loop4)
	if err != nil {
		t.Fatal(err)
	}
	opts := switchmodel.Options{Name: "rsw1", Config: switchmodel.DefaultConfig(), Sched: e, Rand: e.Rand("switch/rsw1"),
		Ports: []switchmodel.PortSpec{{Rate: g100, Delay: hop}, {Rate: g100, Delay: hop}}}
	if !bare {
		opts.Control = cp
	}
	sw, err := switchmodel.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var out [2]*recorder
	for i := range out {
		out[i] = &recorder{}
		sw.Attach(i, out[i])
	}
	for _, r := range []struct {
		pfx  string
		port int
	}{{"198.19.0.0/31", 0}, {"198.19.0.8/31", 1}, {"2001:2:0:1::/127", 0}, {"2001:2:0:1::8/127", 1}} {
		if err := sw.AddRoute(netip.MustParsePrefix(r.pfx), r.port); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.AddLocal(cp.Addrs()...); err != nil {
		t.Fatal(err)
	}
	return e, sw, out
}

// frame serializes ls behind an Ethernet header from the host to port 0,
// and decodes it into a descriptor.
func frame(t *testing.T, et layers.EthernetType, ls ...gopacket.SerializableLayer) *wire.Packet {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	eth := &layers.Ethernet{SrcMAC: hostMAC, DstMAC: net.HardwareAddr(swMAC[0][:]), EthernetType: et}
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, append([]gopacket.SerializableLayer{eth}, ls...)...); err != nil {
		t.Fatal(err)
	}
	p := &wire.Packet{}
	if err := p.Decode(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return p
}

func ip4(src, dst netip.Addr, proto layers.IPProtocol) *layers.IPv4 {
	return &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: proto, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
}

func ip6(src, dst netip.Addr, hops uint8) *layers.IPv6 {
	return &layers.IPv6{Version: 6, HopLimit: hops, NextHeader: layers.IPProtocolICMPv6, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
}

// icmp6 returns an ICMPv6 header of type typ over ip (for its checksum).
func icmp6(t *testing.T, ip *layers.IPv6, typ uint8) *layers.ICMPv6 {
	t.Helper()
	c := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(typ, 0)}
	if err := c.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	return c
}

// reply is what a test expects to leave a port, in the words of the
// packet's decoded summary.
type reply struct {
	Port     int
	What     string // "echo4", "echo6", "arp", "na"
	Src, Dst netip.Addr
	MAC      string // ARP sender / NA target link-layer address
}

// summarize describes a transmitted frame as a reply.
func summarize(t *testing.T, port int, p *wire.Packet) reply {
	t.Helper()
	pkt := gopacket.NewPacket(p.Raw[:p.Len], layers.LayerTypeEthernet, gopacket.Default)
	if el := pkt.ErrorLayer(); el != nil {
		t.Fatalf("port %d sent an undecodable frame: %v", port, el.Error())
	}
	r := reply{Port: port, Src: p.SrcIP, Dst: p.DstIP}
	switch {
	case pkt.Layer(layers.LayerTypeARP) != nil:
		a := pkt.Layer(layers.LayerTypeARP).(*layers.ARP)
		r.What, r.MAC = "arp", net.HardwareAddr(a.SourceHwAddress).String()
		r.Src, _ = netip.AddrFromSlice(a.SourceProtAddress)
		r.Dst, _ = netip.AddrFromSlice(a.DstProtAddress)
		if a.Operation != layers.ARPReply {
			r.What = "arp?"
		}
	case pkt.Layer(layers.LayerTypeICMPv4) != nil:
		c := pkt.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4)
		r.What = "icmp4 " + c.TypeCode.String()
		if c.TypeCode.Type() == layers.ICMPv4TypeEchoReply && c.Id == 7 && c.Seq == 3 && string(c.Payload) == "ping" {
			r.What = "echo4"
		}
	case pkt.Layer(layers.LayerTypeICMPv6Echo) != nil:
		c := pkt.Layer(layers.LayerTypeICMPv6).(*layers.ICMPv6)
		e := pkt.Layer(layers.LayerTypeICMPv6Echo).(*layers.ICMPv6Echo)
		data := c.Payload[4:] // gopacket's ICMPv6Echo keeps none
		r.What = fmt.Sprintf("icmp6 %v %d %d %q", c.TypeCode, e.Identifier, e.SeqNumber, data)
		if c.TypeCode.Type() == layers.ICMPv6TypeEchoReply && e.Identifier == 7 && e.SeqNumber == 3 && string(data) == "ping" {
			r.What = "echo6"
		}
	case pkt.Layer(layers.LayerTypeICMPv6NeighborAdvertisement) != nil:
		na := pkt.Layer(layers.LayerTypeICMPv6NeighborAdvertisement).(*layers.ICMPv6NeighborAdvertisement)
		r.What = "na"
		if !na.Solicited() || !na.Router() {
			r.What = "na?"
		}
		for _, o := range na.Options {
			if o.Type == layers.ICMPv6OptTargetAddress {
				r.MAC = net.HardwareAddr(o.Data).String()
			}
		}
	default:
		r.What = "other"
	}
	return r
}

// TestLocalDelivery sends packets addressed to the switch into port 0:
// echo requests and ARP / neighbour solicitations are answered out of
// port 0 (toward the asker), and nothing addressed to the switch is
// forwarded (before, a request to the port address toward st1 went out
// of port 1, whose /31 covers it).
func TestLocalDelivery(t *testing.T) {
	echoReq4 := func(dst netip.Addr) func(t *testing.T) *wire.Packet {
		return func(t *testing.T) *wire.Packet {
			return frame(t, layers.EthernetTypeIPv4, ip4(host4, dst, layers.IPProtocolICMPv4),
				&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeEchoRequest, 0), Id: 7, Seq: 3}, gopacket.Payload("ping"))
		}
	}
	echoReq6 := func(dst netip.Addr) func(t *testing.T) *wire.Packet {
		return func(t *testing.T) *wire.Packet {
			ip := ip6(host6, dst, 64)
			return frame(t, layers.EthernetTypeIPv6, ip, icmp6(t, ip, layers.ICMPv6TypeEchoRequest),
				&layers.ICMPv6Echo{Identifier: 7, SeqNumber: 3}, gopacket.Payload("ping"))
		}
	}
	arpReq := func(target netip.Addr) func(t *testing.T) *wire.Packet {
		return func(t *testing.T) *wire.Packet {
			return frame(t, layers.EthernetTypeARP, &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
				HwAddressSize: 6, ProtAddressSize: 4, Operation: layers.ARPRequest,
				SourceHwAddress: hostMAC, SourceProtAddress: host4.AsSlice(), DstHwAddress: make([]byte, 6), DstProtAddress: target.AsSlice()})
		}
	}
	nsReq := func(target netip.Addr) func(t *testing.T) *wire.Packet {
		return func(t *testing.T) *wire.Packet {
			b := target.As16()
			sol := netip.AddrFrom16([16]byte{0xff, 2, 10: 0, 11: 1, 12: 0xff, 13: b[13], 14: b[14], 15: b[15]})
			ip := ip6(unicast6, sol, 255)
			return frame(t, layers.EthernetTypeIPv6, ip, icmp6(t, ip, layers.ICMPv6TypeNeighborSolicitation),
				&layers.ICMPv6NeighborSolicitation{TargetAddress: target.AsSlice(), Options: layers.ICMPv6Options{{Type: layers.ICMPv6OptSourceAddress, Data: hostMAC}}})
		}
	}
	udp := func(t *testing.T) *wire.Packet {
		ip := ip4(host4, gw4, layers.IPProtocolUDP)
		u := &layers.UDP{SrcPort: 5000, DstPort: 6000}
		if err := u.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
		return frame(t, layers.EthernetTypeIPv4, ip, u, gopacket.Payload("x"))
	}
	bytesless := func(*testing.T) *wire.Packet { // the simulator's descriptor
		return &wire.Packet{Len: 100, Kind: wire.KindIP, IPVersion: 4, TTL: 64, Protocol: 1, SrcIP: host4, DstIP: toSt4, EtherType: wire.EtherTypeIPv4}
	}
	swMAC0 := net.HardwareAddr(swMAC[0][:]).String()
	tests := []struct {
		name     string
		bare     bool // no control plane
		in       func(t *testing.T) *wire.Packet
		want     []reply
		toSwitch int64
	}{
		{name: "echo to the gateway", in: echoReq4(gw4), want: []reply{{Port: 0, What: "echo4", Src: gw4, Dst: host4}}},
		{name: "echo to the port toward st1", in: echoReq4(toSt4), want: []reply{{Port: 0, What: "echo4", Src: toSt4, Dst: host4}}},
		{name: "echo to the loopback", in: echoReq4(loop4), want: []reply{{Port: 0, What: "echo4", Src: loop4, Dst: host4}}},
		{name: "echo6 to the port toward st1", in: echoReq6(toSt6), want: []reply{{Port: 0, What: "echo6", Src: toSt6, Dst: host6}}},
		{name: "ARP for the gateway", in: arpReq(gw4), want: []reply{{Port: 0, What: "arp", Src: gw4, Dst: host4, MAC: swMAC0}}},
		{name: "ARP for another port's address", in: arpReq(toSt4), toSwitch: 1},
		{name: "neighbour solicitation", in: nsReq(gw6), want: []reply{{Port: 0, What: "na", Src: gw6, Dst: unicast6, MAC: swMAC0}}},
		{name: "UDP to the switch", in: udp, toSwitch: 1},
		{name: "no bytes (simulator)", in: bytesless, toSwitch: 1},
		{name: "no control plane", bare: true, in: echoReq4(toSt4), toSwitch: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, sw, out := newLocalSwitch(t, tt.bare)
			sw.Port(0).Receive(tt.in(t))
			e.Run()
			var got []reply
			for i, r := range out {
				for _, p := range r.got {
					got = append(got, summarize(t, i, p))
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("sent (-want +got):\n%s", diff)
			}
			if n := sw.Drops("to_switch"); n != tt.toSwitch {
				t.Errorf("to_switch drops %d, want %d", n, tt.toSwitch)
			}
			if n := sw.Port(0).Stats().Replies; n != int64(len(tt.want)) {
				t.Errorf("port 0 replies %d, want %d", n, len(tt.want))
			}
		})
	}
}
