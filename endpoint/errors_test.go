package endpoint_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire/metaroce"
)

type fault struct {
	name   string
	op     endpoint.WROpcode
	access endpoint.Access // of the remote region
	rkey   func(mr *endpoint.MR) uint32
	off    uint64 // added to the remote address
	recv   uint32 // receive buffer length (SEND)
	want   endpoint.Status
}

func TestRemoteErrors(t *testing.T) {
	rkey := func(mr *endpoint.MR) uint32 { return mr.RKey }
	faults := []fault{
		{"write bad rkey", endpoint.WRWrite, allAccess, func(mr *endpoint.MR) uint32 { return mr.RKey + 1 }, 0, 0, endpoint.StatusRemoteAccess},
		{"write out of bounds", endpoint.WRWrite, allAccess, rkey, 8192, 0, endpoint.StatusRemoteAccess},
		{"write no permission", endpoint.WRWrite, endpoint.AccessRemoteRead, rkey, 0, 0, endpoint.StatusRemoteAccess},
		{"read no permission", endpoint.WRRead, endpoint.AccessRemoteWrite, rkey, 0, 0, endpoint.StatusRemoteAccess},
		{"read out of bounds", endpoint.WRRead, allAccess, rkey, 2 * 4096, 0, endpoint.StatusRemoteAccess},
		{"send too long", endpoint.WRSend, allAccess, rkey, 0, 100, endpoint.StatusRemoteInvalidRequest},
	}
	for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
		for _, f := range faults {
			t.Run(fmt.Sprintf("%v/%s", mode, f.name), func(t *testing.T) {
				s := newStar(t, starOpts{n: 2, raw: true})
				a, b := connect(t, s.nics[0], s.nics[1], endpoint.QPConfig{Mode: mode}, endpoint.QPConfig{Mode: mode})
				const size = 3 * 4096
				lmr := mustMR(t, a.pd, make([]byte, size), allAccess)
				rmr := mustMR(t, b.pd, make([]byte, 4*4096), f.access)
				if f.recv > 0 {
					if err := b.qp.PostRecv(endpoint.RecvWR{WRID: 5, Local: endpoint.SGE{Addr: rmr.Addr, Length: f.recv, LKey: rmr.LKey}}); err != nil {
						t.Fatal(err)
					}
				}
				for id := range uint64(2) {
					if err := a.qp.PostSend(endpoint.SendWR{WRID: 10 + id, Opcode: f.op, Signaled: true,
						Local:      endpoint.SGE{Addr: lmr.Addr, Length: size, LKey: lmr.LKey},
						RemoteAddr: rmr.Addr + f.off, RKey: f.rkey(rmr)}); err != nil {
						t.Fatal(err)
					}
				}
				s.e.Run()
				var got []endpoint.Status
				for _, wc := range a.scq.Poll(0) {
					got = append(got, wc.Status)
				}
				if diff := cmp.Diff([]endpoint.Status{f.want, endpoint.StatusFlush}, got); diff != "" {
					t.Errorf("requester completions (-want +got):\n%s", diff)
				}
				if a.qp.State() != endpoint.StateError || b.qp.State() != endpoint.StateError {
					t.Errorf("states %v, %v; want ERROR, ERROR", a.qp.State(), b.qp.State())
				}
				if err := a.qp.PostSend(endpoint.SendWR{Opcode: endpoint.WRWrite}); err == nil {
					t.Error("post send in ERROR succeeded")
				}
			})
		}
	}
}

func TestRetryExceeded(t *testing.T) {
	for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newStar(t, starOpts{n: 2, raw: true})
			a, b := connect(t, s.nics[0], s.nics[1], endpoint.QPConfig{Mode: mode, RetryCount: 3}, endpoint.QPConfig{Mode: mode})
			s.e.Run()
			lmr := mustMR(t, a.pd, make([]byte, 8192), allAccess)
			rmr := mustMR(t, b.pd, make([]byte, 8192), allAccess)
			b.qp.Destroy() // the peer dies: its packets go to no QP
			for id := range uint64(2) {
				if err := a.qp.PostSend(endpoint.SendWR{WRID: id, Opcode: endpoint.WRWrite, Signaled: true,
					Local: endpoint.SGE{Addr: lmr.Addr, Length: 8192, LKey: lmr.LKey}, RemoteAddr: rmr.Addr, RKey: rmr.RKey}); err != nil {
					t.Fatal(err)
				}
			}
			start := s.e.Now()
			s.e.Run()
			var got []endpoint.Status
			for _, wc := range a.scq.Poll(0) {
				got = append(got, wc.Status)
			}
			if diff := cmp.Diff([]endpoint.Status{endpoint.StatusRetryExceeded, endpoint.StatusFlush}, got); diff != "" {
				t.Errorf("completions (-want +got):\n%s", diff)
			}
			st := a.qp.Stats()
			if a.qp.State() != endpoint.StateError || st.Timeouts != 4 {
				t.Errorf("state %v, %d timeouts; want ERROR after 4", a.qp.State(), st.Timeouts)
			}
			// 200 µs × (1+2+4+8): the backoff doubles.
			if el := s.e.Now().Sub(start); el < 3000*clock.Microsecond || el > 3100*clock.Microsecond {
				t.Errorf("failed after %v, want ≈3 ms of backoff", el)
			}
		})
	}
}

