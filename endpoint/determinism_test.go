package endpoint_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/wire"
)

// TestDeterminism: the same seed gives the same counters, on a lossy
// payload-free run with four QP pairs and DCQCN.
func TestDeterminism(t *testing.T) {
	run := func(seed uint64) []telemetry.Sample {
		s := newStar(t, starOpts{n: 3, loss: 0.005, seed: seed})
		for i := range 4 {
			a, b := connect(t, s.nics[i%2], s.nics[2], endpoint.QPConfig{Mode: endpoint.Mode(i % 2), CC: "dcqcn", Paths: 4},
				endpoint.QPConfig{Mode: endpoint.Mode(i % 2), CC: "dcqcn"})
			lmr, _ := a.pd.RegMRLen(8<<20, allAccess)
			rmr, _ := b.pd.RegMRLen(8<<20, allAccess)
			for k := range 8 {
				op := []endpoint.WROpcode{endpoint.WRWrite, endpoint.WRRead}[k%2]
				if err := a.qp.PostSend(endpoint.SendWR{WRID: uint64(k), Opcode: op, Signaled: true,
					Local:      endpoint.SGE{Addr: lmr.Addr + uint64(k)<<20, Length: 1 << 20, LKey: lmr.LKey},
					RemoteAddr: rmr.Addr + uint64(k)<<20, RKey: rmr.RKey}); err != nil {
					t.Fatal(err)
				}
			}
		}
		s.e.Run()
		srcs := []telemetry.Source{s.sw}
		for _, n := range s.nics {
			srcs = append(srcs, n)
		}
		return telemetry.Gather(srcs...)
	}
	a, b := run(1), run(1)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different counters (-first +second):\n%s", diff)
	}
	if telemetry.Sum(a, "qp_retransmits_total") == 0 {
		t.Error("no retransmissions: the run did not exercise loss")
	}
	if diff := cmp.Diff(a, run(2)); diff == "" {
		t.Error("different seeds gave identical counters")
	}
	var _ = wire.OnWireBytes
}
