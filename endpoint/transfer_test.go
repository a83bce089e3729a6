package endpoint_test

import (
	"fmt"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
)

// xfer runs one operation of size bytes from a to b and checks the
// completions and the destination memory.
func xfer(t *testing.T, s *star, a, b *peer, op endpoint.WROpcode, size int, seed uint64) clock.Duration {
	t.Helper()
	src := randBytes(seed, size)
	dst := make([]byte, size)
	var local, remote *endpoint.MR
	switch op {
	case endpoint.WRRead:
		// READ: a reads b's src into its dst.
		local = mustMR(t, a.pd, dst, allAccess)
		remote = mustMR(t, b.pd, src, allAccess)
	default:
		local = mustMR(t, a.pd, src, allAccess)
		remote = mustMR(t, b.pd, dst, allAccess)
	}
	send := op == endpoint.WRSend || op == endpoint.WRSendImm
	if send || op == endpoint.WRWriteImm {
		wr := endpoint.RecvWR{WRID: 77}
		if send {
			wr.Local = endpoint.SGE{Addr: remote.Addr, Length: uint32(size), LKey: remote.LKey}
		}
		if err := b.qp.PostRecv(wr); err != nil {
			t.Fatal(err)
		}
	}
	start := s.e.Now()
	err := a.qp.PostSend(endpoint.SendWR{WRID: 1, Opcode: op, Signaled: true, Imm: 0xfeed,
		Local:      endpoint.SGE{Addr: local.Addr, Length: uint32(size), LKey: local.LKey},
		RemoteAddr: remote.Addr, RKey: remote.RKey})
	if err != nil {
		t.Fatal(err)
	}
	var done clock.Time
	a.scq.OnCompletion(func(wc endpoint.WC) {
		if wc.Status != endpoint.StatusSuccess {
			t.Errorf("send completion: %v (%v)", wc.Status, wc.Err)
		}
		done = s.e.Now()
	})
	s.e.Run()
	a.scq.OnCompletion(nil)
	if done == 0 {
		t.Fatalf("%v of %d bytes: no completion; qp state %v err %v, stats %+v", op, size, a.qp.State(), a.qp.Err(), a.qp.Stats())
	}
	if send || op == endpoint.WRWriteImm {
		wcs := b.rcq.Poll(0)
		if len(wcs) != 1 || wcs[0].Status != endpoint.StatusSuccess || wcs[0].ByteLen != uint32(size) {
			t.Fatalf("receive completions %+v", wcs)
		}
		wantImm := op == endpoint.WRSendImm || op == endpoint.WRWriteImm
		if wcs[0].HasImm != wantImm || wantImm && wcs[0].Imm != 0xfeed {
			t.Errorf("receive completion imm %v %#x", wcs[0].HasImm, wcs[0].Imm)
		}
	}
	if i := firstDiff(src, dst); i >= 0 {
		t.Fatalf("%v of %d bytes: memory differs from byte %d", op, size, i)
	}
	local.Dereg()
	remote.Dereg()
	return done.Sub(start)
}

func TestTransfers(t *testing.T) {
	ops := []endpoint.WROpcode{endpoint.WRWrite, endpoint.WRWriteImm, endpoint.WRSend, endpoint.WRSendImm, endpoint.WRRead}
	sizes := []int{1, 7, 4096, 4097, 65536 + 3, 1 << 20}
	for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
		for _, psn := range []uint32{0x123, 0xFFFFF0} {
			t.Run(fmt.Sprintf("%v/psn%#x", mode, psn), func(t *testing.T) {
				s := newStar(t, starOpts{n: 2, raw: true})
				a, b := connect(t, s.nics[0], s.nics[1],
					endpoint.QPConfig{Mode: mode, PSN: psn, HasPSN: true, Paths: 4},
					endpoint.QPConfig{Mode: mode, PSN: psn + 5, HasPSN: true, Paths: 4})
				s.e.Run()
				if a.qp.Mode() != mode || b.qp.Mode() != mode {
					t.Fatalf("modes %v %v, want %v", a.qp.Mode(), b.qp.Mode(), mode)
				}
				for i, op := range ops {
					for j, size := range sizes {
						xfer(t, s, a, b, op, size, uint64(i*100+j))
						xfer(t, s, b, a, op, size, uint64(i*100+j+50))
					}
				}
			})
		}
	}
}

// TestLargeTransfers moves 64 MiB by WRITE and READ in both modes, across
// the PSN wrap.
func TestLargeTransfers(t *testing.T) {
	for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newStar(t, starOpts{n: 2, raw: true})
			a, b := connect(t, s.nics[0], s.nics[1],
				endpoint.QPConfig{Mode: mode, PSN: 0xFFF000, HasPSN: true, Paths: 8},
				endpoint.QPConfig{Mode: mode, PSN: 0xFFFF00, HasPSN: true, Paths: 8})
			s.e.Run()
			for i, op := range []endpoint.WROpcode{endpoint.WRWrite, endpoint.WRRead} {
				d := xfer(t, s, a, b, op, 64<<20, uint64(i))
				t.Logf("%v 64 MiB: %v, %.2f Gb/s", op, d, float64(64<<23)/d.Seconds()/1e9)
			}
		})
	}
}
