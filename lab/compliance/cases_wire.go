package compliance

import (
	"bytes"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
)

const us = clock.Microsecond

// requests waits up to d (plus the Env's jitter) for n request packets
// from the IUT's requester.
func (c *Conn) requests(n int, d clock.Duration) []*In {
	var out []*In
	end := c.t.Now().Add(d + c.t.Jitter())
	for len(out) < n {
		left := end.Sub(c.t.Now())
		in := c.t.Recv(max(left, 0))
		if in == nil {
			c.t.Fatalf("got %d of %d request packets within %v", len(out), n, d)
		}
		if IsRequest(in) && c.Mine(in) {
			out = append(out, in)
		}
	}
	return out
}

// ack waits up to d for an RC Acknowledge (ACK or NAK) to the tester.
func (c *Conn) ack(d clock.Duration) *In {
	in, _ := c.t.Expect(d, "ACK/NAK", c.mineOp(wire.OpAcknowledge))
	return in
}

// checkCommon checks MR-1.6 on a frame from the IUT.
func (c *Conn) checkCommon(in *In) {
	t := c.t
	p := &in.P
	if p.PKey != 0xFFFF || p.TVer != 0 || p.DestQP != c.QPN || p.DstPort != wire.RoCEPort {
		t.Errorf("PSN %#x opcode %#x: P_Key %#x TVer %d DestQP %#x dport %d, want 0xffff 0 %#x 4791", p.PSN, p.Opcode, p.PKey, p.TVer, p.DestQP, p.DstPort, c.QPN)
	}
	if err := p.VerifyICRC(); err != nil {
		t.Errorf("PSN %#x opcode %#x: %v", p.PSN, p.Opcode, err)
	}
}

