package nodeplan

import (
	"testing"
	"time"

	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/topologies"
)

func TestLagHeadroom(t *testing.T) {
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	n := topo.Node("rtsw1")
	base, err := fabric.NodeConfig(n)
	if err != nil {
		t.Fatal(err)
	}
	// laptop: 400G ports, 1 µs cables. At k = 10,000 the 100 ms budget is
	// 10 µs of fabric time: 3 × 50 GB/s × 11 µs = 1.65 MB, + 2 frames.
	const k = 10_000
	want := switchmodel.HeadroomFor(n.Ports[0].Rate, n.Ports[0].Delay+10_000_000, base.MTU)
	tests := []struct {
		name  string
		edit  func(*switchmodel.Config)
		auto  bool
		scale int
		lag   time.Duration
		want  int64
	}{
		{"auto headroom grows by the lag budget", func(*switchmodel.Config) {}, true, k, LagBudget, want},
		{"fixed headroom is kept", func(*switchmodel.Config) {}, false, k, LagBudget, 0},
		{"no lossless class", func(c *switchmodel.Config) { c.PFC.LosslessPriorities = 0 }, true, k, LagBudget, 0},
		{"capped at half the buffer", func(*switchmodel.Config) {}, true, 10, LagBudget, (base.BufferBytes/2 - 8*8*base.PFC.Reserved) / 8},
		{"no lag: one loop", func(*switchmodel.Config) {}, true, 10, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			if got := lagHeadroom(&c, n.Ports, tc.auto, tc.scale, tc.lag); got != tc.want {
				t.Errorf("lagHeadroom = %d, want %d", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		lag  time.Duration
		want int64
	}{{LagBudget, want}, {0, base.PFC.Headroom}} {
		cfg, err := Switch(n, nil, k, 1, "/tmp/x.sock", tc.lag)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Switch.PFC.Headroom != tc.want {
			t.Errorf("Switch with lag %v: headroom %d, want %d", tc.lag, cfg.Switch.PFC.Headroom, tc.want)
		}
	}
}
