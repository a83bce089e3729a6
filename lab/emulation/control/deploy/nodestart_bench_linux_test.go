package deploy

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/topologies"
)

// BenchmarkNodeStart measures a node process's start: from the state
// book's record and the exec of the node binary in its namespace
// (rocelab-node beside rocelab) to its word on the readiness pipe (the
// moment /health answers ok), the way deploy and restart start a node —
// its package initialisation, configuration, sockets on every port and
// the API. It deploys the laptop lab once, then restarts its node processes
// in turn, stopping the old one outside the timed part. It reports the
// mean and the median (start-ms, start-p50-ms) and the slowest
// (start-max-ms). make bench runs it; it needs root.
func BenchmarkNodeStart(b *testing.B) {
	testenv.RequireRoot(b)
	testenv.Exclusive(b)
	tp, err := topologies.Builtin("laptop")
	if err != nil {
		b.Fatal(err)
	}
	root := testenv.RunRoot(b, "rlbench-")
	bin := testenv.BuildRocelab(b)
	ctx := context.Background()
	name := fmt.Sprintf("nodestart%d", os.Getpid()%10000)
	l, err := Deploy(ctx, Options{Topology: tp, LabName: name, Root: root, Binary: bin})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if _, err := Destroy(ctx, root, name); err != nil {
			b.Error(err)
		}
	}()
	var nodes []int
	for i, n := range l.Nodes {
		if n.Socket != "" {
			nodes = append(nodes, i)
		}
	}
	books, err := state.Open(state.RootOr(root), l.Name, false)
	if err != nil {
		b.Fatal(err)
	}
	defer books.Close()
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		n := &l.Nodes[nodes[i%len(nodes)]]
		b.StopTimer()
		if err := processOf(n).Stop(2 * time.Second); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if err := restartOne(ctx, l, books, n, RestartOptions{}); err != nil {
			b.Fatalf("start %s: %v", n.Name, err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	if err := WriteRecord(l); err != nil {
		b.Error(err)
	}
	slices.Sort(took)
	var sum time.Duration
	for _, d := range took {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(sum/time.Duration(len(took))), "start-ms")
	b.ReportMetric(ms(took[len(took)/2]), "start-p50-ms")
	b.ReportMetric(ms(took[len(took)-1]), "start-max-ms")
	b.ReportMetric(0, "ns/op")
}
