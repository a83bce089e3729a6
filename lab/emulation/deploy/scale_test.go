package deploy

import (
	"testing"

	"github.com/rocelab/rocelab/topologies"
)

func TestAutoScale(t *testing.T) {
	for _, tc := range []struct {
		topo     string
		capacity float64
		want     int
	}{
		// laptop: 16 BE links × 2 × 400G = 12.8 Tb/s in 4214 + 24 B frames
		// = 377.5 Mpps; at 100 kpps k = 3776.
		{"laptop", 100_000, 3776},
		// incast: 9 × 2 × 100G = 1.8 Tb/s = 53.09 Mpps: k = 531 at
		// 100 kpps and 54 at 1 Mpps, both raised to MinAutoScale; 27 kpps
		// gives 1967.
		{"incast", 100_000, MinAutoScale},
		{"incast", 1e6, MinAutoScale},
		{"incast", 27_000, 1967},
	} {
		topo, err := topologies.Builtin(tc.topo)
		if err != nil {
			t.Fatal(err)
		}
		if got := AutoScale(topo, tc.capacity); got != tc.want {
			t.Errorf("AutoScale(%s, %v) = %d, want %d", tc.topo, tc.capacity, got, tc.want)
		}
	}
}
