package node_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
)

// TestAdapterVerbs drives two back-to-back endpoint nodes verb by verb
// through the compliance adapter routes: a WRITE, a SEND with immediate
// into a posted receive and a READ move the bytes written with PUT mem
// and read back with GET mem, and each completes once, with the verbs'
// names.
func TestAdapterVerbs(t *testing.T) {
	a, b := backToBack(t)
	ctx := t.Context()
	qa, err := a.CreateQP(ctx, nodeapi.QPRequest{Mode: endpoint.ModeRoCEv2, Buffer: 1 << 16}) // no NIC: the first
	if err != nil {
		t.Fatal(err)
	}
	qb, err := b.CreateQP(ctx, nodeapi.QPRequest{NIC: "gpu0", Buffer: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ConnectQP(ctx, qa.ID, nodeapi.ConnectRequest{Remote: qb.Conn}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ConnectQP(ctx, qb.ID, nodeapi.ConnectRequest{Remote: qa.Conn}); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("rocelab!"), 1000)
	if err := a.WriteMem(ctx, qa.ID, 100, data); err != nil {
		t.Fatal(err)
	}
	if err := b.PostRecv(ctx, qb.ID, nodeapi.RecvRequest{WRID: 50, Offset: 20000, Len: 9000}); err != nil {
		t.Fatal(err)
	}
	for _, wr := range []nodeapi.WorkRequest{
		{WRID: 1, Op: "write", Offset: 100, Len: 8000, RemoteAddr: qb.Buffer.Addr + 4, RKey: qb.Buffer.RKey},
		{WRID: 2, Op: "send_imm", Offset: 100, Len: 8000, Imm: 0xBEEF},
		{WRID: 3, Op: "read", Offset: 40000, Len: 8000, RemoteAddr: qb.Buffer.Addr + 4, RKey: qb.Buffer.RKey},
	} {
		if err := a.PostSend(ctx, qa.ID, wr); err != nil {
			t.Fatalf("post %s: %v", wr.Op, err)
		}
	}
	collect := func(c *nodeapi.Client, id, n int) string {
		var got string
		deadline := time.Now().Add(10 * time.Second)
		for k := 0; k < n; {
			wcs, err := c.Completions(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, wc := range wcs {
				got += fmt.Sprintf("[%d %s %s %d %#x]", wc.WRID, wc.Opcode, wc.Status, wc.ByteLen, wc.Imm)
				k++
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d completions in 10 s: %s", k, n, got)
			}
			time.Sleep(5 * time.Millisecond)
		}
		return got
	}
	if got, want := collect(a, qa.ID, 3), "[1 RDMA_WRITE success 8000 0x0][2 SEND success 8000 0x0][3 RDMA_READ success 8000 0x0]"; got != want {
		t.Errorf("requester completions %s, want %s", got, want)
	}
	if got, want := collect(b, qb.ID, 1), "[50 RECV success 8000 0xbeef]"; got != want {
		t.Errorf("responder completions %s, want %s", got, want)
	}
	for _, m := range []struct {
		c      *nodeapi.Client
		id     int
		offset uint64
	}{{b, qb.ID, 4}, {b, qb.ID, 20000}, {a, qa.ID, 40000}} {
		got, err := m.c.ReadMem(ctx, m.id, m.offset, 8000)
		if err != nil || !bytes.Equal(got, data[:8000]) {
			t.Errorf("qp %d bytes at %d: %v, equal %v", m.id, m.offset, err, bytes.Equal(got, data[:8000]))
		}
	}
	if wcs, err := a.Completions(ctx, qa.ID); err != nil || len(wcs) != 0 {
		t.Errorf("completions after draining: %v %v, want none", wcs, err)
	}
}

// TestAdapterErrors checks the adapter routes' refusals.
func TestAdapterErrors(t *testing.T) {
	a, _ := backToBack(t)
	ctx := t.Context()
	q, err := a.CreateQP(ctx, nodeapi.QPRequest{Buffer: 4096})
	if err != nil {
		t.Fatal(err)
	}
	bare, err := a.CreateQP(ctx, nodeapi.QPRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		call   func() error
		status int
	}{
		{"unknown op", func() error { return a.PostSend(ctx, q.ID, nodeapi.WorkRequest{Op: "atomic"}) }, 400},
		{"send past the buffer", func() error { return a.PostSend(ctx, q.ID, nodeapi.WorkRequest{Op: "send", Offset: 4000, Len: 200}) }, 400},
		{"send before connect", func() error { return a.PostSend(ctx, q.ID, nodeapi.WorkRequest{Op: "send", Len: 10}) }, 409},
		{"recv past the buffer", func() error { return a.PostRecv(ctx, q.ID, nodeapi.RecvRequest{Offset: 1 << 40, Len: 1}) }, 400},
		{"no such qp", func() error { _, err := a.Completions(ctx, 999); return err }, 404},
		{"qp without a buffer", func() error { _, err := a.ReadMem(ctx, bare.ID, 0, 1); return err }, 409},
		{"read past the buffer", func() error { _, err := a.ReadMem(ctx, q.ID, 4000, 100); return err }, 400},
		{"write past the buffer", func() error { return a.WriteMem(ctx, q.ID, 4090, make([]byte, 7)) }, 400},
	} {
		if err := tc.call(); !isStatus(err, tc.status) {
			t.Errorf("%s: %v, want status %d", tc.name, err, tc.status)
		}
	}
}
