package ctlplane

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/rocelab/rocelab/wire"
)

// TestNew: the switch's addresses are its loopbacks then its ports', each
// once; an invalid one is an error naming its port.
func TestNew(t *testing.T) {
	a := netip.MustParseAddr
	for _, tc := range []struct {
		name      string
		ports     []Port
		loopbacks []netip.Addr
		want      []netip.Addr
		err       string
	}{
		{name: "loopbacks first", ports: []Port{{Addrs: []netip.Addr{a("10.0.0.0"), a("2001:2::")}}}, loopbacks: []netip.Addr{a("10.9.0.1")},
			want: []netip.Addr{a("10.9.0.1"), a("10.0.0.0"), a("2001:2::")}},
		{name: "4-in-6 unmapped, once", ports: []Port{{Addrs: []netip.Addr{a("::ffff:10.0.0.0")}}, {Addrs: []netip.Addr{a("10.0.0.0")}}},
			want: []netip.Addr{a("10.0.0.0")}},
		{name: "invalid", ports: []Port{{}, {Addrs: []netip.Addr{{}}}}, err: "port 1: control plane: invalid address"},
	} {
		c, err := New(tc.ports, tc.loopbacks...)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := c.Addrs(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Addrs %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAnswerNothing: no reply without bytes (the simulator's descriptors),
// for a port out of range, or for a frame that asks nothing.
func TestAnswerNothing(t *testing.T) {
	c, err := New([]Port{{Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.0")}}})
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 60)
	for _, tc := range []struct {
		name string
		port int
		p    *wire.Packet
	}{
		{"no bytes", 0, &wire.Packet{Len: 100, IPVersion: 4, DstIP: netip.MustParseAddr("10.0.0.0")}},
		{"port out of range", 1, &wire.Packet{Len: 60, Raw: junk}},
		{"not ARP or IP", 0, &wire.Packet{Len: 60, Raw: junk}},
		{"Len past the bytes", 0, &wire.Packet{Len: 61, Raw: junk}},
	} {
		if r := c.Answer(tc.port, tc.p); r != nil {
			t.Errorf("%s: reply %+v, want none", tc.name, r)
		}
	}
}

// TestChecksums: the echo replies' checksums verify (IPv4 header, ICMP,
// ICMPv6 over its pseudo-header), their payload is the request's, and a
// VLAN tag comes back.
func TestChecksums(t *testing.T) {
	sw4, sw6 := netip.MustParseAddr("10.0.0.0"), netip.MustParseAddr("2001:2::")
	host4, host6 := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("2001:2::1")
	c, err := New([]Port{{MAC: [6]byte{2, 0, 0, 0, 0, 9}, Addrs: []netip.Addr{sw4, sw6}}})
	if err != nil {
		t.Fatal(err)
	}
	eth := func(etherType uint16, tagged bool) []byte {
		b := []byte{2, 0, 0, 0, 0, 9, 2, 0, 0, 0, 0, 1}
		if tagged {
			b = append(b, 0x81, 0, 0x60, 0x05)
		}
		return append(b, byte(etherType>>8), byte(etherType))
	}
	payload := []byte("rocelab ping data")
	// IPv4 echo request, checksums left zero: the plane does not check them.
	icmp := append([]byte{icmpEchoRequest, 0, 0, 0, 0x12, 0x34, 0, 7}, payload...)
	ip := []byte{0x45, 0, 0, byte(20 + len(icmp)), 0, 1, 0, 0, 64, protoICMP, 0, 0}
	ip = append(append(append(ip, host4.AsSlice()...), sw4.AsSlice()...), icmp...)
	v6icmp := append([]byte{icmp6EchoRequest, 0, 0, 0, 0x12, 0x34, 0, 7}, payload...)
	ip6 := []byte{0x60, 0, 0, 0, 0, byte(len(v6icmp)), protoICMPv6, 64}
	ip6 = append(append(append(ip6, host6.AsSlice()...), sw6.AsSlice()...), v6icmp...)
	for _, tc := range []struct {
		name  string
		frame []byte
		v6    bool
	}{
		{"ipv4", append(eth(etherIPv4, false), ip...), false},
		{"ipv4 tagged", append(eth(etherIPv4, true), ip...), false},
		{"ipv6", append(eth(etherIPv6, false), ip6...), true},
	} {
		var p wire.Packet
		if err := p.Decode(tc.frame); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		r := c.Answer(0, &p)
		if r == nil {
			t.Fatalf("%s: no reply", tc.name)
		}
		f, ok := parseFrame(r.Raw[:r.Len])
		if !ok || (f.tag != nil) != (tc.name == "ipv4 tagged") {
			t.Fatalf("%s: reply frame %x", tc.name, r.Raw[:r.Len])
		}
		b := f.payload
		if !tc.v6 {
			if checksum(0, b[:20]) != 0 || checksum(0, b[20:]) != 0 || b[20] != icmpEchoReply {
				t.Errorf("%s: IPv4 header or ICMP checksum does not verify, or type %d: %x", tc.name, b[20], b)
			}
			if !slices.Equal(b[28:], payload) {
				t.Errorf("%s: payload %q", tc.name, b[28:])
			}
			continue
		}
		n := int(be16(b[4:]))
		pseudo := append(append([]byte{}, b[8:40]...), 0, 0, byte(n>>8), byte(n), 0, 0, 0, protoICMPv6)
		if checksum(sum(0, pseudo), b[40:40+n]) != 0 || b[40] != icmp6EchoReply || !slices.Equal(b[48:40+n], payload) {
			t.Errorf("%s: ICMPv6 checksum does not verify, type %d or payload %q", tc.name, b[40], b[48:40+n])
		}
	}
}
