package simbench

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/topologies"
)

// small64 is the 64-host version of the fat tree: 2 pods of 32 hosts on 4
// leaves and 4 spines, under 4 cores.
func small64() ClosSpec { return FatTree1024().Small(2, 32, 4) }

func TestTopologies(t *testing.T) {
	for _, tc := range []struct {
		spec                 ClosSpec
		nics, switches, tier int
	}{
		{FatTree1024(), 1024, 264, 3},
		{Cluster2048(), 2048, 144, 3},
		{small64(), 64, 20, 3},
	} {
		t.Run(tc.spec.Name, func(t *testing.T) {
			topo, err := tc.spec.Build()
			if err != nil {
				t.Fatal(err)
			}
			nics, switches := 0, 0
			roles := map[string]bool{}
			for _, n := range topo.Nodes {
				switch n.Kind {
				case topologies.KindSwitch:
					switches++
					roles[string(n.Role)] = true
				case topologies.KindHost:
					for _, p := range n.Ports {
						if p.Plane == topologies.BE {
							nics++
						}
					}
				}
			}
			if nics != tc.nics || switches != tc.switches || len(roles) != tc.tier {
				t.Errorf("%d NICs, %d switches, roles %v; want %d, %d, %d tiers", nics, switches, roles, tc.nics, tc.switches, tc.tier)
			}
		})
	}
}

// TestPermutationDeterministic runs the 64-host permutation twice with one
// seed and once with another: the result tables (every flow's completion
// time, packet and event counts) must be byte-identical for the same seed
// and differ for the other.
func TestPermutationDeterministic(t *testing.T) {
	run := func(seed uint64) *Report {
		t.Helper()
		r, err := Permutation(small64(), Config{Seed: seed, FlowBytes: 256 << 10})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b, c := run(7), run(7), run(8)
	if a.Table() != b.Table() {
		t.Errorf("same seed, different tables:\n%s\n%s", a.Table(), b.Table())
	}
	if a.Digest() == c.Digest() {
		t.Errorf("seeds 7 and 8 give the same table")
	}
	if a.FCT.Count != 64 || a.DataPackets < 64*64 {
		t.Errorf("%d flows, %d data packets; want 64 flows of 64 packets", a.FCT.Count, a.DataPackets)
	}
	if r := a.WorstRatio(); r < 1 {
		t.Errorf("worst flow %v faster than the ideal %v", a.FCT.Max, a.Ideal)
	}
	if !strings.Contains(a.Summary(), "worst-flow ratio") {
		t.Errorf("summary without the worst-flow ratio:\n%s", a.Summary())
	}
}

// TestAllReduceDeterministic runs a 64-rank ring all-reduce twice.
func TestAllReduceDeterministic(t *testing.T) {
	spec := Cluster2048()
	spec.Zones, spec.Hosts, spec.RTSW, spec.CTSW, spec.ATSW = 2, 4, 2, 2, 2
	run := func() *Report {
		t.Helper()
		r, err := AllReduce(spec, Config{Seed: 3, CollBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(), run()
	if a.Digest() != b.Digest() {
		t.Errorf("same seed, different tables:\n%s\n%s", a.Table(), b.Table())
	}
	if a.NICs != 64 || len(a.Coll) != 1 || a.Coll[0].BusBW <= 0 {
		t.Errorf("%d ranks, results %+v", a.NICs, a.Coll)
	}
}

func TestIdealTime(t *testing.T) {
	// 2 MiB in 512 packets of 4096 B; each frame 4154 B + FCS, preamble
	// and IFG = 4178 B on the wire: 171.13 µs at 100G.
	topo, err := small64().Build()
	if err != nil {
		t.Fatal(err)
	}
	rate := topo.Nodes[0].Ports[0].Rate
	if got, want := idealTime(2<<20, 4096, rate).Micros(), 171.131; got < want-0.001 || got > want+0.001 {
		t.Errorf("ideal %v µs, want %v", got, want)
	}
}

// TestHierAllReduce runs the 64-rank hierarchical all-reduce (8 groups of
// 8) twice: same table, and a positive busbw.
func TestHierAllReduce(t *testing.T) {
	spec := Cluster2048()
	spec.Zones, spec.Hosts, spec.RTSW, spec.CTSW, spec.ATSW = 2, 4, 2, 2, 2
	var digests []string
	for range 2 {
		r, err := HierAllReduce(spec, Config{Seed: 3, CollBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Coll) != 1 || r.Coll[0].BusBW <= 0 {
			t.Fatalf("results %+v", r.Coll)
		}
		digests = append(digests, r.Digest())
	}
	if digests[0] != digests[1] {
		t.Errorf("same seed, digests %v", digests)
	}
}

// TestWorkersGiveOneEngineResults runs the 64-host permutation, single-path
// and sprayed, on one engine, then cut by rack (the default 16 partitions
// asked, 8 given: two pods of four racks) on one goroutine and on two and three side by
// side, and cut by pod (2 partitions) on two: the result tables (every
// flow's completion time, packet, event, PFC and drop counts, fabric time)
// must be byte-identical, and the runs must have used the workers and
// partitions asked for.
func TestWorkersGiveOneEngineResults(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"ecmp", Config{Seed: 3, FlowBytes: 256 << 10}},
		{"spray", Config{Seed: 4, FlowBytes: 256 << 10, Mode: "metaroce", Paths: 16, QPs: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Partitions = 1
			one, err := Permutation(small64(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if one.Workers != 1 || one.Partitions != 1 || one.PeakQueue == 0 {
				t.Fatalf("one engine: %d workers, %d partitions, peak queue %d B (want one engine, and queueing to compare)",
					one.Workers, one.Partitions, one.PeakQueue)
			}
			for _, c := range []struct{ workers, partitions, wantParts int }{
				{1, 0, 8}, {2, 0, 8}, {3, 0, 8}, // small64: two pods of four racks
				{2, 2, 2},
			} {
				cfg := tc.cfg
				cfg.Workers, cfg.Partitions = c.workers, c.partitions
				r, err := Permutation(small64(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				w := c.workers
				if r.Workers != w || r.Partitions != c.wantParts {
					t.Errorf("%d workers and %d partitions asked: %d workers used, on %d partitions (want %d)",
						w, c.partitions, r.Workers, r.Partitions, c.wantParts)
				}
				if got, want := r.Table(), one.Table(); got != want {
					t.Errorf("%d workers: table differs from one engine's\n got %.300s\nwant %.300s", w, got, want)
				}
			}
		})
	}
}
