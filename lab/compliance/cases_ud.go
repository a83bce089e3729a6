package compliance

import (
	"bytes"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
)

// The Q_Keys of the UD cases: the IUT QP's, and one it must refuse.
const (
	udQKey    = 0x1EE7A330
	udBadQKey = 0x0BADBAD0
	udGRHLen  = 40
)

// ConnectUD creates a UD QP on the IUT with Q_Key udQKey and connects it
// to the tester (a UD QP has no peer: the tester's address is where the
// adapter's UD SENDs go).
func (t *T) ConnectUD() *Conn {
	h, err := t.env.CreateQP(QPSpec{Mode: endpoint.ModeRoCEv2, Buffer: 1 << 16, Type: "ud", QKey: udQKey})
	t.must(err, "adapter: create UD QP")
	ip, mac := t.env.Peer()
	c := &Conn{t: t, QP: h, QPN: testerQPN, MTU: 4096, SPort: testerSPort}
	t.must(t.env.Connect(h.ID, endpoint.ConnInfo{QPN: testerQPN, IP: ip, MAC: mac, MTU: 4096, Mode: endpoint.ModeRoCEv2, Paths: 1}), "adapter: connect UD")
	return c
}

// UDSend sends a UD SEND Only from the tester's QP to the IUT's with qkey.
func (c *Conn) UDSend(qkey uint32, data []byte) {
	p := c.hdr(wire.OpUDSendOnly, 0, 26, true)
	p.SetDETH(qkey, c.QPN)
	c.t.Send(p, data)
}

// expectQuiet fails t if the IUT sends anything within d.
func (c *Conn) expectQuiet(d clock.Duration, what string) {
	if ins := c.t.Settle(d); len(ins) > 0 {
		c.t.Errorf("%s: the IUT sent %s, want nothing", what, describe(ins))
	}
}

