package switchmodel_test

import (
	"math"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
)

// TestDWRRShares: three lossy classes with DWRR weights 1:2:4, each fed at
// 100G by its own host, share one 100G egress. All three queues stay
// backlogged (the ingress threshold drops the excess), so between 200 µs
// and 1 ms the egress bytes split 1/7, 2/7, 4/7 = 14.29 %, 28.57 %,
// 57.14 %; each share must be within ±2 % (relative) of that.
func TestDWRRShares(t *testing.T) {
	cfg := switchmodel.DefaultConfig()
	cfg.DSCPToTC[10], cfg.DSCPToTC[12], cfg.DSCPToTC[14] = 0, 1, 2
	cfg.Sched.Weights = [8]int{1, 2, 4, 1, 1, 1, 1, 1}
	e := sim.New(1)
	sw := newSwitch(t, e, "sw", cfg, rates(4, g100), nil)
	hosts := make([]*testbenchHost, 4)
	for i := range hosts {
		hosts[i] = attachHost(t, e, sw, i, i)
	}
	for i, dscp := range []uint8{10, 12, 14} {
		hosts[i].AddFlow(flow(roce(i, 3, dscp, uint16(i)), i, -1))
	}
	out := sw.Port(3)
	var start [3]int64
	e.RunUntil(clock.Time(200 * clock.Microsecond))
	for tc := range 3 {
		start[tc] = out.Queue(tc).TxBytes
	}
	e.RunUntil(clock.Time(clock.Millisecond))
	var got [3]float64
	var total float64
	for tc := range 3 {
		got[tc] = float64(out.Queue(tc).TxBytes - start[tc])
		total += got[tc]
	}
	for tc, w := range []float64{1, 2, 4} {
		share, want := got[tc]/total, w/7
		t.Logf("TC%d: share %.4f, want %.4f", tc, share, want)
		if math.Abs(share-want) > 0.02*want {
			t.Errorf("TC%d share %.4f, want %.4f ± 2%%", tc, share, want)
		}
	}
	// The egress is saturated: 800 µs at 100G carries
	// 800e-6 × 100e9 / 8 / 1024 = 9765.6 frames of 1024 wire bytes.
	if frames := total / pktLen; frames < 9765 || frames > 9767 {
		t.Errorf("egress carried %.0f frames in 800 µs, want 9765–9767 (line rate)", frames)
	}
}

// TestStrictStarves: TC6 is strict. Two hosts keep it backlogged at 2×100G
// toward one 100G port; a third host sends TC0 from 1 µs on. The TC0 queue
// never gets a frame out while TC6 has one waiting.
func TestStrictStarves(t *testing.T) {
	e := sim.New(1)
	sw := newSwitch(t, e, "sw", switchmodel.DefaultConfig(), rates(4, g100), nil)
	hosts := make([]*testbenchHost, 4)
	for i := range hosts {
		hosts[i] = attachHost(t, e, sw, i, i)
	}
	hosts[0].AddFlow(flow(roce(0, 3, 48, 1), 6, -1))
	hosts[1].AddFlow(flow(roce(1, 3, 48, 2), 6, -1))
	f := flow(roce(2, 3, 0, 3), 0, -1)
	f.Start = clock.Time(clock.Microsecond)
	hosts[2].AddFlow(f)
	e.RunUntil(clock.Time(300 * clock.Microsecond))
	out := sw.Port(3)
	if q := out.Queue(0); q.TxPackets != 0 || q.EnqueuedPackets == 0 {
		t.Errorf("TC0 sent %d frames (queued %d), want 0 sent under strict TC6", q.TxPackets, q.EnqueuedPackets)
	}
	// 300 µs − 1 µs cable − one frame: ≥ 3650 frames of TC6 at 81.92 ns.
	if q := out.Queue(6); q.TxPackets < 3600 {
		t.Errorf("TC6 sent only %d frames", q.TxPackets)
	}
	if hosts[3].Packets == 0 || hosts[3].BySrcPort[3] != 0 {
		t.Errorf("receiver got %d packets, %d of them TC0", hosts[3].Packets, hosts[3].BySrcPort[3])
	}
}
