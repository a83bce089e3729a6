package nodeplan

import (
	"testing"

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
		want  int64
	}{
		{"auto headroom grows by the lag budget", func(*switchmodel.Config) {}, true, k, want},
		{"fixed headroom is kept", func(*switchmodel.Config) {}, false, k, 0},
		{"no lossless class", func(c *switchmodel.Config) { c.PFC.LosslessPriorities = 0 }, true, k, 0},
		{"capped at half the buffer", func(*switchmodel.Config) {}, true, 10, (base.BufferBytes/2 - 8*8*base.PFC.Reserved) / 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			if got := lagHeadroom(&c, n.Ports, tc.auto, tc.scale); got != tc.want {
				t.Errorf("lagHeadroom = %d, want %d", got, tc.want)
			}
		})
	}
	cfg, err := Switch(n, nil, k, 1, "/tmp/x.sock")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Switch.PFC.Headroom != want {
		t.Errorf("Switch headroom = %d, want %d", cfg.Switch.PFC.Headroom, want)
	}
}
