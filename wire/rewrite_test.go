package wire_test

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/wire"
)

func build(t *testing.T, src, dst string, vlan bool) []byte {
	t.Helper()
	p := wire.Packet{
		Kind: wire.KindRoCE, SrcIP: netip.MustParseAddr(src), DstIP: netip.MustParseAddr(dst),
		DSCP: 26, ECN: wire.ECNECT0, TTL: 64, SrcPort: 0xC001, Opcode: uint8(wire.OpSendOnly),
		DestQP: 9, PSN: 77, HasVLAN: vlan, VLANID: 10, PCP: 3,
	}
	f, err := wire.BuildFrame(&p, make([]byte, 256))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRewrite: the raw-byte rewriters make the bytes decode to what the model
// set in the descriptor, keep the IPv4 checksum valid, and (except after
// trimming) the ICRC too.
func TestRewrite(t *testing.T) {
	for _, c := range []struct {
		name, src, dst string
		vlan           bool
	}{
		{"ipv4", "10.0.0.1", "10.0.1.1", false},
		{"ipv4-vlan", "10.0.0.1", "10.0.1.1", true},
		{"ipv6", "fd00::1", "fd00:1::1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := build(t, c.src, c.dst, c.vlan)
			var p wire.Packet
			if err := p.Decode(f); err != nil {
				t.Fatal(err)
			}
			p.ECN = wire.ECNCE
			p.WriteTOS()
			p.TTL--
			p.WriteTTL()
			var q wire.Packet
			if err := q.Decode(f); err != nil {
				t.Fatal(err)
			}
			if q.ECN != wire.ECNCE || q.TTL != 63 || q.DSCP != 26 {
				t.Errorf("after WriteTOS+WriteTTL: ECN %d TTL %d DSCP %d", q.ECN, q.TTL, q.DSCP)
			}
			if err := q.VerifyICRC(); err != nil {
				t.Errorf("ICRC: %v", err)
			}
			checkIPv4(t, &q)

			p.Len, p.DSCP = 80, 63
			p.WriteTrim()
			if len(p.Raw) != 80 {
				t.Fatalf("trimmed Raw is %d bytes, want 80", len(p.Raw))
			}
			if err := q.Decode(p.Raw); err != nil {
				t.Fatalf("decode trimmed: %v", err)
			}
			if q.DSCP != 63 || q.ECN != wire.ECNCE || q.Len != 80 {
				t.Errorf("trimmed: DSCP %d ECN %d Len %d", q.DSCP, q.ECN, q.Len)
			}
			if got := binary.BigEndian.Uint16(p.Raw[q.L4Offset+4:]); int(got) != 80-int(q.L4Offset) {
				t.Errorf("UDP length %d, want %d", got, 80-q.L4Offset)
			}
			checkIPv4(t, &q)
		})
	}
}

func checkIPv4(t *testing.T, p *wire.Packet) {
	t.Helper()
	if p.IPVersion != 4 {
		return
	}
	h := p.Raw[p.L3Offset:]
	if got := int(binary.BigEndian.Uint16(h[2:])); got != p.Len-int(p.L3Offset) {
		t.Errorf("IPv4 total length %d, want %d", got, p.Len-int(p.L3Offset))
	}
	if !wire.IPv4ChecksumOK(h) {
		t.Error("IPv4 header checksum broken")
	}
}

func TestIPv4ChecksumOK(t *testing.T) {
	f := build(t, "10.0.0.1", "10.0.1.1", false)
	var p wire.Packet
	if err := p.Decode(f); err != nil {
		t.Fatal(err)
	}
	h := f[p.L3Offset:]
	bad := append([]byte(nil), h...)
	bad[8]-- // the TTL, without the checksum update
	for _, c := range []struct {
		name string
		h    []byte
		want bool
	}{{"built", h, true}, {"ttl changed", bad, false}, {"short", h[:12], false}, {"the header alone", h[:20:20], true}} {
		if got := wire.IPv4ChecksumOK(c.h); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