var wireCases = []Case{
	{ID: "wire/rc-write", Mode: endpoint.ModeRoCEv2, Title: "a RoCEv2 WRITE on the wire: PSNs, opcodes, RETH, marking, MTU, AckReq, completion",
		Cites: []string{"MR-1.1", "MR-1.3", "MR-1.6", "MR-3.1", "MR-4.1", "MR-4.3", "MR-4.5", "MR-4.6", "MR-10.1"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{MTU: 1024})
			data := pattern(3000, 0x11)
			c.Fill(0, data)
			c.Post(WR{WRID: 7, Op: "write", Len: 3000, RemoteAddr: 0x5000, RKey: 0x77})
			got := c.requests(3, 50*us)
			wantOps := []wire.Opcode{wire.OpWriteFirst, wire.OpWriteMiddle, wire.OpWriteLast}
			var body []byte
			for i, in := range got {
				p := &in.P
				c.checkCommon(in)
				if p.PSN != psnAdd(c.RPSN, i) {
					t.Errorf("packet %d has PSN %#x, want %#x (initial PSN + %d)", i, p.PSN, psnAdd(c.RPSN, i), i)
				}
				if wire.Opcode(p.Opcode) != wantOps[i] {
					t.Errorf("packet %d opcode %v, want %v", i, wire.Opcode(p.Opcode), wantOps[i])
				}
				if p.DSCP != 26 || p.ECN != wire.ECNECT0 {
					t.Errorf("packet %d DSCP %d ECN %d, want 26 ECT(0)", i, p.DSCP, p.ECN)
				}
				if p.SrcPort != got[0].P.SrcPort {
					t.Errorf("packet %d from UDP port %d, packet 0 from %d", i, p.SrcPort, got[0].P.SrcPort)
				}
				if int(p.PayloadLen) > c.MTU {
					t.Errorf("packet %d carries %d bytes, path MTU %d", i, p.PayloadLen, c.MTU)
				}
				if i == 2 && !p.AckReq {
					t.Errorf("last packet without AckReq")
				}
				body = append(body, p.Payload()...)
			}
			if f := &got[0].P; !f.HasRETH || f.VA != 0x5000 || f.RKey != 0x77 || f.DMALen != 3000 {
				t.Errorf("WRITE First RETH %v VA %#x RKey %#x DMALen %d, want VA 0x5000 RKey 0x77 len 3000", f.HasRETH, f.VA, f.RKey, f.DMALen)
			}
			if !bytes.Equal(body, data) {
				t.Errorf("payload differs from the buffer written")
			}
			if wcs := c.Poll(); len(wcs) != 0 {
				t.Errorf("WR completed before it was acknowledged: %+v", wcs[0])
			}
			c.Ack(psnAdd(c.RPSN, 2), wire.SyndromeACK(0x1F))
			wc, _ := c.WaitCompletion(20 * us)
			if wc == nil || wc.WRID != 7 || wc.Status != "success" {
				t.Fatalf("completion after ACK of the last PSN: %+v, want wr 7 success", wc)
			}
		}},
	{ID: "wire/rc-opcodes", Mode: endpoint.ModeRoCEv2, Title: "SEND, WRITE with immediate and READ use standard RC opcodes and headers",
		Cites: []string{"MR-2.1", "MR-4.1", "MR-10.1"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			c.Post(WR{WRID: 1, Op: "send", Len: 100})
			c.Post(WR{WRID: 2, Op: "write_imm", Len: 100, RemoteAddr: 0x100, RKey: 9, Imm: 0xCAFE})
			c.Post(WR{WRID: 3, Op: "read", Offset: 4096, Len: 100, RemoteAddr: 0x200, RKey: 9})
			got := c.requests(3, 50*us)
			want := []wire.Opcode{wire.OpSendOnly, wire.OpWriteOnlyImm, wire.OpReadRequest}
			for i, in := range got {
				c.checkCommon(in)
				if wire.Opcode(in.P.Opcode) != want[i] || in.P.PSN != psnAdd(c.RPSN, i) {
					t.Errorf("request %d: opcode %v PSN %#x, want %v %#x", i, wire.Opcode(in.P.Opcode), in.P.PSN, want[i], psnAdd(c.RPSN, i))
				}
			}
			if p := &got[1].P; !p.HasImm || p.Imm != 0xCAFE || !p.HasRETH || p.VA != 0x100 {
				t.Errorf("WRITE Only with immediate: ImmDt %v %#x RETH %v VA %#x", p.HasImm, p.Imm, p.HasRETH, p.VA)
			}
			if p := &got[2].P; !p.HasRETH || p.VA != 0x200 || p.DMALen != 100 || p.RKey != 9 {
				t.Errorf("READ request RETH %v VA %#x len %d rkey %d", p.HasRETH, p.VA, p.DMALen, p.RKey)
			}
			for _, in := range t.Collect(30 * us) {
				if in.P.Opcode > 0x11 && in.P.Opcode != uint8(wire.OpCNP) {
					t.Errorf("RoCEv2 QP sent opcode %#x", in.P.Opcode)
				}
			}
		}},
	{ID: "wire/ack", Mode: endpoint.ModeRoCEv2, Title: "the responder's ACK: opcode, marking, syndrome, PSN, MSN; data placed",
		Cites: []string{"MR-1.1", "MR-1.6", "MR-5.6", "MR-5.9", "MR-10.2"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{})
			data := pattern(512, 0x22)
			c.Write(c.PSN, c.QP.Buf.Addr+64, c.QP.Buf.RKey, data, true)
			a := c.ack(30 * us)
			c.checkCommon(a)
			if a.P.DSCP != 26 || a.P.ECN != wire.ECNNotECT {
				t.Errorf("ACK DSCP %d ECN %d, want 26 Not-ECT", a.P.DSCP, a.P.ECN)
			}
			if a.P.Syndrome != 0x1F || a.P.PSN != c.PSN || a.P.MSN != 1 {
				t.Errorf("ACK syndrome %#x PSN %#x MSN %d, want 0x1f %#x 1", a.P.Syndrome, a.P.PSN, a.P.MSN, c.PSN)
			}
			if !bytes.Equal(c.Mem(64, 512), data) {
				t.Errorf("WRITE not placed in the IUT's buffer")
			}
		}},
	{ID: "wire/psn-wrap", Mode: endpoint.ModeRoCEv2, Title: "PSNs wrap from 0xFFFFFF to 0 without loss of sequence",
		Cites: []string{"MR-1.7", "MR-5.6"},
		Run: func(t *T) {
			c := t.Connect(ConnOpts{PSN: 0xFFFFFE, HasPSN: true})
			for i := range 4 {
				c.Write(psnAdd(c.PSN, i), c.QP.Buf.Addr+uint64(i*256), c.QP.Buf.RKey, pattern(256, byte(i)), i == 3)
			}
			a := c.ack(30 * us)
			if a.P.Syndrome != 0x1F || a.P.PSN != 1 || a.P.MSN != 4 {
				t.Fatalf("after PSNs 0xfffffe..0x1: %s PSN %#x MSN %d, want ACK PSN 0x1 MSN 4", wire.SyndromeString(a.P.Syndrome), a.P.PSN, a.P.MSN)
			}
			if !bytes.Equal(c.Mem(3*256, 256), pattern(256, 3)) {
				t.Errorf("the write after the wrap was not placed")
			}
		}},
}
