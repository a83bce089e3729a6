package compliance

import (
	"bytes"
	"fmt"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
)

var rcReqCases = []Case{
	{ID: "rc/nak-seq-goback", Mode: endpoint.ModeRoCEv2, Title: "NAK PSN sequence error: resend from its PSN, in order",
		Cites: []string{"MR-4.7"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{MTU: 1024})
			c.Post(WR{WRID: 1, Op: "write", Len: 8 * 1024, RemoteAddr: 0x1000, RKey: 3})
			c.requests(8, 50*us)
			c.Ack(psnAdd(c.RPSN, 3), wire.SyndromeNAKPSNSequence)
			got := c.requests(5, 100*us)
			for i, in := range got {
				if in.P.PSN != psnAdd(c.RPSN, 3+i) {
					t.Fatalf("resend %d has PSN %#x, want %#x (go back to the NAK's PSN)", i, in.P.PSN, psnAdd(c.RPSN, 3+i))
				}
			}
			c.Ack(psnAdd(c.RPSN, 7), wire.SyndromeACK(0x1F))
			if wc, _ := c.WaitCompletion(20 * us); wc == nil || wc.Status != "success" {
				t.Errorf("completion %+v, want success", wc)
			}
		}},
	{ID: "rc/read-in-order", Mode: endpoint.ModeRoCEv2, Title: "an out-of-order READ response re-requests from the first missing one",
		Cites: []string{"MR-4.5", "MR-4.8", "MR-5.10"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{MTU: 1024})
			c.Post(WR{WRID: 5, Op: "read", Offset: 0, Len: 3 * 1024, RemoteAddr: 0x9000, RKey: 4})
			rq := c.requests(1, 50*us)[0]
			if rq.P.Opcode != uint8(wire.OpReadRequest) || rq.P.DMALen != 3072 {
				t.Fatalf("READ request opcode %#x len %d", rq.P.Opcode, rq.P.DMALen)
			}
			data := pattern(3072, 0x33)
			resp := func(i int, op wire.Opcode) {
				p := c.Req(op, psnAdd(c.RPSN, i))
				p.Syndrome, p.MSN = 0x1F, 1
				c.t.Send(p, data[i*1024:(i+1)*1024])
			}
			resp(0, wire.OpReadResponseFirst)
			resp(2, wire.OpReadResponseLast)
			re := c.requests(1, 100*us)[0]
			if re.P.Opcode != uint8(wire.OpReadRequest) || re.P.PSN != psnAdd(c.RPSN, 1) || re.P.VA != 0x9000+1024 || re.P.DMALen != 2048 {
				t.Fatalf("re-request opcode %#x PSN %#x VA %#x len %d, want READ at PSN %#x VA 0x9400 len 2048",
					re.P.Opcode, re.P.PSN, re.P.VA, re.P.DMALen, psnAdd(c.RPSN, 1))
			}
			resp(1, wire.OpReadResponseMiddle)
			resp(2, wire.OpReadResponseLast)
			wc, _ := c.WaitCompletion(20 * us)
			if wc == nil || wc.WRID != 5 || wc.Status != "success" {
				t.Fatalf("READ completion %+v, want wr 5 success", wc)
			}
			if !bytes.Equal(c.Mem(0, 3072), data) {
				t.Errorf("READ data not placed in order")
			}
		}},
	{ID: "rc/timeout", Timeouts: true, Mode: endpoint.ModeRoCEv2, Title: "retransmission after 200 us of silence, doubling, reset by progress",
		Cites: []string{"MR-4.13", "MR-4.14"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			c.Post(WR{WRID: 1, Op: "write", Len: 64, RemoteAddr: 0x100, RKey: 1})
			first := c.requests(1, 50*us)[0]
			r1 := c.requests(1, 2500*us)[0]
			r2 := c.requests(1, 5000*us)[0]
			g1, g2 := r1.At.Sub(first.At), r2.At.Sub(r1.At)
			t.Logf("retransmissions after %v and %v", g1, g2)
			j := t.Jitter()
			if g1 < 150*us-j || g1 > 260*us+j {
				t.Errorf("first retransmission %v after the packet, want the 200us QP timeout", g1)
			}
			// g2 within 2·g1 ± 20 % (the ratio 1.6–2.4) and within the
			// first one's window doubled. In emulation the lateness of the
			// first retransmission's write counts three times in g2 − 2·g1,
			// so the ratio is widened by 3j (once for the window).
			if d := g2 - 2*g1; d < -(g1*2/5+3*j) || d > g1*2/5+3*j || g2 < 2*150*us-j || g2 > 2*260*us+j {
				t.Errorf("second timeout %v, first %v: want it doubled", g2, g1)
			}
			c.Ack(first.P.PSN, wire.SyndromeACK(0x1F))
			c.WaitCompletion(20 * us)
			c.Post(WR{WRID: 2, Op: "write", Len: 64, RemoteAddr: 0x100, RKey: 1})
			n := c.requests(1, 50*us)[0]
			r3 := c.requests(1, 2500*us)[0]
			if g := r3.At.Sub(n.At); g < 150*us-j || g > 260*us+j {
				t.Errorf("after progress the timeout is %v, want back to 200us", g)
			}
		}},
	{ID: "rc/retry-exceeded", Timeouts: true, Mode: endpoint.ModeRoCEv2, Title: "seven retried timeouts, then transport retry exceeded and ERROR",
		Cites: []string{"MR-4.15"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			c.Post(WR{WRID: 9, Op: "write", Len: 64, RemoteAddr: 0x100, RKey: 1})
			wc, seen := c.WaitCompletion(80 * clock.Millisecond)
			sent := 0
			for _, in := range seen {
				if IsRequest(in) {
					sent++
				}
			}
			if wc == nil {
				t.Fatalf("no completion within 80ms of silence (%d transmissions)", sent)
			}
			if wc.Status != "transport retry exceeded" || wc.WRID != 9 {
				t.Errorf("completion %+v, want wr 9 transport retry exceeded", wc)
			}
			if sent != 8 {
				t.Errorf("%d transmissions, want 1 + 7 retries", sent)
			}
			if st := c.State(); st.State != "ERROR" {
				t.Errorf("QP state %s, want ERROR", st.State)
			}
		}},
	{ID: "rc/rnr-wait", Mode: endpoint.ModeRoCEv2, Title: "an RNR NAK holds the QP for the RNR time of its code",
		Cites: []string{"MR-4.17"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			c.Post(WR{WRID: 1, Op: "send", Len: 64})
			first := c.requests(1, 50*us)[0]
			const code = 6 // 80 us
			// The IUT starts waiting when it reads the NAK: after sent,
			// and in emulation possibly before acked (the tester may be
			// descheduled right after its send).
			sent := t.Now()
			c.Ack(first.P.PSN, wire.SyndromeRNR(code))
			acked := t.Now()
			re := c.requests(1, 400*us)[0]
			if lo, hi := re.At.Sub(sent), re.At.Sub(acked); lo < 80*us-t.Jitter() || hi > 160*us+t.Jitter() || re.P.PSN != first.P.PSN {
				t.Errorf("resend of PSN %#x %v after RNR NAK code 6, want PSN %#x after 80us (and before the timeout)", re.P.PSN, hi, first.P.PSN)
			}
		}},
	{ID: "rc/error-nak", Mode: endpoint.ModeRoCEv2, Title: "error NAKs: earlier WRs succeed, the WR at the PSN fails with the matching status, QP in ERROR",
		Cites: []string{"MR-4.19"},
		Run: func(t *T) {
			for _, k := range []struct {
				syn    uint8
				status string
			}{{wire.SyndromeNAKInvalidRequest, "remote invalid request"}, {wire.SyndromeNAKRemoteAccess, "remote access error"}, {wire.SyndromeNAKRemoteOp, "remote operational error"}} {
				c := t.Connect(ConnOpts{})
				c.Post(WR{WRID: 1, Op: "write", Len: 64, RemoteAddr: 0x100, RKey: 1})
				c.Post(WR{WRID: 2, Op: "write", Len: 64, RemoteAddr: 0x200, RKey: 1})
				c.Post(WR{WRID: 3, Op: "write", Len: 64, RemoteAddr: 0x300, RKey: 1})
				c.requests(3, 50*us)
				c.Ack(psnAdd(c.RPSN, 1), k.syn)
				t.Settle(20 * us)
				wcs := c.Poll()
				want := fmt.Sprintf("[1 success] [2 %s] [3 flush error]", k.status)
				got := ""
				for i, wc := range wcs {
					if i > 0 {
						got += " "
					}
					got += fmt.Sprintf("[%d %s]", wc.WRID, wc.Status)
				}
				if got != want {
					t.Errorf("after NAK %#x: completions %s, want %s", k.syn, got, want)
				}
				if st := c.State(); st.State != "ERROR" {
					t.Errorf("after NAK %#x: QP %s, want ERROR", k.syn, st.State)
				}
				t.must(t.env.Destroy(c.QP.ID), "adapter: destroy")
			}
		}},
	{ID: "req/window", Mode: endpoint.ModeRoCEv2, Title: "no more than 4096 PSNs outstanding",
		Cites: []string{"MR-4.2"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{MTU: 256, Buffer: 2 << 20})
			c.Post(WR{WRID: 1, Op: "write", Len: 5000 * 256, RemoteAddr: 0x100, RKey: 1})
			seen := map[uint32]bool{}
			for {
				in := t.Recv(150 * us)
				if in == nil {
					break
				}
				if IsRequest(in) {
					if seen[in.P.PSN] {
						break
					}
					seen[in.P.PSN] = true
				}
			}
			if len(seen) != 4096 {
				t.Fatalf("%d PSNs sent without any acknowledgement, want the window of 4096", len(seen))
			}
			c.Ack(psnAdd(c.RPSN, 99), wire.SyndromeACK(0x1F))
			if in, _ := t.Expect(1000*us, "new PSN after the window opened", func(in *In) bool { return IsRequest(in) && !seen[in.P.PSN] }); in.P.PSN != psnAdd(c.RPSN, 4096) {
				t.Errorf("first PSN past the window %#x, want %#x", in.P.PSN, psnAdd(c.RPSN, 4096))
			}
		}},
}
