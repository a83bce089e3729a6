package simlab

import (
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

// blackhole swallows what a link direction carries.
type blackhole struct{}

func (blackhole) Receive(*wire.Packet) {}

// TestWorkersJobFailure: on two workers, a flow whose packets all vanish
// fails its job after its retries (the failure lands in a parallel
// window); the run ends and returns the job's error instead of hanging.
// So does a collective with a rank behind the same hole.
func TestWorkersJobFailure(t *testing.T) {
	into := "z2-host1"
	l := build(t, "two-zones", Options{Workers: 2, QPTimeout: 5 * clock.Microsecond, Fabric: fabricDropping(into)})
	defer l.Close()
	if l.Workers() != 2 {
		t.Fatalf("%d workers, want 2", l.Workers())
	}
	j, err := l.Perf(PerfSpec{Name: "doomed", From: []string{"z1-host1:gpu0"}, To: []string{into + ":gpu0"}, Size: 64 << 10, Iterations: 1, TxDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Perf(PerfSpec{Name: "fine", From: []string{"z1-host2:gpu0"}, To: []string{"z2-host2:gpu0"}, Size: 64 << 10, Iterations: 1, TxDepth: 1}); err != nil {
		t.Fatal(err)
	}
	if err := l.RunUntilIdle(100 * clock.Millisecond); err != nil {
		t.Fatal(err)
	}
	if j.Err() == nil || !j.Done() {
		t.Fatalf("doomed job: done %v, err %v; want it failed", j.Done(), j.Err())
	}

	// A collective with a rank behind the same hole fails the same way.
	l2 := build(t, "two-zones", Options{Workers: 2, QPTimeout: 5 * clock.Microsecond, Fabric: fabricDropping(into)})
	defer l2.Close()
	c, err := l2.Collective(CollSpec{Op: "all_reduce", Ranks: []string{"z1-host1:gpu0", into + ":gpu0", "z1-host2:gpu1", "z2-host2:gpu1"}, Sizes: []int64{1 << 20}, Iters: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.RunUntilIdle(100 * clock.Millisecond); err != nil {
		t.Fatal(err)
	}
	if c.Err() == nil || !c.Done() || c.Elapsed() <= 0 {
		t.Fatalf("doomed collective: done %v, err %v, elapsed %v; want it failed", c.Done(), c.Err(), c.Elapsed())
	}
}

// fabricDropping drops every frame a switch sends toward node.
func fabricDropping(node string) fabric.SimOptions {
	return fabric.SimOptions{Wrap: func(from *topologies.Port, s wire.Sink) wire.Sink {
		if from.Peer != nil && from.Peer.Node.Name == node {
			return blackhole{}
		}
		return s
	}}
}
