package fabric

import (
	"path/filepath"
	"testing"

	"github.com/rocelab/rocelab/core/sim"
	"github.com/rocelab/rocelab/topologies"
)

// TestRoutesOnDemand checks that a fabric routed on demand gives every
// flow the path the fully routed fabric gives it: same hops, same shares,
// for hashed and sprayed classes, and a QP-aware hash.
func TestRoutesOnDemand(t *testing.T) {
	for _, tc := range []struct {
		name string
		topo func(t *testing.T) *topologies.Topology
	}{
		{"clos", func(t *testing.T) *topologies.Topology { return loadTopo(t, "clos") }},
		{"ai-zone-64", func(t *testing.T) *topologies.Topology { return loadTopo(t, "ai-zone-64") }},
		{"two-zones", func(t *testing.T) *topologies.Topology { return loadTopo(t, "two-zones") }},
		{"ecmp-spray", func(t *testing.T) *topologies.Topology { return loadExample(t, "ecmp-spray.yaml") }},
		{"ecmp-qp", func(t *testing.T) *topologies.Topology { return loadExample(t, "ecmp-qp.yaml") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := tc.topo(t)
			const seed = 3
			full, err := BuildSim(sim.New(seed), topo, SimOptions{})
			if err != nil {
				t.Fatal(err)
			}
			lazy, err := BuildSim(sim.New(seed), topo, SimOptions{RoutesOnDemand: true})
			if err != nil {
				t.Fatal(err)
			}
			ps := nics(topo)
			step := max(1, len(ps)/24) // a sample of pairs on large fabrics
			pairs := 0
			for i := 0; i < len(ps); i += step {
				for j := 0; j < len(ps); j += step {
					a, b := ps[i], ps[j]
					if a == b || a.Plane != b.Plane {
						continue
					}
					for _, sport := range []uint16{49152, 50001, 61234} {
						for _, dscp := range []uint8{26, 0} {
							pkt := FlowPacket(a, b, sport, uint32(7*i+j), dscp)
							want, werr := full.Path(a, pkt)
							got, gerr := lazy.Path(a, pkt)
							if (werr == nil) != (gerr == nil) {
								t.Fatalf("%s:%s → %s:%s: errors %v / %v", a.Node.Name, a.Name, b.Node.Name, b.Name, werr, gerr)
							}
							if len(got) != len(want) {
								t.Fatalf("%s:%s → %s:%s: %d hops on demand, %d routed", a.Node.Name, a.Name, b.Node.Name, b.Name, len(got), len(want))
							}
							for k := range want {
								if got[k] != want[k] {
									t.Fatalf("%s:%s → %s:%s: hop %d %s:%s ×%.3f on demand, %s:%s ×%.3f routed", a.Node.Name, a.Name, b.Node.Name, b.Name,
										k, got[k].From.Node.Name, got[k].From.Name, got[k].Share, want[k].From.Node.Name, want[k].From.Name, want[k].Share)
								}
							}
							pairs++
						}
					}
				}
			}
			if pairs == 0 {
				t.Fatal("no pairs compared")
			}
		})
	}
}

func loadExample(t *testing.T, name string) *topologies.Topology {
	t.Helper()
	topo, err := topologies.Load(filepath.Join("../../examples/topologies", name))
	if err != nil {
		t.Fatal(err)
	}
	return topo
}
