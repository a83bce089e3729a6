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
