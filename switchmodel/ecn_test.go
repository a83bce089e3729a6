package switchmodel_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/wire"
)

func TestMarkProbability(t *testing.T) {
	c := switchmodel.DefaultConfig().ECN[3] // 400 KB / 1600 KB / 0.2
	tests := []struct {
		q    int64
		want float64
	}{
		{0, 0},
		{400_000, 0},
		{1_000_000, 0.1}, // 0.2 × 600/1200
		{1_600_000, 0.2}, // Pmax at Kmax
		{1_600_001, 1},   // above Kmax: all
		{10_000_000, 1},
		{700_000, 0.05}, // 0.2 × 300/1200
	}
	for _, tc := range tests {
		if got := switchmodel.MarkProbability(c, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("MarkProbability(%d) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// TestECNMarkingFraction holds the TC3 egress queue of a 100G port at fixed
// depths and measures the fraction of packets marked CE.
//
// How the depth is held: the egress toward host 1 is paused (a PFC frame
// injected into the port) while host 0 sends K frames of 1000 B at 100G;
// then it is resumed. From then on frames arrive and leave at the same
// rate (one per 1024 wire bytes = 81.92 ns), so the queue stays at K or
// K−1 frames: an arriving frame sees (K−1)×1000 B ahead of it (marking at
// enqueue), a leaving frame leaves (K−1)×1000 or (K−2)×1000 B behind it
// (marking at dequeue). The one-frame difference moves the expected
// probability by at most 0.2×1000/1.2 MB = 0.017 points, far inside the
// ±2-point tolerance; 20 000 samples give a standard error ≤ 0.3 points.
//
// Expected, Kmin/Kmax/Pmax = 400 KB/1600 KB/0.2:
//
//	K = 200 frames,  q ≈ 200 KB  → 0
//	K = 700,         q ≈ 700 KB  → 0.2 × 300/1200 = 0.05
//	K = 1000,        q ≈ 1 MB    → 0.2 × 600/1200 = 0.10
//	K = 1500,        q ≈ 1.5 MB  → 0.2 × 1100/1200 = 0.1833
//	K = 2000,        q ≈ 2 MB    → 1 (above Kmax)
func TestECNMarkingFraction(t *testing.T) {
	const samples = 20000
	const settle = 10 // frames after the resume before counting
	for _, atDequeue := range []bool{false, true} {
		for _, k := range []int{200, 700, 1000, 1500, 2000} {
			t.Run(fmt.Sprintf("dequeue=%v/K=%d", atDequeue, k), func(t *testing.T) {
				e := sim.New(uint64(k))
				cfg := switchmodel.DefaultConfig()
				cfg.ECN[3].AtDequeue = atDequeue
				sw := newSwitch(t, e, "sw", cfg, rates(2, g100), nil)
				h0 := attachHost(t, e, sw, 0, 0)
				h1 := attachHost(t, e, sw, 1, 1)
				var seen, ce int64
				h1.OnReceive = func(p *wire.Packet) {
					if p.PSN >= uint32(k+settle) && p.PSN < uint32(k+settle+samples) {
						seen++
						if p.ECN == 3 {
							ce++
						}
					}
				}
				e.At(0, func() { sw.Port(1).Receive(pfc(3, 0xFFFF)) })
				// Frame j (0-based) reaches the switch at hop + (j+1)×81.92 ns:
				// resume just after frame K−1 arrived.
				resumeAt := clock.Time(hop) + clock.Time(k)*clock.Time(g100.Serialize(wireLen)) + 1
				e.At(resumeAt, func() {
					if got := sw.Port(1).Queue(3).DepthBytes; got != int64(k)*pktLen {
						t.Errorf("depth at resume = %d, want %d", got, k*pktLen)
					}
					sw.Port(1).Receive(pfc(3, 0))
				})
				// K more frames after the samples keep the queue full while the
				// last samples leave.
				h0.AddFlow(flow(roce(0, 1, 26, 1), 3, int64(k+settle+samples+k)))
				e.Run()

				if seen != samples {
					t.Fatalf("counted %d packets, want %d", seen, samples)
				}
				q := float64((k - 1) * pktLen)
				want := switchmodel.MarkProbability(cfg.ECN[3], int64(q))
				got := float64(ce) / float64(seen)
				t.Logf("marked %.4f, expected %.4f", got, want)
				if math.Abs(got-want) > 0.02 {
					t.Errorf("marked fraction %.4f, want %.4f ± 0.02", got, want)
				}
				if total := sw.Port(1).Queue(3).ECNMarked; total != h1.CE {
					t.Errorf("switch counted %d marks, receiver saw %d CE", total, h1.CE)
				}
			})
		}
	}
}
