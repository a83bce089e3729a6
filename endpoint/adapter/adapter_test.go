package adapter_test

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/endpoint/adapter"
	"github.com/rocelab/rocelab/wire/pipe"
)

// side is one NIC's adapter QP with a buffer of n bytes (none when 0).
type side struct {
	q   adapter.QP
	cq  *endpoint.CQ
	nic *endpoint.NIC
}

// pair cables two raw NICs back to back and connects a QP on each.
func pair(t *testing.T, n int) (*sim.Engine, side, side) {
	t.Helper()
	e := sim.New(1)
	mk := func(i byte) side {
		nic, err := endpoint.NewNIC(endpoint.Options{Name: "n", Sched: e, Rand: e.Rand("n"), Raw: true,
			MAC: [6]byte{2, 0, 0, 0, 0, i}, IP: netip.AddrFrom4([4]byte{10, 0, 0, i})})
		if err != nil {
			t.Fatal(err)
		}
		pd := nic.AllocPD()
		cq := nic.CreateCQ(0)
		qp, err := pd.CreateQP(endpoint.QPConfig{SendCQ: cq, RecvCQ: cq, Mode: endpoint.ModeRoCEv2})
		if err != nil {
			t.Fatal(err)
		}
		s := side{q: adapter.QP{QP: qp}, cq: cq, nic: nic}
		if n > 0 {
			s.q.Buf = make([]byte, n)
			if s.q.MR, err = pd.RegMR(s.q.Buf, adapter.Access); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	a, b := mk(1), mk(2)
	a.nic.Attach(pipe.New(e, clock.Microsecond, b.nic))
	b.nic.Attach(pipe.New(e, clock.Microsecond, a.nic))
	return e, a, b
}

func connect(t *testing.T, a, b side) {
	t.Helper()
	if err := a.q.QP.Connect(b.q.QP.Info()); err != nil {
		t.Fatal(err)
	}
	if err := b.q.QP.Connect(a.q.QP.Info()); err != nil {
		t.Fatal(err)
	}
}

// TestRefusals: every call checks its operation and its span of the
// buffer (without overflow) before anything reaches the QP, and a QP
// without a buffer refuses them all.
func TestRefusals(t *testing.T) {
	_, a, _ := pair(t, 4096)
	_, none, _ := pair(t, 0)
	const huge = ^uint64(0) - 10
	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"unknown op", func() error { return a.q.PostSend(adapter.WR{Op: "atomic"}) }, adapter.ErrUnknownOp},
		{"send past the end", func() error { return a.q.PostSend(adapter.WR{Op: "send", Offset: 4000, Len: 200}) }, adapter.ErrOutside},
		{"send offset overflows", func() error { return a.q.PostSend(adapter.WR{Op: "send", Offset: huge, Len: 100}) }, adapter.ErrOutside},
		{"recv past the end", func() error { return a.q.PostRecv(adapter.Recv{Offset: 1 << 40, Len: 1}) }, adapter.ErrOutside},
		{"recv offset overflows", func() error { return a.q.PostRecv(adapter.Recv{Offset: huge, Len: 100}) }, adapter.ErrOutside},
		{"read past the end", func() error { _, err := a.q.Read(4090, 7); return err }, adapter.ErrOutside},
		{"read offset overflows", func() error { _, err := a.q.Read(huge, 100); return err }, adapter.ErrOutside},
		{"write past the end", func() error { return a.q.Write(4095, []byte{1, 2}) }, adapter.ErrOutside},
		{"send without a buffer", func() error { return none.q.PostSend(adapter.WR{Op: "send"}) }, adapter.ErrNoBuffer},
		{"read without a buffer", func() error { _, err := none.q.Read(0, 0); return err }, adapter.ErrNoBuffer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	// The last byte and an empty span at the end are inside.
	if err := a.q.Write(4095, []byte{7}); err != nil {
		t.Errorf("write of the last byte: %v", err)
	}
	if b, err := a.q.Read(4096, 0); err != nil || len(b) != 0 {
		t.Errorf("empty read at the end: %v, %v", b, err)
	}
	// Within the buffer, a refusal is the QP's own: not connected yet.
	if err := a.q.PostSend(adapter.WR{Op: "send", Len: 10}); err == nil || errors.Is(err, adapter.ErrOutside) {
		t.Errorf("send before connect: %v, want the QP's refusal", err)
	}
}

// TestVerbs: a SEND lands in the peer's posted receive and a WRITE in its
// buffer, both from the offsets named, and their completions read as the
// adapter reports them.
func TestVerbs(t *testing.T) {
	e, a, b := pair(t, 8192)
	connect(t, a, b)
	if err := a.q.Write(100, []byte("hello, peer")); err != nil {
		t.Fatal(err)
	}
	if err := b.q.PostRecv(adapter.Recv{WRID: 9, Offset: 1000, Len: 64}); err != nil {
		t.Fatal(err)
	}
	if err := a.q.PostSend(adapter.WR{WRID: 1, Op: "send", Offset: 100, Len: 11}); err != nil {
		t.Fatal(err)
	}
	if err := a.q.PostSend(adapter.WR{WRID: 2, Op: "write", Offset: 100, Len: 5, RemoteAddr: b.q.MR.Addr + 5000, RKey: b.q.MR.RKey}); err != nil {
		t.Fatal(err)
	}
	e.Run()
	if got, _ := b.q.Read(1000, 11); !bytes.Equal(got, []byte("hello, peer")) {
		t.Errorf("received %q", got)
	}
	if got, _ := b.q.Read(5000, 5); !bytes.Equal(got, []byte("hello")) {
		t.Errorf("written %q", got)
	}
	var sent, recvd []adapter.Completion
	for _, wc := range a.cq.Poll(0) {
		sent = append(sent, adapter.CompletionOf(wc))
	}
	for _, wc := range b.cq.Poll(0) {
		recvd = append(recvd, adapter.CompletionOf(wc))
	}
	if len(sent) != 2 || sent[0].WRID != 1 || sent[1].WRID != 2 || sent[0].Status != "success" || sent[1].Opcode != "RDMA_WRITE" {
		t.Errorf("sender completions %+v", sent)
	}
	if len(recvd) != 1 || recvd[0] != (adapter.Completion{WRID: 9, Status: "success", Opcode: "RECV", ByteLen: 11}) {
		t.Errorf("receiver completions %+v", recvd)
	}
}

// TestCompletionOfError: a failed completion carries the endpoint's
// reason.
func TestCompletionOfError(t *testing.T) {
	c := adapter.CompletionOf(endpoint.WC{WRID: 3, Status: endpoint.StatusRemoteAccess, Err: errors.New("rkey 0x99 unknown")})
	if c.Error != "rkey 0x99 unknown" || c.Status != endpoint.StatusRemoteAccess.String() {
		t.Errorf("%+v", c)
	}
}
