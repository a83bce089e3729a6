package compliance

import (
	"bytes"
	"slices"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
)

// wrapCases make the IUT cross the PSN wrap (0xFFFFFF → 0) where its
// arithmetic could go wrong: as requester (ACKs, NAKs, SACKs and the
// retransmissions they ask for) and as responder off the in-order path
// (a gap and a duplicate that straddle the wrap). MR-1.7 asks for the
// wrap "at both requester and responder"; wire/psn-wrap covers the
// responder's in-order path.
var wrapCases = []Case{
	{ID: "wrap/requester-nak", Mode: endpoint.ModeRoCEv2, Title: "IUT requester across the wrap: a NAK after it goes back to its PSN, in order",
		Cites: []string{"MR-1.7", "MR-4.7"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{MTU: 1024, IUTPSN: 0xFFFFFD, HasIUTPSN: true})
			p := func(i int) uint32 { return psnAdd(c.RPSN, i) }
			c.Post(WR{WRID: 1, Op: "write", Len: 8 * 1024, RemoteAddr: 0x1000, RKey: 3})
			sent := c.requests(8, 50*us)
			for i, in := range sent {
				if in.P.PSN != p(i) {
					t.Fatalf("packet %d has PSN %#x, want %#x (0xfffffd counting up through 0)", i, in.P.PSN, p(i))
				}
			}
			c.Ack(p(4), wire.SyndromeNAKPSNSequence) // PSN 0x000001, past the wrap
			got := c.requests(4, 100*us)
			for i, in := range got {
				if in.P.PSN != p(4+i) {
					t.Fatalf("resend %d has PSN %#x, want %#x (go back to the NAK's PSN across the wrap)", i, in.P.PSN, p(4+i))
				}
			}
			c.Ack(p(7), wire.SyndromeACK(0x1F))
			if wc, _ := c.WaitCompletion(20 * us); wc == nil || wc.Status != "success" || wc.WRID != 1 {
				t.Errorf("completion %+v, want wr 1 success", wc)
			}
		}},
	{ID: "wrap/requester-ack", Mode: endpoint.ModeRoCEv2, Title: "IUT requester across the wrap: one ACK past it completes the messages on both sides",
		Cites: []string{"MR-1.7", "MR-4.4"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{MTU: 1024, IUTPSN: 0xFFFFFE, HasIUTPSN: true})
			c.Post(WR{WRID: 1, Op: "write", Len: 2048, RemoteAddr: 0x1000, RKey: 3})
			c.Post(WR{WRID: 2, Op: "write", Len: 2048, RemoteAddr: 0x2000, RKey: 3})
			c.requests(4, 50*us) // 0xfffffe, 0xffffff | 0x0, 0x1
			c.Ack(psnAdd(c.RPSN, 3), wire.SyndromeACK(0x1F))
			var ids []uint64
			end := t.Now().Add(20*us + t.Jitter())
			for len(ids) < 2 && t.Now() < end {
				for _, wc := range c.Poll() {
					if wc.Status != "success" {
						t.Fatalf("completion %+v after an ACK of PSN %#x, want success", wc, psnAdd(c.RPSN, 3))
					}
					ids = append(ids, wc.WRID)
				}
				for _, in := range t.Collect(2 * us) {
					if IsRequest(in) {
						t.Errorf("a retransmission (PSN %#x) after the ACK that covered it", in.P.PSN)
					}
				}
			}
			if !slices.Equal(ids, []uint64{1, 2}) {
				t.Errorf("completions %v after one ACK of PSN %#x, want 1 then 2", ids, psnAdd(c.RPSN, 3))
			}
		}},
	{ID: "wrap/requester-sack", Mode: endpoint.ModeMetaRoCE, Title: "IUT requester across the wrap: a SACK past it resends only its hole",
		Cites: []string{"MR-1.7", "MR-4.9", "MR-4.10"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, MTU: 1024, IUTPSN: 0xFFFFFD, HasIUTPSN: true})
			c.Post(WR{WRID: 1, Op: "write", Len: 8 * 1024, RemoteAddr: 0x1000, RKey: 3})
			c.requests(8, 50*us)
			p := func(i int) uint32 { return psnAdd(c.RPSN, i) }
			// Received up to 0 (past the wrap), PSN 1 missing, 2 … 4 received.
			c.SACK(p(3), p(7), 0, p(5), p(6), p(7))
			c.onlyHoleResent(p(4), p(7))
		}},
	{ID: "wrap/responder-gap", Mode: endpoint.ModeRoCEv2, Title: "IUT responder across the wrap: a gap at 0xffffff is NAKed, a duplicate re-ACKed",
		Cites: []string{"MR-1.7", "MR-5.6", "MR-5.7"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{PSN: 0xFFFFFE, HasPSN: true})
			a, k := c.QP.Buf.Addr, c.QP.Buf.RKey
			c.Write(0xFFFFFE, a, k, pattern(64, 1), true)
			c.ack(30 * us)
			// PSN 0 arrives while 0xffffff is expected: out of sequence.
			c.Write(0, a+128, k, pattern(64, 3), true)
			c.expectNAK(wire.SyndromeNAKPSNSequence, 0xFFFFFF, "PSN 0 while 0xffffff is expected")
			if bytes.Equal(c.Mem(128, 64), pattern(64, 3)) {
				t.Errorf("the out-of-sequence WRITE past the wrap was placed")
			}
			c.Write(0xFFFFFF, a+64, k, pattern(64, 2), false)
			c.Write(0, a+128, k, pattern(64, 3), true)
			if a := c.ack(30 * us); a.P.Syndrome != 0x1F || a.P.PSN != 0 {
				t.Fatalf("after 0xffffff and 0: %s PSN %#x, want ACK PSN 0", wire.SyndromeString(a.P.Syndrome), a.P.PSN)
			}
			// 0xffffff again, now before ePSN 1: a duplicate.
			c.Write(0xFFFFFF, a+64, k, pattern(64, 9), false)
			as := c.acks(t.Settle(30 * us))
			if len(as) != 1 || as[0].P.Syndrome != 0x1F || as[0].P.PSN != 0 {
				t.Errorf("a duplicate across the wrap got %s, want one ACK of ePSN-1 (0)", describe(as))
			}
			if !bytes.Equal(c.Mem(64, 64), pattern(64, 2)) {
				t.Errorf("the duplicate WRITE was executed again")
			}
		}},
	{ID: "wrap/responder-meta", Mode: endpoint.ModeMetaRoCE, Title: "IUT MetaRoCE responder across the wrap: out-of-order DATA placed, SACK names the hole",
		Cites: []string{"MR-1.7", "MR-2.5", "MR-5.11"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{Mode: endpoint.ModeMetaRoCE, PSN: 0xFFFFFE, HasPSN: true})
			c.MetaWrite(0xFFFFFE, c.QP.Buf.Addr, pattern(64, 1), true)
			c.sack("first")
			// 0xffffff is lost; 0 and 1 arrive.
			c.MetaWrite(0, c.QP.Buf.Addr+128, pattern(64, 3), false)
			c.MetaWrite(1, c.QP.Buf.Addr+192, pattern(64, 4), true)
			ss := c.sacks(t.Settle(30 * us))
			if len(ss) == 0 {
				t.Fatalf("no SACK for DATA past the hole")
			}
			in := ss[len(ss)-1]
			s := t.SACKOf(in)
			if in.P.PSN != 0xFFFFFE || !slices.Equal(bitmapPSNs(in.P.PSN, &s), []uint32{0, 1}) {
				t.Errorf("SACK C=%#x bitmap %x, want C=0xfffffe and 0, 1 received past the hole at 0xffffff", in.P.PSN, bitmapPSNs(in.P.PSN, &s))
			}
			if !bytes.Equal(c.Mem(192, 64), pattern(64, 4)) {
				t.Errorf("DATA past the hole and the wrap was not placed on arrival")
			}
			c.MetaWrite(0xFFFFFF, c.QP.Buf.Addr+64, pattern(64, 2), true)
			if in, _ := c.sack("hole filled"); in == nil || in.P.PSN != 1 {
				t.Errorf("after the hole was filled: SACK C=%#x, want 0x1", in.P.PSN)
			}
		}},
}
