package compliance

import (
	"bytes"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
)

// cnps returns the CNPs among ins.
func cnps(ins []*In) []*In {
	var out []*In
	for _, in := range ins {
		if in.P.Kind == wire.KindCNP {
			out = append(out, in)
		}
	}
	return out
}

var ecnCases = []Case{
	{ID: "ecn/cnp", Mode: endpoint.ModeRoCEv2, Title: "a CE-marked request gets a CNP to the sender QP, echoing its port",
		Cites: []string{"MR-1.2", "MR-1.6", "MR-5.17"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			p := c.Req(wire.OpWriteOnly, c.PSN)
			p.ECN = wire.ECNCE
			p.VA, p.RKey, p.DMALen = c.QP.Buf.Addr, c.QP.Buf.RKey, 64
			t.Send(p, pattern(64, 1))
			in, _ := t.Expect(30*us, "CNP", func(in *In) bool { return in.P.Kind == wire.KindCNP })
			c.checkCommon(in)
			if in.P.Opcode != uint8(wire.OpCNP) || !in.P.BECN || in.P.SrcPort != c.SPort || in.P.DSCP != 48 || in.P.ECN != wire.ECNNotECT {
				t.Errorf("CNP opcode %#x BECN %v port %#x DSCP %d ECN %d, want 0x81 BECN port %#x DSCP 48 Not-ECT",
					in.P.Opcode, in.P.BECN, in.P.SrcPort, in.P.DSCP, in.P.ECN, c.SPort)
			}
		}},
	{ID: "ecn/cnp-rate-limit", Mode: endpoint.ModeRoCEv2, Title: "at most one CNP per 50 us per sender port",
		Cites: []string{"MR-5.18"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			var got []*In
			var first, last clock.Time
			for i := range 40 {
				p := c.Req(wire.OpWriteOnly, psnAdd(c.PSN, i))
				p.ECN = wire.ECNCE
				p.VA, p.RKey, p.DMALen = c.QP.Buf.Addr, c.QP.Buf.RKey, 64
				if last = t.Now(); i == 0 {
					first = last
				}
				t.Send(p, pattern(64, 1))
				got = append(got, cnps(t.Collect(5*us))...)
			}
			got = append(got, cnps(t.Collect(5*us))...)
			// One CNP per 50 us over the span the marked packets took: on
			// the virtual clock 195 us (3 to 5 CNPs); in emulation the
			// tester's pacing stretches it, and the bounds with it. A CE
			// packet comes at most ~5 us after the limit has passed, so
			// the gaps are 50 to 55 us, widened by the Env's jitter.
			span := last.Sub(first)
			lo, hi := int(span/(55*us+t.Jitter())), len(got)
			if g := 45*us - t.Jitter(); g > 0 { // a jitter of 45us leaves only the gap check
				hi = int(span/g) + 1
			}
			t.Logf("%d CNPs for 40 marked packets over %v", len(got), span)
			if len(got) < lo || len(got) > hi {
				t.Errorf("%d CNPs for 40 CE packets over %v, want one per 50us (%d to %d)", len(got), span, lo, hi)
			}
			for i := 1; i < len(got); i++ {
				if g := got[i].At.Sub(got[i-1].At); g < 45*us-t.Jitter() {
					t.Errorf("CNPs %d and %d only %v apart", i, i+1, g)
				}
			}
		}},
	{ID: "ecn/cnp-per-port", Mode: endpoint.ModeRoCEv2, Title: "the CNP limit is per sender UDP port",
		Cites: []string{"MR-5.17", "MR-5.19"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			for i, port := range []uint16{0xD001, 0xD002} {
				c.SPort = port
				p := c.Req(wire.OpWriteOnly, psnAdd(c.PSN, i))
				p.ECN = wire.ECNCE
				p.VA, p.RKey, p.DMALen = c.QP.Buf.Addr, c.QP.Buf.RKey, 64
				t.Send(p, pattern(64, 1))
			}
			got := cnps(t.Settle(20 * us))
			if len(got) != 2 || got[0].P.SrcPort != 0xD001 || got[1].P.SrcPort != 0xD002 {
				var ports []uint16
				for _, in := range got {
					ports = append(ports, in.P.SrcPort)
				}
				t.Errorf("CE on ports 0xd001 and 0xd002 within 1us got CNPs on %x, want one each", ports)
			}
		}},
}

var nicCases = []Case{
	{ID: "nic/pfc", Mode: endpoint.ModeRoCEv2, Title: "a PFC pause of priority 3 holds data; zero quanta resumes it",
		Cites: []string{"MR-8.2"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			t.PFC(1<<3, 0xFFFF)
			// The pause crosses the cable (1 us in a lab) before the
			// post, which reaches the NIC at once: without the wait
			// the data may rightly leave before the pause arrives.
			t.Collect(5 * us)
			c.Post(WR{WRID: 1, Op: "write", Len: 64, RemoteAddr: 0x100, RKey: 1})
			// Refreshed, as a switch keeps a paused queue paused: in
			// emulation the post may take long enough for the first pause
			// to run out (0xFFFF quanta: 335 us at 100G, 84 us at 400G).
			t.PFC(1<<3, 0xFFFF)
			for _, in := range t.Collect(60 * us) {
				if IsRequest(in) {
					t.Fatalf("data on paused priority 3 (DSCP %d) %v after the pause", in.P.DSCP, t.Since())
				}
			}
			t.PFC(1<<3, 0)
			resume := t.Now() // after the send: the tester may be late to it
			r := c.requests(1, 30*us)[0]
			if g := r.At.Sub(resume); g > 20*us+t.Jitter() {
				t.Errorf("data %v after zero quanta, want at once", g)
			}
		}},
	{ID: "nic/bad-icrc", Mode: endpoint.ModeRoCEv2, Title: "a request with a bad ICRC is dropped: not executed, not acknowledged",
		Cites: []string{"MR-8.4"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			p := c.Req(wire.OpWriteOnly, c.PSN)
			p.VA, p.RKey, p.DMALen, p.AckReq = c.QP.Buf.Addr, c.QP.Buf.RKey, 64, true
			b, err := wire.BuildFrame(p, pattern(64, 0xBB))
			t.must(err, "build")
			b[len(b)-1] ^= 0xFF
			t.SendFrame(b)
			if as := c.acks(t.Collect(30 * us)); len(as) > 0 {
				t.Errorf("a frame with a bad ICRC was answered: %s", describe(as))
			}
			if bytes.Equal(c.Mem(0, 64), pattern(64, 0xBB)) {
				t.Errorf("a frame with a bad ICRC was placed")
			}
			c.Write(c.PSN, c.QP.Buf.Addr, c.QP.Buf.RKey, pattern(64, 0xCC), true)
			if a := c.ack(30 * us); a.P.Syndrome != 0x1F || a.P.PSN != c.PSN || !bytes.Equal(c.Mem(0, 64), pattern(64, 0xCC)) {
				t.Errorf("the good frame after it: %s PSN %#x, want ACK and placement", wire.SyndromeString(a.P.Syndrome), a.P.PSN)
			}
		}},
}
