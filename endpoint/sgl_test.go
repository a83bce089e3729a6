package endpoint_test

import (
	"bytes"
	"testing"

	"github.com/rocelab/rocelab/endpoint"
)

// TestScatterGather: a SEND gathered from three regions lands scattered
// over two receive buffers, a WRITE gathered from two lands whole, a
// READ lands scattered over three, in both modes and across packets
// (entries of 3,000 bytes and more on a 4 KiB MTU); a list of more than
// MaxSGE entries fails the WR.
func TestScatterGather(t *testing.T) {
	for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newStar(t, starOpts{n: 2, raw: true})
			a, b := connect(t, s.nics[0], s.nics[1], endpoint.QPConfig{Mode: mode, Paths: 4}, endpoint.QPConfig{Mode: mode, Paths: 4})
			s.e.Run()
			// pieces registers bufs in p's PD and returns their entries.
			pieces := func(p *peer, bufs ...[]byte) []endpoint.SGE {
				var out []endpoint.SGE
				for _, b := range bufs {
					mr := mustMR(t, p.pd, b, allAccess)
					out = append(out, endpoint.SGE{Addr: mr.Addr, Length: uint32(len(b)), LKey: mr.LKey})
				}
				return out
			}
			run := func(p *peer, wr endpoint.SendWR) {
				t.Helper()
				st, done := endpoint.StatusSuccess, false
				p.scq.OnCompletion(func(wc endpoint.WC) { st, done = wc.Status, true })
				if err := p.qp.PostSend(wr); err != nil {
					t.Fatal(err)
				}
				s.e.Run()
				p.scq.OnCompletion(nil)
				if !done || st != endpoint.StatusSuccess {
					t.Fatalf("%v: completion %v (completed: %v)", wr.Opcode, st, done)
				}
			}
			msg := randBytes(1, 3000+5000+100)
			src := pieces(a, msg[:3000], msg[3000:8000], msg[8000:])
			r1, r2 := make([]byte, 4000), make([]byte, 6000)
			dst := pieces(b, r1, r2)
			if err := b.qp.PostRecv(endpoint.RecvWR{WRID: 9, Local: dst[0], More: dst[1:]}); err != nil {
				t.Fatal(err)
			}
			run(a, endpoint.SendWR{WRID: 1, Opcode: endpoint.WRSend, Signaled: true, Local: src[0], More: src[1:]})
			wcs := b.rcq.Poll(0)
			if len(wcs) != 1 || wcs[0].ByteLen != uint32(len(msg)) {
				t.Fatalf("receive completions %+v", wcs)
			}
			if got := append(append([]byte{}, r1...), r2[:len(msg)-4000]...); !bytes.Equal(got, msg) {
				t.Errorf("SEND: the message did not land across the receive list (first difference at %d)", firstDiff(got, msg))
			}
			if bytes.ContainsFunc(r2[len(msg)-4000:], func(r rune) bool { return r != 0 }) {
				t.Error("SEND: bytes past the message in the receive list")
			}

			whole := make([]byte, len(msg))
			wmr := mustMR(t, b.pd, whole, allAccess)
			run(a, endpoint.SendWR{WRID: 2, Opcode: endpoint.WRWrite, Signaled: true, Local: src[0], More: src[1:], RemoteAddr: wmr.Addr, RKey: wmr.RKey})
			if !bytes.Equal(whole, msg) {
				t.Errorf("WRITE: the gathered message differs at %d", firstDiff(whole, msg))
			}

			back := [][]byte{make([]byte, 100), make([]byte, 7000), make([]byte, 1000)}
			rd := pieces(a, back...)
			run(a, endpoint.SendWR{WRID: 3, Opcode: endpoint.WRRead, Signaled: true, Local: rd[0], More: rd[1:], RemoteAddr: wmr.Addr, RKey: wmr.RKey})
			if got := bytes.Join(back, nil); !bytes.Equal(got, msg) {
				t.Errorf("READ: the response did not land across the list (first difference at %d)", firstDiff(got, msg))
			}

			many := make([]endpoint.SGE, endpoint.MaxSGE+1)
			for i := range many {
				many[i] = src[0]
			}
			var st endpoint.Status
			a.scq.OnCompletion(func(wc endpoint.WC) { st = wc.Status })
			if err := a.qp.PostSend(endpoint.SendWR{WRID: 4, Opcode: endpoint.WRWrite, Signaled: true, Local: many[0], More: many[1:], RemoteAddr: wmr.Addr, RKey: wmr.RKey}); err != nil {
				t.Fatal(err)
			}
			s.e.Run()
			if st != endpoint.StatusLocalProtection {
				t.Errorf("a WR of %d entries completed %v, want a local protection error", len(many), st)
			}
		})
	}
}
