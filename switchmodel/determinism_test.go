package switchmodel_test

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/testbench"
	"github.com/rocelab/rocelab/wire/pipe"
)

// seededRun is an incast whose outcome depends on the random streams: six
// hosts send priority 3 to a prefix reached over two ports (both ends are
// sinks), sprayed at random per packet, through WRED with a Kmax far above
// the queue so every mark is a coin flip.
func seededRun(t *testing.T, seed uint64) []telemetry.Sample {
	cfg := switchmodel.DefaultConfig()
	cfg.ECN[3].Kmin, cfg.ECN[3].Kmax, cfg.ECN[3].Pmax = 0, 40_000_000, 1
	cfg.ECMP.SprayDSCPs = []uint8{26}
	cfg.ECMP.SprayRandom = true
	e := sim.New(seed)
	sw := newSwitch(t, e, "leaf", cfg, rates(8, g100), nil)
	for _, p := range []int{6, 7} {
		sw.Attach(p, pipe.New(e, hop, &testbench.Counter{}))
	}
	if err := sw.AddRoute(netip.MustParsePrefix("10.9.0.0/24"), 6, 7); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		h := attachHost(t, e, sw, i, i)
		tmpl := roce(i, 0, 26, uint16(i))
		tmpl.DstIP = netip.MustParseAddr("10.9.0.1")
		h.AddFlow(flow(tmpl, 3, 3000))
	}
	e.Run()
	return telemetry.Gather(sw)
}

// TestDeterminism: the same seed gives identical counters; another seed
// gives other ECN marks and another spray (so the seed is really used).
func TestDeterminism(t *testing.T) {
	a, b := seededRun(t, 42), seededRun(t, 42)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed, different counters (-first +second):\n%s", diff)
	}
	c := seededRun(t, 43)
	marks := func(s []telemetry.Sample) float64 { return telemetry.Sum(s, "switch_queue_ecn_marked_packets_total") }
	tx6 := func(s []telemetry.Sample) float64 {
		return telemetry.Sum(s, "switch_queue_tx_packets_total", telemetry.Label{Name: "port", Value: "6"})
	}
	if marks(a) == 0 || marks(a) == marks(c) || tx6(a) == tx6(c) {
		t.Errorf("seeds 42 and 43: marks %v vs %v, port 6 frames %v vs %v; want both to differ",
			marks(a), marks(c), tx6(a), tx6(c))
	}
	if got := telemetry.Sum(a, "switch_queue_tx_packets_total"); got != 18000 {
		t.Errorf("forwarded %v frames, want 18000", got)
	}
}
