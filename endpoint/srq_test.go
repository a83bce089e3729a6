package endpoint_test

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
)

// TestSRQ: two QPs of one NIC share a receive queue; SENDs from two
// senders land in its buffers in the order they were taken, each QP
// completes its own messages, a message with no WQE left waits (RNR) until
// one is posted, the limit fires once, and the QPs' own receive queues
// refuse WRs. In both modes.
func TestSRQ(t *testing.T) {
	for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newStar(t, starOpts{n: 3, raw: true})
			rx := s.nics[2]
			pd := rx.AllocPD()
			srq, err := pd.CreateSRQ(endpoint.SRQConfig{MaxWR: 8})
			if err != nil {
				t.Fatal(err)
			}
			limits := 0
			srq.OnLimit = func() { limits++ }
			rcq := rx.CreateCQ(0)
			var senders [2]*peer
			var receivers [2]*endpoint.QP
			for i := range senders {
				p := &peer{nic: s.nics[i], pd: s.nics[i].AllocPD(), scq: s.nics[i].CreateCQ(0), rcq: s.nics[i].CreateCQ(0)}
				p.qp, err = p.pd.CreateQP(endpoint.QPConfig{SendCQ: p.scq, RecvCQ: p.rcq, Mode: mode, Paths: 4})
				if err != nil {
					t.Fatal(err)
				}
				q, err := pd.CreateQP(endpoint.QPConfig{SendCQ: rx.CreateCQ(0), RecvCQ: rcq, SRQ: srq, Mode: mode, Paths: 4})
				if err != nil {
					t.Fatal(err)
				}
				if err := p.qp.Connect(q.Info()); err != nil {
					t.Fatal(err)
				}
				if err := q.Connect(p.qp.Info()); err != nil {
					t.Fatal(err)
				}
				senders[i], receivers[i] = p, q
			}
			s.e.Run()
			if err := receivers[0].PostRecv(endpoint.RecvWR{WRID: 1}); err == nil {
				t.Error("PostRecv on a QP with an SRQ: accepted")
			}
			if err := srq.Destroy(); err == nil {
				t.Error("Destroy of an SRQ two QPs use: accepted")
			}
			const size = 5000
			bufs := make([][]byte, 4)
			for i := range bufs {
				bufs[i] = make([]byte, size)
				mr := mustMR(t, pd, bufs[i], allAccess)
				if err := srq.PostRecv(endpoint.RecvWR{WRID: uint64(100 + i), Local: endpoint.SGE{Addr: mr.Addr, Length: size, LKey: mr.LKey}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := srq.SetLimit(2); err != nil {
				t.Fatal(err)
			}
			// Sender 0, then sender 1, then sender 0 again: WQEs 100, 101, 102.
			send := func(i int, seed uint64) []byte {
				p := senders[i]
				data := randBytes(seed, size)
				mr := mustMR(t, p.pd, data, allAccess)
				if err := p.qp.PostSend(endpoint.SendWR{WRID: seed, Opcode: endpoint.WRSend, Signaled: true,
					Local: endpoint.SGE{Addr: mr.Addr, Length: size, LKey: mr.LKey}}); err != nil {
					t.Fatal(err)
				}
				s.e.Run()
				return data
			}
			want := [][]byte{send(0, 1), send(1, 2), send(0, 3)}
			wcs := rcq.Poll(0)
			if len(wcs) != 3 {
				t.Fatalf("receive completions %+v", wcs)
			}
			for i, wc := range wcs {
				wantQP := receivers[[]int{0, 1, 0}[i]].QPN()
				if wc.Status != endpoint.StatusSuccess || wc.WRID != uint64(100+i) || wc.QPN != wantQP || wc.ByteLen != size {
					t.Errorf("completion %d: %+v, want WRID %d on QP %#x", i, wc, 100+i, wantQP)
				}
				if firstDiff(bufs[i], want[i]) >= 0 {
					t.Errorf("buffer %d does not hold message %d", i, i)
				}
			}
			if limits != 1 || srq.Limit() != 0 || srq.Len() != 1 {
				t.Errorf("limit fired %d times (armed %d, %d WQEs left); want once, disarmed, 1 left", limits, srq.Limit(), srq.Len())
			}
			// The last WQE, then none: the next SEND waits for one.
			send(1, 4)
			late := make([]byte, size)
			lateMR := mustMR(t, pd, late, allAccess)
			data := randBytes(5, size)
			mr := mustMR(t, senders[1].pd, data, allAccess)
			if err := senders[1].qp.PostSend(endpoint.SendWR{WRID: 5, Opcode: endpoint.WRSend, Signaled: true,
				Local: endpoint.SGE{Addr: mr.Addr, Length: size, LKey: mr.LKey}}); err != nil {
				t.Fatal(err)
			}
			s.e.RunFor(200 * clock.Microsecond)
			if got := len(rcq.Poll(0)); got != 1 {
				t.Fatalf("%d receive completions before the last WQE was posted, want 1 (message 4)", got)
			}
			if err := srq.PostRecv(endpoint.RecvWR{WRID: 200, Local: endpoint.SGE{Addr: lateMR.Addr, Length: size, LKey: lateMR.LKey}}); err != nil {
				t.Fatal(err)
			}
			s.e.Run()
			wcs = rcq.Poll(0)
			if len(wcs) != 1 || wcs[0].WRID != 200 || wcs[0].Status != endpoint.StatusSuccess || firstDiff(late, data) >= 0 {
				t.Fatalf("after the WQE came: %+v", wcs)
			}
			for _, q := range receivers {
				q.Destroy()
			}
			if err := srq.Destroy(); err != nil {
				t.Errorf("Destroy after its QPs: %v", err)
			}
			if err := srq.PostRecv(endpoint.RecvWR{WRID: 1}); err == nil {
				t.Error("PostRecv on a destroyed SRQ: accepted")
			}
		})
	}
}
