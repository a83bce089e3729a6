package compliance

import (
	"bytes"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
)

// acks returns the ACK/NAKs to the tester among ins.
func (c *Conn) acks(ins []*In) []*In { return c.mineOf(wire.OpAcknowledge, ins) }

// expectNAK waits for an error NAK and checks syndrome and PSN.
func (c *Conn) expectNAK(syn uint8, psn uint32, what string) {
	a := c.ack(30 * us)
	if a.P.Syndrome != syn || a.P.PSN != psn {
		c.t.Errorf("%s: answered %s PSN %#x, want %s PSN %#x", what, wire.SyndromeString(a.P.Syndrome), a.P.PSN, wire.SyndromeString(syn), psn)
	}
}

var rcRspCases = []Case{
	{ID: "rc/nak-once", Mode: endpoint.ModeRoCEv2, Title: "out-of-sequence requests: one NAK 0x60 for ePSN, nothing executed, until ePSN advances",
		Cites: []string{"MR-5.6", "MR-5.8"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			a, k := c.QP.Buf.Addr, c.QP.Buf.RKey
			c.Write(c.PSN, a, k, pattern(64, 1), true)
			c.ack(30 * us)
			for i := 2; i <= 4; i++ {
				c.Write(psnAdd(c.PSN, i), a+uint64(i)*64, k, pattern(64, byte(i)), true)
			}
			as := c.acks(t.Settle(40 * us))
			if len(as) != 1 || as[0].P.Syndrome != wire.SyndromeNAKPSNSequence || as[0].P.PSN != psnAdd(c.PSN, 1) {
				t.Fatalf("three requests past a hole got %d answers %s, want one NAK PSN sequence error for PSN %#x", len(as), describe(as), psnAdd(c.PSN, 1))
			}
			if bytes.Equal(c.Mem(2*64, 64), pattern(64, 2)) {
				t.Errorf("an out-of-sequence WRITE was placed")
			}
			c.Write(psnAdd(c.PSN, 1), a+64, k, pattern(64, 1), true)
			if a := c.ack(30 * us); a.P.Syndrome != 0x1F || a.P.PSN != psnAdd(c.PSN, 1) {
				t.Errorf("the missing PSN got %s PSN %#x, want ACK PSN %#x", wire.SyndromeString(a.P.Syndrome), a.P.PSN, psnAdd(c.PSN, 1))
			}
			c.Write(psnAdd(c.PSN, 3), a+3*64, k, pattern(64, 3), true)
			if a := c.ack(30 * us); a.P.Syndrome != wire.SyndromeNAKPSNSequence || a.P.PSN != psnAdd(c.PSN, 2) {
				t.Errorf("after ePSN advanced a new gap got %s PSN %#x, want NAK PSN %#x", wire.SyndromeString(a.P.Syndrome), a.P.PSN, psnAdd(c.PSN, 2))
			}
		}},
	{ID: "rc/duplicate", Mode: endpoint.ModeRoCEv2, Title: "a duplicate request is re-ACKed, not executed again",
		Cites: []string{"MR-5.7"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			a, k := c.QP.Buf.Addr, c.QP.Buf.RKey
			c.Write(c.PSN, a, k, pattern(64, 1), true)
			c.ack(30 * us)
			c.Write(psnAdd(c.PSN, 1), a+64, k, pattern(64, 2), true)
			c.ack(30 * us)
			c.Write(c.PSN, a, k, pattern(64, 9), false)
			as := c.acks(t.Settle(30 * us))
			if len(as) != 1 || as[0].P.Syndrome != 0x1F || as[0].P.PSN != psnAdd(c.PSN, 1) {
				t.Errorf("a duplicate got %s, want one ACK of ePSN-1 (%#x)", describe(as), psnAdd(c.PSN, 1))
			}
			if !bytes.Equal(c.Mem(0, 64), pattern(64, 1)) {
				t.Errorf("the duplicate WRITE was executed again")
			}
		}},
	{ID: "rc/ack-coalescing", Mode: endpoint.ModeRoCEv2, Title: "an ACK at the latest after 16 unacknowledged packets",
		Cites: []string{"MR-5.9"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			for i := range 40 {
				c.Write(psnAdd(c.PSN, i), c.QP.Buf.Addr+uint64(i)*64, c.QP.Buf.RKey, pattern(64, byte(i)), false)
			}
			as := c.acks(t.Settle(30 * us))
			if len(as) < 2 || as[0].P.PSN != psnAdd(c.PSN, 15) || as[1].P.PSN != psnAdd(c.PSN, 31) {
				t.Errorf("40 packets without AckReq got ACKs %s, want PSNs %#x and %#x", describe(as), psnAdd(c.PSN, 15), psnAdd(c.PSN, 31))
			}
		}},
	{ID: "rc/read-response", Mode: endpoint.ModeRoCEv2, Title: "READ responses: PSNs, opcodes, AETH, data; no ACK of their own; MSN",
		Cites: []string{"MR-5.10", "MR-10.1", "MR-10.2"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{MTU: 1024})
			data := pattern(3000, 0x44)
			c.Fill(8192, data)
			p := c.Req(wire.OpReadRequest, c.PSN)
			p.VA, p.RKey, p.DMALen, p.AckReq = c.QP.Buf.Addr+8192, c.QP.Buf.RKey, 3000, true
			t.Send(p, nil)
			ins := t.Settle(40 * us)
			var body []byte
			want := []wire.Opcode{wire.OpReadResponseFirst, wire.OpReadResponseMiddle, wire.OpReadResponseLast}
			n := 0
			for _, in := range ins {
				if !c.Mine(in) {
					continue
				}
				if in.P.Opcode == uint8(wire.OpAcknowledge) {
					t.Errorf("READ answered by an ACK (PSN %#x)", in.P.PSN)
					continue
				}
				if n < 3 {
					c.checkCommon(in)
					if wire.Opcode(in.P.Opcode) != want[n] || in.P.PSN != psnAdd(c.PSN, n) || in.P.HasAETH != (n != 1) {
						t.Errorf("response %d: opcode %v PSN %#x AETH %v", n, wire.Opcode(in.P.Opcode), in.P.PSN, in.P.HasAETH)
					}
					if in.P.DSCP != 26 || in.P.ECN != wire.ECNECT0 {
						t.Errorf("response %d DSCP %d ECN %d, want 26 ECT(0)", n, in.P.DSCP, in.P.ECN)
					}
					body = append(body, in.P.Payload()...)
				}
				n++
			}
			if n != 3 || !bytes.Equal(body, data) {
				t.Fatalf("%d responses, data equal %v; want 3 carrying the buffer", n, bytes.Equal(body, data))
			}
			c.Write(psnAdd(c.PSN, 3), c.QP.Buf.Addr, c.QP.Buf.RKey, pattern(8, 1), true)
			if a := c.ack(30 * us); a.P.PSN != psnAdd(c.PSN, 3) || a.P.MSN != 2 {
				t.Errorf("ACK after READ + WRITE: PSN %#x MSN %d, want %#x and 2", a.P.PSN, a.P.MSN, psnAdd(c.PSN, 3))
			}
		}},
	{ID: "rc/remote-access", Mode: endpoint.ModeRoCEv2, Title: "WRITE or READ outside a region, or with a bad key: NAK 0x62, nothing placed, QP in ERROR",
		Cites: []string{"MR-5.1", "MR-5.2", "MR-5.4"},
		Run: func(t *T) {
			for _, k := range []struct {
				name string
				op   wire.Opcode
				bad  func(c *Conn) (uint64, uint32)
			}{
				{"WRITE with a bad rkey", wire.OpWriteOnly, func(c *Conn) (uint64, uint32) { return c.QP.Buf.Addr, c.QP.Buf.RKey ^ 0x123400 }},
				{"WRITE past the region", wire.OpWriteOnly, func(c *Conn) (uint64, uint32) { return c.QP.Buf.Addr + uint64(c.QP.Buf.Len) - 32, c.QP.Buf.RKey }},
				{"READ with a bad rkey", wire.OpReadRequest, func(c *Conn) (uint64, uint32) { return c.QP.Buf.Addr, c.QP.Buf.RKey ^ 0x123400 }},
			} {
				c := t.Connect(ConnOpts{})
				va, key := k.bad(c)
				p := c.Req(k.op, c.PSN)
				p.VA, p.RKey, p.DMALen, p.AckReq = va, key, 64, true
				var payload []byte
				if k.op == wire.OpWriteOnly {
					payload = pattern(64, 7)
				}
				t.Send(p, payload)
				c.expectNAK(wire.SyndromeNAKRemoteAccess, c.PSN, k.name)
				if st := c.State(); st.State != "ERROR" {
					t.Errorf("%s: responder QP %s, want ERROR", k.name, st.State)
				}
				c.Write(psnAdd(c.PSN, 1), c.QP.Buf.Addr, c.QP.Buf.RKey, pattern(64, 8), true)
				if as := c.acks(t.Collect(30 * us)); len(as) > 0 {
					t.Errorf("%s: a QP in ERROR answered %s", k.name, describe(as))
				}
				if bytes.Equal(c.Mem(0, 64), pattern(64, 8)) {
					t.Errorf("%s: a QP in ERROR placed data", k.name)
				}
				t.must(t.env.Destroy(c.QP.ID), "adapter: destroy")
			}
		}},
	{ID: "rc/invalid-request", Mode: endpoint.ModeRoCEv2, Title: "SEND longer than the receive buffer, or a middle packet out of the blue: NAK 0x61",
		Cites: []string{"MR-5.3", "MR-5.4"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			c.PostRecv(1, 0, 100)
			t.Send(c.Req(wire.OpSendOnly, c.PSN), pattern(200, 1))
			c.expectNAK(wire.SyndromeNAKInvalidRequest, c.PSN, "SEND of 200 bytes into 100")
			if st := c.State(); st.State != "ERROR" {
				t.Errorf("responder QP %s after the NAK, want ERROR", st.State)
			}
			t.must(t.env.Destroy(c.QP.ID), "adapter: destroy")
			c = t.Connect(ConnOpts{})
			t.Send(c.Req(wire.OpWriteMiddle, c.PSN), pattern(64, 1))
			c.expectNAK(wire.SyndromeNAKInvalidRequest, c.PSN, "WRITE Middle without First")
		}},
	{ID: "rc/rnr", Mode: endpoint.ModeRoCEv2, Title: "a SEND without a receive WQE: RNR NAK, not executed; executed once a WQE is there",
		Cites: []string{"MR-5.5", "MR-5.6"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			send := func() { p := c.Req(wire.OpSendOnly, c.PSN); p.AckReq = true; t.Send(p, pattern(80, 5)) }
			send()
			a := c.ack(30 * us)
			if a.P.Syndrome&0xE0 != wire.SyndromeClassRNR || a.P.Syndrome&0x1F == 0 || a.P.PSN != c.PSN {
				t.Fatalf("SEND without a WQE got %s PSN %#x, want RNR NAK PSN %#x", wire.SyndromeString(a.P.Syndrome), a.P.PSN, c.PSN)
			}
			if wcs := c.Poll(); len(wcs) > 0 {
				t.Errorf("completion %+v for a SEND answered by RNR NAK", wcs[0])
			}
			c.PostRecv(77, 256, 1000)
			send()
			if a := c.ack(30 * us); a.P.Syndrome != 0x1F || a.P.PSN != c.PSN {
				t.Errorf("the resent SEND got %s PSN %#x, want ACK", wire.SyndromeString(a.P.Syndrome), a.P.PSN)
			}
			wc, _ := c.WaitCompletion(10 * clock.Microsecond)
			if wc == nil || wc.WRID != 77 || wc.ByteLen != 80 || !bytes.Equal(c.Mem(256, 80), pattern(80, 5)) {
				t.Errorf("receive completion %+v, want wr 77 with the 80 bytes", wc)
			}
		}},
}

func describe(ins []*In) string {
	s := "["
	for i, in := range ins {
		if i > 0 {
			s += ", "
		}
		s += wire.SyndromeString(in.P.Syndrome) + " " + hex24(in.P.PSN)
	}
	return s + "]"
}

func hex24(v uint32) string {
	const d = "0123456789abcdef"
	b := []byte("0x000000")
	for i := 7; i >= 2; i-- {
		b[i] = d[v&15]
		v >>= 4
	}
	return string(b)
}