func TestRNR(t *testing.T) {
	for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newStar(t, starOpts{n: 2, raw: true})
			a, b := connect(t, s.nics[0], s.nics[1], endpoint.QPConfig{Mode: mode, RNRRetry: 3}, endpoint.QPConfig{Mode: mode})
			s.e.Run()
			src := randBytes(1, 10000)
			lmr := mustMR(t, a.pd, src, allAccess)
			dst := make([]byte, 10000)
			rmr := mustMR(t, b.pd, dst, allAccess)
			post := func(id uint64) {
				if err := a.qp.PostSend(endpoint.SendWR{WRID: id, Opcode: endpoint.WRSend, Signaled: true,
					Local: endpoint.SGE{Addr: lmr.Addr, Length: 10000, LKey: lmr.LKey}}); err != nil {
					t.Fatal(err)
				}
			}
			// A receive posted 25 µs late: RNR NAKs, then success.
			post(1)
			s.e.AfterFunc(25*clock.Microsecond, func() {
				_ = b.qp.PostRecv(endpoint.RecvWR{WRID: 9, Local: endpoint.SGE{Addr: rmr.Addr, Length: 10000, LKey: rmr.LKey}})
			})
			s.e.Run()
			wcs := a.scq.Poll(0)
			if len(wcs) != 1 || wcs[0].Status != endpoint.StatusSuccess || a.qp.Stats().RNRRx == 0 {
				t.Fatalf("late receive: completions %+v, RNR NAKs %d", wcs, a.qp.Stats().RNRRx)
			}
			if i := firstDiff(src, dst); i >= 0 {
				t.Fatalf("data differs at %d", i)
			}
			// No receive at all: the RNR retry count runs out.
			post(2)
			s.e.Run()
			wcs = a.scq.Poll(0)
			if len(wcs) != 1 || wcs[0].Status != endpoint.StatusRNRRetryExceeded || a.qp.State() != endpoint.StateError {
				t.Fatalf("no receive: completions %+v state %v", wcs, a.qp.State())
			}
		})
	}
}

func TestNegotiation(t *testing.T) {
	tests := []struct {
		name      string
		a, b      endpoint.Mode
		lie       bool // b claims MetaRoCE in its ConnInfo but speaks RoCEv2
		want      endpoint.Mode
		fallbacks int64
	}{
		{"both metaroce", endpoint.ModeMetaRoCE, endpoint.ModeMetaRoCE, false, endpoint.ModeMetaRoCE, 0},
		{"peer rocev2", endpoint.ModeMetaRoCE, endpoint.ModeRoCEv2, false, endpoint.ModeRoCEv2, 0},
		{"peer claims but ignores hello", endpoint.ModeMetaRoCE, endpoint.ModeRoCEv2, true, endpoint.ModeRoCEv2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStar(t, starOpts{n: 2, raw: true})
			mk := func(p *peer, m endpoint.Mode) {
				qp, err := p.pd.CreateQP(endpoint.QPConfig{Mode: m, SendCQ: p.scq, RecvCQ: p.rcq})
				if err != nil {
					t.Fatal(err)
				}
				p.qp = qp
			}
			a := &peer{nic: s.nics[0], pd: s.nics[0].AllocPD(), scq: s.nics[0].CreateCQ(0), rcq: s.nics[0].CreateCQ(0)}
			b := &peer{nic: s.nics[1], pd: s.nics[1].AllocPD(), scq: s.nics[1].CreateCQ(0), rcq: s.nics[1].CreateCQ(0)}
			mk(a, tc.a)
			mk(b, tc.b)
			bi := b.qp.Info()
			if tc.lie {
				bi.Caps |= metaroce.CapMetaRoCE
			}
			if err := a.qp.Connect(bi); err != nil {
				t.Fatal(err)
			}
			if err := b.qp.Connect(a.qp.Info()); err != nil {
				t.Fatal(err)
			}
			xfer(t, s, a, b, endpoint.WRWrite, 100000, 1)
			xfer(t, s, b, a, endpoint.WRSend, 100000, 2)
			if a.qp.Mode() != tc.want || b.qp.Mode() != tc.want {
				t.Errorf("modes %v/%v, want %v", a.qp.Mode(), b.qp.Mode(), tc.want)
			}
			if got := a.qp.Stats().Fallbacks; got != tc.fallbacks {
				t.Errorf("fallbacks %d, want %d", got, tc.fallbacks)
			}
		})
	}
}
