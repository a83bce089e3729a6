package flowsim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSolverMatchesMaxMin changes a random set of flows batch by batch —
// arrivals, departures, both at once — and checks after every solve that
// each flow's rate is the one a full progressive filling (MaxMin) gives
// the flows present.
func TestSolverMatchesMaxMin(t *testing.T) {
	for _, tc := range []struct {
		name          string
		links, flows  int
		maxPath       int
		capsOf        []float64
		spray         bool
		batches, size int
	}{
		{"few links, long paths", 6, 12, 4, []float64{10, 10, 4}, false, 200, 3},
		{"many links, short paths", 60, 80, 3, []float64{400, 400, 100}, false, 200, 6},
		{"sprayed shares", 20, 40, 4, []float64{400, 200}, true, 200, 4},
		{"one change a batch", 30, 50, 5, []float64{1, 2, 3}, true, 400, 1},
		{"equal capacities (ties)", 16, 40, 3, []float64{400}, false, 200, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
			caps := make([]float64, tc.links)
			for i := range caps {
				caps[i] = tc.capsOf[rng.IntN(len(tc.capsOf))]
			}
			s := newSolver(caps)
			type live struct {
				id   int32
				uses []Use
			}
			var flows []live
			randUses := func() []Use {
				var us []Use
				for range 1 + rng.IntN(tc.maxPath) {
					l := int32(rng.IntN(tc.links))
					share := 1.0
					if tc.spray && rng.IntN(3) == 0 {
						share = 0.5
					}
					us = append(us, Use{Link: l, Share: share})
				}
				return mergeUses(us)
			}
			for b := range tc.batches {
				for range 1 + rng.IntN(tc.size) {
					if len(flows) > 0 && (rng.IntN(2) == 0 || len(flows) >= tc.flows) {
						i := rng.IntN(len(flows))
						s.remove(flows[i].id)
						flows[i] = flows[len(flows)-1]
						flows = flows[:len(flows)-1]
					} else {
						us := randUses()
						flows = append(flows, live{s.add(us, nil, 0), us})
					}
				}
				s.solve()
				uses := make([][]Use, len(flows))
				for i, f := range flows {
					uses[i] = f.uses
				}
				want := make([]float64, len(flows))
				MaxMin(caps, uses, nil, want)
				for i, f := range flows {
					if got := s.flows[f.id].rate; math.Abs(got-want[i]) > 1e-9*max(1, want[i]) {
						t.Fatalf("batch %d: flow %d (%v): rate %.12g, full solve %.12g", b, i, f.uses, got, want[i])
					}
				}
			}
		})
	}
}