var udCases = []Case{
	{ID: "ud/receive", Mode: endpoint.ModeRoCEv2, Title: "a datagram lands after 40 bytes of GRH (IPv4: the header last) and completes with the source QP, answering nothing",
		Cites: []string{"MR-11.2", "MR-11.5"},
		Run: func(t *T) {
			c := t.ConnectUD()
			c.PostRecv(1, 0, 4096)
			data := pattern(200, 7)
			c.UDSend(udQKey, data)
			wc, seen := c.WaitCompletion(30 * us)
			if wc == nil {
				t.Fatalf("no receive completion for a datagram with the right Q_Key (frames: %s)", describe(seen))
			}
			if wc.Status != "success" || wc.ByteLen != udGRHLen+200 || wc.SrcQP != testerQPN || !wc.GRH {
				t.Errorf("completion %+v, want success, %d bytes, source QP %#x, GRH", *wc, udGRHLen+200, testerQPN)
			}
			mem := c.Mem(0, udGRHLen+200)
			ip, _ := t.env.Peer()
			if ip.Is4() {
				src := ip.As4()
				if !bytes.Equal(mem[:20], make([]byte, 20)) || mem[20]>>4 != 4 || !bytes.Equal(mem[32:36], src[:]) {
					t.Errorf("GRH % x: want 20 zero bytes, then the IPv4 header from %v", mem[:udGRHLen], ip)
				}
			}
			if !bytes.Equal(mem[udGRHLen:], data) {
				t.Errorf("the payload is not after the GRH")
			}
			c.expectQuiet(20*us, "after a datagram")
		}},
	{ID: "ud/qkey", Mode: endpoint.ModeRoCEv2, Title: "a datagram with another Q_Key is dropped and takes no WQE",
		Cites: []string{"MR-11.3"},
		Run: func(t *T) {
			c := t.ConnectUD()
			c.PostRecv(1, 0, 4096)
			c.UDSend(udBadQKey, pattern(64, 1))
			if wc, _ := c.WaitCompletion(20 * us); wc != nil {
				t.Fatalf("a datagram with Q_Key %#x for a QP of %#x completed: %+v", udBadQKey, udQKey, *wc)
			}
			c.UDSend(udQKey, pattern(64, 2))
			wc, _ := c.WaitCompletion(30 * us)
			if wc == nil || wc.WRID != 1 || wc.Status != "success" {
				t.Fatalf("the next datagram, with the right Q_Key: %v, want WQE 1 completed", wc)
			}
			if !bytes.Equal(c.Mem(udGRHLen, 64), pattern(64, 2)) {
				t.Errorf("the refused datagram's bytes were placed")
			}
		}},
	{ID: "ud/no-wqe", Mode: endpoint.ModeRoCEv2, Title: "a datagram with no receive WQE is dropped silently (no RNR NAK)",
		Cites: []string{"MR-11.4", "MR-11.5"},
		Run: func(t *T) {
			c := t.ConnectUD()
			c.UDSend(udQKey, pattern(64, 1))
			c.expectQuiet(30*us, "a datagram that found no WQE")
			c.PostRecv(5, 0, 4096)
			c.UDSend(udQKey, pattern(64, 2))
			if wc, _ := c.WaitCompletion(30 * us); wc == nil || wc.WRID != 5 || !bytes.Equal(c.Mem(udGRHLen, 64), pattern(64, 2)) {
				t.Errorf("after a WQE was posted the next datagram: %v", wc)
			}
		}},
	{ID: "ud/send", Mode: endpoint.ModeRoCEv2, Title: "a UD SEND is one packet with a DETH (Q_Key, source QP), completed without an ACK",
		Cites: []string{"MR-11.1", "MR-11.5"},
		Run: func(t *T) {
			c := t.ConnectUD()
			c.Fill(0, pattern(300, 3))
			c.Post(WR{WRID: 9, Op: "send_imm", Offset: 0, Len: 300, DestQPN: testerQPN, QKey: 0x00ABCDEF, Imm: 0x1234})
			in, skipped := t.Expect(30*us, "the UD SEND", IsOp(wire.OpUDSendOnlyImm))
			if in == nil {
				t.Fatalf("no UD SEND Only with Immediate (frames: %s)", describe(skipped))
			}
			qkey, src := in.P.DETH()
			if in.P.DestQP != testerQPN || qkey != 0x00ABCDEF || src != c.QP.Conn.QPN || in.P.Imm != 0x1234 || !bytes.Equal(in.P.Payload(), pattern(300, 3)) {
				t.Errorf("UD SEND to QP %#x, DETH Q_Key %#x source %#x, imm %#x; want %#x, %#x, %#x, %#x and the 300 bytes", in.P.DestQP, qkey, src, in.P.Imm, testerQPN, 0x00ABCDEF, c.QP.Conn.QPN, 0x1234)
			}
			wc, _ := c.WaitCompletion(30 * us)
			if wc == nil || wc.Status != "success" || wc.WRID != 9 {
				t.Errorf("send completion %v, want success with no ACK", wc)
			}
			c.expectQuiet(40*us, "after the SEND completed")
			// Above the MTU: fails locally, nothing on the wire.
			c.Post(WR{WRID: 10, Op: "send", Offset: 0, Len: 8192, DestQPN: testerQPN, QKey: udQKey})
			if wc, _ := c.WaitCompletion(20 * us); wc == nil || wc.Status == "success" {
				t.Errorf("an 8 KiB datagram on a 4 KiB MTU: %v, want a local error", wc)
			}
			c.expectQuiet(20*us, "after a datagram above the MTU")
		}},
	{ID: "ud/own-qkey", Mode: endpoint.ModeRoCEv2, Title: "a work request's Q_Key with the high bit set sends the QP's own",
		Cites: []string{"MR-11.6"},
		Run: func(t *T) {
			c := t.ConnectUD()
			c.Post(WR{WRID: 1, Op: "send", Offset: 0, Len: 16, DestQPN: testerQPN, QKey: 0x80000000})
			in, skipped := t.Expect(30*us, "the UD SEND", IsOp(wire.OpUDSendOnly))
			if in == nil {
				t.Fatalf("no UD SEND (frames: %s)", describe(skipped))
			}
			if qkey, _ := in.P.DETH(); qkey != udQKey {
				t.Errorf("DETH Q_Key %#x, want the QP's own %#x", qkey, udQKey)
			}
		}},
}
