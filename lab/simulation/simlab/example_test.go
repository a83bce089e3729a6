package simlab

import (
	"fmt"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/topologies"
)

// TestExampleTables is the example program of the simulator driver: an
// nccl-tests table for an all-reduce across the 8 GPUs of laptop.yaml and
// an ib_write_bw line for a WRITE stream between two racks. Run it with
// go test -v -run ExampleTables ./lab/simlab to see them.
func TestExampleTables(t *testing.T) {
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	lab, err := Build(topo, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	coll, err := lab.Collective(CollSpec{Op: "all_reduce", Sizes: []int64{1 << 20, 4 << 20, 16 << 20, 64 << 20}, Warmup: 1, Iters: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := lab.RunUntilIdle(clock.Second); err != nil || coll.Err() != nil {
		t.Fatal(err, coll.Err())
	}
	out := t.Output()
	fmt.Fprintf(out, "# all_reduce, %d ranks (%s), payload-free, simulated %v\n", len(coll.Spec().Ranks), topo.Name, coll.Elapsed())
	if err := collective.WriteTable(out, coll.Results()); err != nil {
		t.Fatal(err)
	}
	if len(coll.Results()) != 4 {
		t.Errorf("%d lines, want 4", len(coll.Results()))
	}

	perf, err := lab.Perf(PerfSpec{Op: "write", From: []string{"host1:gpu0"}, To: []string{"host4:gpu0"}, Size: 65536, Iterations: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if err := lab.RunUntilIdle(clock.Second); err != nil || perf.Err() != nil {
		t.Fatal(err, perf.Err())
	}
	r := perf.Results()[0]
	msgRate := float64(r.Messages) / r.End.Sub(r.Start).Seconds() / 1e6
	fmt.Fprintf(out, "# ib_write_bw %s -> %s (simulated)\n", r.From, r.To)
	fmt.Fprintf(out, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n")
	fmt.Fprintf(out, " %-10d %-14d %-18s %-20.2f %.6f\n", perf.Spec().Size, perf.Spec().Iterations, "N/A", r.GoodputGbps, msgRate)
	if r.GoodputGbps < 360 {
		t.Errorf("WRITE at %.2f Gb/s on a 400G path", r.GoodputGbps)
	}
}
