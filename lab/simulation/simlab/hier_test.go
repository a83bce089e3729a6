package simlab

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/topologies"
)

// TestHierarchical runs a hierarchical all-reduce over laptop.yaml's 8
// GPUs (4 hosts × 2) and checks that its three phases ran, in order, and
// that it moves the same data as a flat ring faster than nothing: busbw
// within the line rate.
func TestHierarchical(t *testing.T) {
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Build(topo, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	j, err := l.Hierarchical(HierSpec{GroupSize: 2, Size: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunUntilIdle(clock.Second); err != nil || j.Err() != nil {
		t.Fatal(err, j.Err())
	}
	r := j.Result()
	if r.Ranks != 8 || r.Size != 4<<20 {
		t.Fatalf("result %+v", r)
	}
	var sum clock.Duration
	for i, p := range r.Phases {
		if p <= 0 {
			t.Errorf("phase %d took %v", i+1, p)
		}
		sum += p
	}
	if sum != r.Time {
		t.Errorf("phases sum to %v, total %v", sum, r.Time)
	}
	// 400G links: busbw is at most 50 GB/s.
	if r.BusBW <= 0 || r.BusBW > 50 {
		t.Errorf("busbw %.2f GB/s", r.BusBW)
	}

	for _, bad := range []HierSpec{{GroupSize: 3}, {GroupSize: 8}, {GroupSize: 2, Size: 4}} {
		if _, err := l.Hierarchical(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestHierarchicalLevels runs the hierarchical all-reduce with a zone
// level and with NVLink inside the groups, on two zones of 4 hosts × 8
// GPUs: the NVLink steps take exactly their ring's time, every fabric
// phase some time, the phases sum to the total, and the zone level
// refuses ranks that are not whole zones.
func TestHierarchicalLevels(t *testing.T) {
	topo, err := topologies.Parse("zones.yaml", []byte(`name: zones
defaults:
  be: {rate: 400G, delay: 1us, mtu: 4200}
generate: {zones: 2, hosts: 4, gpus: 8, rtsw: 1, ctsw: 2, atsw: 2, fe: off}
`))
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20
	nv := 3600 * clock.Gbps
	step := clock.Microsecond + nv.Serialize(size/8)
	for _, tc := range []struct {
		name   string
		spec   HierSpec
		nvWait clock.Duration // the exact reduce-scatter and all-gather, or 0
	}{
		{"flat rails", HierSpec{GroupSize: 8, Size: size}, 0},
		{"zones", HierSpec{GroupSize: 8, Zone: 4, Size: size}, 0},
		{"nvlink", HierSpec{GroupSize: 8, Size: size, NVLink: nv}, 7 * step},
		{"zones and nvlink", HierSpec{GroupSize: 8, Zone: 4, Size: size, NVLink: nv}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Build(topo, Options{Seed: 1, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			j, err := l.Hierarchical(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.RunUntilIdle(clock.Second); err != nil || j.Err() != nil {
				t.Fatal(err, j.Err())
			}
			r := j.Result()
			if r.Ranks != 64 || r.Size != size || r.Zone != max(tc.spec.Zone, 1) {
				t.Fatalf("result %+v", r)
			}
			var sum clock.Duration
			for i, p := range r.Phases {
				if p <= 0 {
					t.Errorf("phase %d took %v", i+1, p)
				}
				sum += p
			}
			if sum != r.Time {
				t.Errorf("phases sum to %v, total %v", sum, r.Time)
			}
			if tc.nvWait > 0 && (r.Phases[0] != tc.nvWait || r.Phases[2] != tc.nvWait) {
				t.Errorf("NVLink phases %v and %v, want %v each", r.Phases[0], r.Phases[2], tc.nvWait)
			}
			if tc.spec.NVLink > 0 && tc.spec.Zone > 1 && r.Phases[0] <= 7*step {
				t.Errorf("reduce-scatters %v: no zone step after the NVLink's %v", r.Phases[0], 7*step)
			}
		})
	}
	l, err := Build(topo, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, bad := range []HierSpec{{GroupSize: 8, Zone: 3}, {GroupSize: 8, Zone: 8}, {GroupSize: 8, Zone: 2, Size: 8}} {
		if _, err := l.Hierarchical(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
