package endpoint_test

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/endpoint"
)

// udQP makes a UD QP with Q_Key qkey on nic, ready to send and receive.
func udQP(t *testing.T, nic *endpoint.NIC, qkey uint32) *peer {
	t.Helper()
	p := &peer{nic: nic, pd: nic.AllocPD(), scq: nic.CreateCQ(0), rcq: nic.CreateCQ(0)}
	qp, err := p.pd.CreateQP(endpoint.QPConfig{SendCQ: p.scq, RecvCQ: p.rcq, Type: endpoint.TypeUD, QKey: qkey})
	if err != nil {
		t.Fatal(err)
	}
	if err := qp.ToInit(); err != nil {
		t.Fatal(err)
	}
	if err := qp.ToRTR(endpoint.ConnInfo{}); err != nil {
		t.Fatal(err)
	}
	if err := qp.ToRTS(); err != nil {
		t.Fatal(err)
	}
	p.qp = qp
	return p
}

// TestUD: datagrams from one UD QP reach two others on other NICs with
// the sender's QPN, a GRH (20 zero bytes and the IPv4 header) and the
// payload; one with the wrong Q_Key, one that finds no receive WQE are
// dropped while the sender completes them; a Q_Key with the high bit set
// sends the QP's own; a datagram above the MTU fails locally.
func TestUD(t *testing.T) {
	s := newStar(t, starOpts{n: 3, raw: true})
	a, b, c := udQP(t, s.nics[0], 0x1111), udQP(t, s.nics[1], 0x2222), udQP(t, s.nics[2], 0x1111)
	recv := func(p *peer, size int) []byte {
		buf := make([]byte, size)
		mr := mustMR(t, p.pd, buf, allAccess)
		if err := p.qp.PostRecv(endpoint.RecvWR{WRID: uint64(size), Local: endpoint.SGE{Addr: mr.Addr, Length: uint32(size), LKey: mr.LKey}}); err != nil {
			t.Fatal(err)
		}
		return buf
	}
	msg := randBytes(3, 1000)
	src := mustMR(t, a.pd, msg, allAccess)
	send := func(op endpoint.WROpcode, to *peer, qkey uint32, n int) {
		t.Helper()
		ip := to.nic.IP()
		err := a.qp.PostSend(endpoint.SendWR{WRID: uint64(n), Opcode: op, Signaled: true, Imm: 0xabcd,
			Local: endpoint.SGE{Addr: src.Addr, Length: uint32(n), LKey: src.LKey},
			UD:    &endpoint.UDDest{IP: ip, QPN: to.qp.QPN(), QKey: qkey}})
		if err != nil {
			t.Fatal(err)
		}
		s.e.Run()
	}
	bb := recv(b, 2000)
	cb := recv(c, 2000)
	send(endpoint.WRSend, b, 0x2222, 1000)
	send(endpoint.WRSendImm, c, 0x80000000, 300) // the QP's own Q_Key, 0x1111
	for _, x := range []struct {
		p   *peer
		buf []byte
		n   int
		imm bool
	}{{b, bb, 1000, false}, {c, cb, 300, true}} {
		wcs := x.p.rcq.Poll(0)
		if len(wcs) != 1 {
			t.Fatalf("QP %#x: %d receive completions", x.p.qp.QPN(), len(wcs))
		}
		wc := wcs[0]
		if wc.Status != endpoint.StatusSuccess || wc.ByteLen != uint32(endpoint.GRHLen+x.n) || wc.SrcQP != a.qp.QPN() || !wc.GRH || wc.HasImm != x.imm {
			t.Errorf("QP %#x: completion %+v", x.p.qp.QPN(), wc)
		}
		if x.imm && wc.Imm != 0xabcd {
			t.Errorf("immediate %#x", wc.Imm)
		}
		if !bytes.Equal(x.buf[endpoint.GRHLen:endpoint.GRHLen+x.n], msg[:x.n]) {
			t.Errorf("QP %#x: the payload is not after the GRH", x.p.qp.QPN())
		}
		srcIP := a.nic.IP().As4()
		if x.buf[20] != 0x45 || !bytes.Equal(x.buf[32:36], srcIP[:]) || bytes.ContainsFunc(x.buf[:20], func(r rune) bool { return r != 0 }) {
			t.Errorf("QP %#x: GRH % x, want 20 zero bytes and an IPv4 header from %v", x.p.qp.QPN(), x.buf[:40], a.nic.IP())
		}
	}
	if got := len(a.scq.Poll(0)); got != 2 {
		t.Errorf("%d send completions, want 2", got)
	}

	// The wrong Q_Key, then no receive WQE: dropped; the sender completes.
	recv(b, 2000)
	send(endpoint.WRSend, b, 0x1111, 10)
	if got := b.rcq.Poll(0); len(got) != 0 {
		t.Errorf("a datagram with the wrong Q_Key was received: %+v", got)
	}
	send(endpoint.WRSend, c, 0x1111, 10)
	if got := c.rcq.Poll(0); len(got) != 0 {
		t.Errorf("a datagram with no receive WQE was received: %+v", got)
	}
	if got := a.scq.Poll(0); len(got) != 2 || got[0].Status != endpoint.StatusSuccess {
		t.Errorf("send completions of dropped datagrams: %+v", got)
	}
	// Still able to receive: the WQE posted above takes the next one.
	send(endpoint.WRSend, b, 0x2222, 64)
	if got := b.rcq.Poll(0); len(got) != 1 || got[0].ByteLen != endpoint.GRHLen+64 {
		t.Errorf("after the drops: %+v", got)
	}
	a.scq.Poll(0)

	// Above the MTU: a local length error, and the QP fails.
	big := mustMR(t, a.pd, make([]byte, 8192), allAccess)
	if err := a.qp.PostSend(endpoint.SendWR{WRID: 9, Opcode: endpoint.WRSend, Signaled: true,
		Local: endpoint.SGE{Addr: big.Addr, Length: 8192, LKey: big.LKey},
		UD:    &endpoint.UDDest{IP: b.nic.IP(), QPN: b.qp.QPN(), QKey: 0x2222}}); err != nil {
		t.Fatal(err)
	}
	if got := a.scq.Poll(0); len(got) != 1 || got[0].Status != endpoint.StatusLocalLength {
		t.Errorf("an 8 KiB datagram: %+v", got)
	}
	// A WR with no destination, or a WRITE: refused.
	for _, wr := range []endpoint.SendWR{{Opcode: endpoint.WRSend}, {Opcode: endpoint.WRWrite, UD: &endpoint.UDDest{IP: netip.MustParseAddr("10.0.0.1")}}} {
		if err := c.qp.PostSend(wr); err == nil {
			t.Errorf("UD PostSend(%+v) accepted", wr)
		}
	}
}
