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
