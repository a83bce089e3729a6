package flowsim

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
	"github.com/rocelab/rocelab/topologies"
)

func loadTopo(t *testing.T, name string) *topologies.Topology {
	t.Helper()
	tp, err := topologies.Load(filepath.Join("../../../examples/topologies", name))
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TestPathMatchesPackets runs one flow in the packet simulator and checks
// that the switch ports that carried its data are the ones its flow-level
// path names, each with the share of the data the path gives it.
func TestPathMatchesPackets(t *testing.T) {
	for _, tc := range []struct {
		topo, mode string
		paths      int
		from, to   string
	}{
		{"ecmp-5tuple.yaml", "rocev2", 1, "a1:gpu0", "b1:gpu0"},
		{"ecmp-5tuple.yaml", "rocev2", 1, "a3:gpu0", "b2:gpu0"},
		{"ecmp-qp.yaml", "rocev2", 1, "a2:gpu0", "b4:gpu0"},
		{"ecmp-5tuple.yaml", "metaroce", 8, "a1:gpu0", "b3:gpu0"},
		{"ecmp-spray.yaml", "metaroce", 1, "a4:gpu0", "b1:gpu0"},
		{"clos-128.yaml", "rocev2", 1, "z1-host1:gpu0", "z2-host9:gpu0"},
	} {
		t.Run(tc.topo+"/"+tc.mode+"/"+tc.from, func(t *testing.T) {
			tp := loadTopo(t, tc.topo)
			const seed = 7
			pl, err := simlab.Build(tp, simlab.Options{Seed: seed, Partitions: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer pl.Close()
			const size, iters = 64 << 10, 20
			if _, err := pl.Perf(simlab.PerfSpec{From: []string{tc.from}, To: []string{tc.to}, Pairwise: true, Size: size,
				Iterations: iters, Mode: tc.mode, CC: "none", Paths: tc.paths}); err != nil {
				t.Fatal(err)
			}
			if err := pl.RunUntilIdle(10 * clock.Millisecond); err != nil {
				t.Fatal(err)
			}
			fl, err := Build(tp, Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			j, err := fl.Perf(PerfSpec{From: []string{tc.from}, To: []string{tc.to}, Size: size, Iterations: iters, Mode: tc.mode, Paths: tc.paths})
			if err != nil {
				t.Fatal(err)
			}
			fl.RunUntil(1) // the job begins: its QP is numbered and routed
			want := map[*topologies.Port]float64{}
			q := j.flows[0].qps[0].q
			for _, path := range q.paths {
				for _, u := range path {
					if p := fl.LinkPort(u.Link); p.Node.Kind == topologies.KindSwitch {
						want[p] += u.Share / float64(len(q.paths))
					}
				}
			}
			// Data bytes each switch port sent (acknowledgements go the
			// other way and are small: under 2 % of the data).
			total := float64(size * iters)
			for _, n := range tp.Nodes {
				if n.Kind != topologies.KindSwitch {
					continue
				}
				sw := pl.Switch(n.Name)
				for i, p := range n.Ports {
					_, tx := sw.Port(i).Bytes()
					got := float64(tx) / total
					if got < 0.05 && want[p] == 0 {
						continue
					}
					if math.Abs(got-want[p]) > 0.08 {
						t.Errorf("%s:%s carried %.3f of the data, the flow-level path gives it %.3f", n.Name, p.Name, got, want[p])
					}
				}
			}
			if len(want) == 0 {
				t.Fatal("the path crosses no switch")
			}
		})
	}
}
