package endpoint_test

import (
	"testing"

	"github.com/rocelab/rocelab/endpoint"
)

// TestZeroLengthRemoteOps: a zero-length RDMA WRITE or READ touches no
// memory, so the responder does not check its R_Key (the InfiniBand specification): UCX
// flushes an RC connection with one whose R_Key is 0. Both succeed, in
// both modes; a one-byte WRITE with the same R_Key still fails.
func TestZeroLengthRemoteOps(t *testing.T) {
	for _, mode := range []endpoint.Mode{endpoint.ModeRoCEv2, endpoint.ModeMetaRoCE} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newStar(t, starOpts{n: 2, raw: true})
			a, _ := connect(t, s.nics[0], s.nics[1], endpoint.QPConfig{Mode: mode}, endpoint.QPConfig{Mode: mode})
			s.e.Run()
			buf := mustMR(t, a.pd, make([]byte, 16), allAccess)
			for i, c := range []struct {
				op   endpoint.WROpcode
				n    uint32
				want endpoint.Status
			}{
				{endpoint.WRWrite, 0, endpoint.StatusSuccess},
				{endpoint.WRRead, 0, endpoint.StatusSuccess},
				{endpoint.WRWrite, 1, endpoint.StatusRemoteAccess},
			} {
				var got []endpoint.WC
				a.scq.OnCompletion(func(wc endpoint.WC) { got = append(got, wc) })
				if err := a.qp.PostSend(endpoint.SendWR{WRID: uint64(i), Opcode: c.op, Signaled: true,
					Local: endpoint.SGE{Addr: buf.Addr, Length: c.n, LKey: buf.LKey}, RemoteAddr: 0, RKey: 0}); err != nil {
					t.Fatal(err)
				}
				s.e.Run()
				if len(got) != 1 || got[0].Status != c.want {
					t.Errorf("%v of %d bytes to R_Key 0: %+v, want %v", c.op, c.n, got, c.want)
				}
			}
		})
	}
}
