package compliance

import (
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
	"github.com/rocelab/rocelab/wire/metaroce"
)

// isMeta reports whether in carries a MetaRoCE opcode.
func isMeta(in *In) bool { return in.P.Kind == wire.KindRoCE && in.P.Opcode >= 0xC0 }

var negCases = []Case{
	{ID: "neg/hello", Mode: endpoint.ModeMetaRoCE, Title: "HELLO at RTS, its fields, the send queue held until HELLO-ACK, then MetaRoCE",
		Cites: []string{"MR-1.2", "MR-1.4", "MR-2.7", "MR-3.2", "MR-3.3"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, Silent: true})
			h := c.Hello
			c.checkCommon(h)
			if h.P.DSCP != 48 || h.P.ECN != wire.ECNNotECT {
				t.Errorf("HELLO DSCP %d ECN %d, want 48 Not-ECT", h.P.DSCP, h.P.ECN)
			}
			var hl metaroce.Hello
			if err := metaroce.DecodeHello(h.P.Payload(), &hl); err != nil {
				t.Fatalf("HELLO payload: %v", err)
			}
			if hl.Version != 1 || hl.Caps&metaroce.CapMetaRoCE == 0 || hl.Paths != 1 || h.P.PSN != c.RPSN {
				t.Errorf("HELLO version %d caps %#x paths %d PSN %#x, want 1, METAROCE, 1, %#x", hl.Version, hl.Caps, hl.Paths, h.P.PSN, c.RPSN)
			}
			if h.P.SrcPort < 0xC000 {
				t.Errorf("HELLO from UDP port %#x, want 0xC000–0xFFFF", h.P.SrcPort)
			}
			c.Post(WR{WRID: 1, Op: "write", Len: 100, RemoteAddr: 0x100, RKey: 1})
			for _, in := range t.Collect(100 * us) {
				if IsRequest(in) {
					t.Fatalf("request opcode %#x sent before the negotiation concluded", in.P.Opcode)
				}
			}
			c.SendHello(metaroce.OpHelloAck)
			r := c.requests(1, 50*us)[0]
			if wire.Opcode(r.P.Opcode) != metaroce.OpDataBase|wire.OpWriteOnly {
				t.Errorf("after HELLO-ACK the WRITE went as opcode %#x, want MetaRoCE DATA 0xea", r.P.Opcode)
			}
			if r.P.SrcPort != h.P.SrcPort {
				t.Errorf("data on port %#x, HELLO on %#x: a one-path QP has one port", r.P.SrcPort, h.P.SrcPort)
			}
		}},
	{ID: "neg/peer-hello", Mode: endpoint.ModeMetaRoCE, Title: "a HELLO from the peer is answered by HELLO-ACK and switches to MetaRoCE",
		Cites: []string{"MR-1.2", "MR-3.3"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, Silent: true})
			c.SendHello(metaroce.OpHello)
			a, _ := t.Expect(50*us, "HELLO-ACK", IsOp(metaroce.OpHelloAck))
			if a.P.DSCP != 48 {
				t.Errorf("HELLO-ACK DSCP %d, want 48", a.P.DSCP)
			}
			c.Post(WR{WRID: 1, Op: "write", Len: 100, RemoteAddr: 0x100, RKey: 1})
			if r := c.requests(1, 50*us)[0]; !isMeta(r) {
				t.Errorf("after the peer's HELLO the WRITE went as opcode %#x, want MetaRoCE DATA", r.P.Opcode)
			}
		}},
	{ID: "neg/fallback", Timeouts: true, Mode: endpoint.ModeMetaRoCE, Title: "four unanswered HELLOs, one per timeout, then RoCEv2",
		Cites: []string{"MR-2.1", "MR-3.4"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, Silent: true})
			c.Post(WR{WRID: 1, Op: "write", Len: 100, RemoteAddr: 0x100, RKey: 1})
			hellos := []*In{c.Hello}
			var req *In
			for _, in := range t.Collect(1500 * us) {
				switch {
				case IsOp(metaroce.OpHello)(in):
					hellos = append(hellos, in)
				case isMeta(in):
					t.Errorf("MetaRoCE opcode %#x without agreement", in.P.Opcode)
				case IsRequest(in) && req == nil:
					req = in
				}
			}
			if len(hellos) != 4 {
				t.Errorf("%d HELLOs, want 4", len(hellos))
			}
			for i := 1; i < len(hellos); i++ {
				if gap := hellos[i].At.Sub(hellos[i-1].At); gap < 150*us-t.Jitter() || gap > 300*us+t.Jitter() {
					t.Errorf("HELLO %d came %v after the previous, want one QP timeout (200us)", i+1, gap)
				}
			}
			if req == nil {
				t.Fatalf("no request after the fallback")
			}
			if req.P.Opcode != uint8(wire.OpWriteOnly) {
				t.Errorf("after the fallback the WRITE went as opcode %#x, want RC WRITE Only 0x0a", req.P.Opcode)
			}
		}},
	{ID: "neg/rocev2-ignores-hello", Mode: endpoint.ModeRoCEv2, Title: "a RoCEv2 QP sends no HELLO, ignores one, and speaks RC",
		Cites: []string{"MR-2.1", "MR-3.5"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeRoCEv2})
			c.SendHello(metaroce.OpHello)
			c.Post(WR{WRID: 1, Op: "write", Len: 100, RemoteAddr: 0x100, RKey: 1})
			for _, in := range t.Collect(100 * us) {
				if isMeta(in) {
					t.Errorf("RoCEv2 QP sent MetaRoCE opcode %#x", in.P.Opcode)
				} else if IsRequest(in) && in.P.Opcode != uint8(wire.OpWriteOnly) {
					t.Errorf("WRITE went as opcode %#x", in.P.Opcode)
				}
			}
		}},
	{ID: "neg/no-offer", Timeouts: true, Mode: endpoint.ModeMetaRoCE, Title: "a MetaRoCE QP whose peer offers no METAROCE starts in RoCEv2 at once",
		Cites: []string{"MR-2.1", "MR-3.5"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, NoOffer: true})
			c.Post(WR{WRID: 1, Op: "write", Len: 100, RemoteAddr: 0x100, RKey: 1})
			r := c.requests(1, 50*us)[0]
			if r.P.Opcode != uint8(wire.OpWriteOnly) {
				t.Errorf("WRITE went as opcode %#x, want 0x0a", r.P.Opcode)
			}
			for _, in := range t.Collect(300 * us) {
				if isMeta(in) {
					t.Errorf("MetaRoCE opcode %#x to a peer that offered none", in.P.Opcode)
				}
			}
		}},
}
