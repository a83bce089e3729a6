package switchmodel_test

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
)

// TestDynamicThreshold: n hosts at 100G send lossy TC0 traffic to one 25G
// port. With α = 1/8 a PG may hold α × (free shared buffer) after its
// packet is admitted, so n congested PGs in steady state each hold
// x = α(S − n·x), x = αS/(1+nα): one congested queue never holds more than
// α/(1+α) = 1/9 of the shared pool, two PGs 1/10 each.
//
//	n = 1: ports 100G + 25G; reserve 2×8×4096 = 65 536; headroom (TC3 only)
//	       55 932 (100G) + 3×25e9×1e-6/8 + 2×9216 = 27 807 (25G)
//	       S = 33 554 432 − 65 536 − 83 739 = 33 405 157; S/9 = 3 711 684
//	n = 2: reserve 98 304; headroom 2×55 932 + 27 807 = 139 671
//	       S = 33 316 457; S/10 = 3 331 645
func TestDynamicThreshold(t *testing.T) {
	tests := []struct {
		n     int
		S     int64
		bound int64
	}{
		{1, 33_405_157, 33_405_157 / 9},
		{2, 33_316_457, 33_316_457 / 10},
	}
	for _, tc := range tests {
		e := sim.New(1)
		rs := append(rates(tc.n, g100), 25*clock.Gbps)
		sw := newSwitch(t, e, "sw", switchmodel.DefaultConfig(), rs, nil)
		out := tc.n
		rx := attachHost(t, e, sw, out, out)
		for i := range tc.n {
			h := attachHost(t, e, sw, i, i)
			h.AddFlow(flow(roce(i, out, 0, uint16(i)), 0, 8000))
		}
		if got := sw.SharedPool(); got != tc.S {
			t.Fatalf("n=%d: shared pool %d, want %d", tc.n, got, tc.S)
		}
		e.Run()
		if sw.Drops("ingress_admission") == 0 {
			t.Errorf("n=%d: no ingress drops: the threshold was never reached", tc.n)
		}
		for i := range tc.n {
			g := sw.Port(i).PG(0)
			// Never above the bound; and it got there (within a frame).
			if g.PeakShared > tc.bound || g.PeakShared < tc.bound-pktLen {
				t.Errorf("n=%d: PG %d peak shared %d, want in [%d, %d]", tc.n, i, g.PeakShared, tc.bound-pktLen, tc.bound)
			}
		}
		q := sw.Port(out).Queue(0)
		if max := int64(tc.n) * (4096 + tc.bound); q.PeakBytes > max {
			t.Errorf("n=%d: egress queue peak %d above %d", tc.n, q.PeakBytes, max)
		}
		if rx.Packets+sw.Drops("ingress_admission") != int64(tc.n)*8000 {
			t.Errorf("n=%d: received %d + dropped %d != sent %d", tc.n, rx.Packets, sw.Drops("ingress_admission"), tc.n*8000)
		}
		t.Logf("n=%d: PG peak shared %d (bound %d), queue peak %d", tc.n, sw.Port(0).PG(0).PeakShared, tc.bound, q.PeakBytes)
	}
}

// TestEgressLimit: a static egress queue limit drops lossy traffic at
// egress (reason egress_limit) before the dynamic threshold is reached.
func TestEgressLimit(t *testing.T) {
	cfg := switchmodel.DefaultConfig()
	cfg.EgressQueueLimit = 100_000
	e := sim.New(1)
	sw := newSwitch(t, e, "sw", cfg, []clock.Rate{g100, 25 * clock.Gbps}, nil)
	rx := attachHost(t, e, sw, 1, 1)
	h := attachHost(t, e, sw, 0, 0)
	h.AddFlow(flow(roce(0, 1, 0, 1), 0, 2000))
	e.Run()
	if q := sw.Port(1).Queue(0); q.PeakBytes > 100_000 {
		t.Errorf("queue peak %d above the 100 000 B limit", q.PeakBytes)
	}
	d := sw.Drops("egress_limit")
	if d == 0 || d+rx.Packets != 2000 || allDrops(sw) != d {
		t.Errorf("egress_limit drops %d, received %d, all drops %d; want drops+received = 2000", d, rx.Packets, allDrops(sw))
	}
}
