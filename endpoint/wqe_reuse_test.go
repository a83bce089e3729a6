package endpoint_test

import (
	"bytes"
	"testing"

	"github.com/rocelab/rocelab/endpoint"
)

// TestStreamedWritesReuseWQEs: a stream of WRITEs of varying sizes, four
// in flight, each completion posting the next (as rdmacomm does), in both
// modes: every completion comes in order with its own WRID and length and
// every byte lands, although the WQEs of completed WRs carry the later
// ones (a stale field of a reused WQE would show as a wrong length, a lost
// completion or wrong bytes).
func TestStreamedWritesReuseWQEs(t *testing.T) {
	for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newStar(t, starOpts{n: 2, raw: true})
			a, b := connect(t, s.nics[0], s.nics[1], endpoint.QPConfig{Mode: mode}, endpoint.QPConfig{Mode: mode})
			const n, inFlight, most = 200, 4, 9000
			size := func(i int) int { return 1 + (i*2654435761)%most }
			src, dst := randBytes(7, n*most), make([]byte, n*most)
			local, remote := mustMR(t, a.pd, src, allAccess), mustMR(t, b.pd, dst, allAccess)
			post := func(i int) {
				err := a.qp.PostSend(endpoint.SendWR{WRID: uint64(i), Opcode: endpoint.WRWrite, Signaled: true,
					Local:      endpoint.SGE{Addr: local.Addr + uint64(i*most), Length: uint32(size(i)), LKey: local.LKey},
					RemoteAddr: remote.Addr + uint64(i*most), RKey: remote.RKey})
				if err != nil {
					t.Fatalf("post %d: %v", i, err)
				}
			}
			next, got := 0, 0
			a.scq.OnCompletion(func(wc endpoint.WC) {
				if wc.Status != endpoint.StatusSuccess || wc.WRID != uint64(got) || wc.ByteLen != uint32(size(got)) {
					t.Fatalf("completion %d: %+v, want WRID %d, %d bytes", got, wc, got, size(got))
				}
				got++
				if next < n {
					post(next)
					next++
				}
			})
			for next < inFlight {
				post(next)
				next++
			}
			s.e.Run()
			if got != n {
				t.Fatalf("%d completions of %d; qp %v %v", got, n, a.qp.State(), a.qp.Err())
			}
			for i := range n {
				at := i * most
				if !bytes.Equal(dst[at:at+size(i)], src[at:at+size(i)]) {
					t.Fatalf("write %d: bytes differ", i)
				}
			}
		})
	}
}
