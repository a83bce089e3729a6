package faults

import (
	"testing"

	"github.com/rocelab/rocelab/wire"
)

// checkRaw decodes p.Raw and checks that it agrees with the descriptor's
// DSCP and ECN, that the ICRC and the IPv4 header checksum are valid.
func checkRaw(t *testing.T, p *wire.Packet) {
	t.Helper()
	var d wire.Packet
	if err := d.Decode(p.Raw); err != nil {
		t.Fatal(err)
	}
	if d.DSCP != p.DSCP || d.ECN != p.ECN {
		t.Errorf("bytes say DSCP %d ECN %d, descriptor %d %d", d.DSCP, d.ECN, p.DSCP, p.ECN)
	}
	if err := wire.VerifyICRC(p.Raw); err != nil {
		t.Errorf("ICRC: %v", err)
	}
	if d.IPVersion == 4 {
		ihl := int(p.Raw[d.L3Offset]&0x0F) * 4
		if s := ipChecksum(p.Raw[d.L3Offset : int(d.L3Offset)+ihl]); s != 0 {
			t.Errorf("IPv4 header checksum invalid (sum %#x)", s)
		}
	}
}

// TestECNOffAndDSCPMap: ecn-off rewrites ECT(0) and CE to Not-ECT, and
// dscp-map 26:0 rewrites DSCP 26 keeping ECN, in the descriptor and the
// bytes (IPv4 checksum and ICRC stay valid); other packets pass as they
// were.
func TestECNOffAndDSCPMap(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		var rec recorder
		ecn := NewECNOff()
		dscp := NewDSCPRewrite(NewDSCPMap([2]uint8{26, 0}))
		ecn.SetNext(dscp)
		dscp.SetNext(&rec)
		a := rawRoCE(t, 1, v6, 256)
		b := rawRoCE(t, 2, v6, 256)
		b.MarkCE()
		c := rawRoCE(t, 3, v6, 256)
		setTOS(c, 48, wire.ECNNotECT)
		for _, p := range []*wire.Packet{a, b, c} {
			ecn.Receive(p)
		}
		want := [][2]uint8{{0, 0}, {0, 0}, {48, 0}}
		for i, p := range rec.pkts {
			if got := [2]uint8{p.DSCP, p.ECN}; got != want[i] {
				t.Errorf("v6 %v packet %d: DSCP/ECN %v, want %v", v6, i, got, want[i])
			}
			checkRaw(t, p)
		}
		if ecn.Stats().Rewritten != 2 || dscp.Stats().Rewritten != 2 {
			t.Errorf("rewritten %d, %d; want 2, 2", ecn.Stats().Rewritten, dscp.Stats().Rewritten)
		}
	}
}

// TestPFCOff: pfc-off prio 3 drops a PFC frame that pauses only 3 and
// strips 3 from one that also pauses 4 (bytes included).
func TestPFCOff(t *testing.T) {
	var rec recorder
	r := NewPFCOff(PFCOff{Prio: 3})
	r.SetNext(&rec)
	mk := func(ce uint8) *wire.Packet {
		spec := &wire.Packet{Kind: wire.KindPFC, ClassEnable: ce}
		for i := range 8 {
			if ce&(1<<i) != 0 {
				spec.Quanta[i] = 0xFFFF
			}
		}
		raw, err := wire.BuildFrame(spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		var p wire.Packet
		if err := p.Decode(raw); err != nil {
			t.Fatal(err)
		}
		p.Raw = raw
		return &p
	}
	r.Receive(mk(1 << 3))
	r.Receive(mk(1<<3 | 1<<4))
	r.Receive(roce(7))
	if len(rec.pkts) != 2 || r.Stats().Dropped != 1 || r.Stats().Rewritten != 1 {
		t.Fatalf("delivered %d, counters %+v", len(rec.pkts), r.Stats())
	}
	var d wire.Packet
	if err := d.Decode(rec.pkts[0].Raw); err != nil {
		t.Fatal(err)
	}
	want := [8]uint16{4: 0xFFFF}
	if d.ClassEnable != 1<<4 || d.Quanta != want || rec.pkts[0].ClassEnable != 1<<4 {
		t.Errorf("rewritten frame: CE %#x quanta %v", d.ClassEnable, d.Quanta)
	}
}
