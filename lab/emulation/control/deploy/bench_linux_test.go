package deploy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
)

// BenchmarkDeploy deploys and destroys a built-in topology (netns runtime)
// b.N times and reports the mean seconds of each as deploy-s and
// destroy-s, and each deploy step's as <step>-s. It needs root (skipped,
// or failed under CI, without). make bench runs it with -benchtime=3x:
// ai-zone-64 is the issue-17 figure (106 node processes, 1,124 veth
// pairs), side by side with the same lab in two node groups (two
// processes: Options.NodeGroups).
func BenchmarkDeploy(b *testing.B) {
	for _, topo := range []string{"laptop", "ai-zone-64"} {
		b.Run(topo, func(b *testing.B) { benchDeploy(b, topo, 0) })
	}
	b.Run("ai-zone-64-groups2", func(b *testing.B) { benchDeploy(b, "ai-zone-64", 2) })
}

func benchDeploy(b *testing.B, topo string, groups int) {
	testenv.RequireRoot(b)
	testenv.Exclusive(b)
	tp, err := topologies.Builtin(topo)
	if err != nil {
		b.Fatal(err)
	}
	root := testenv.RunRoot(b, "rlbench-")
	bin := testenv.BuildRocelab(b)
	var deployed, destroyed time.Duration
	steps := map[deploy.Step]time.Duration{}
	b.ResetTimer()
	for i := range b.N {
		lab := fmt.Sprintf("%s-bench%d", prefix, i)
		start := time.Now()
		l, err := deploy.Deploy(context.Background(), deploy.Options{Topology: tp, LabName: lab, Root: root, Binary: bin, NodeGroups: groups})
		if err != nil {
			b.Fatalf("deploy %s: %v", topo, err)
		}
		deployed += time.Since(start)
		for _, t := range l.Timings {
			steps[t.Step] += t.Elapsed
		}
		start = time.Now()
		if _, err := deploy.Destroy(context.Background(), root, lab); err != nil {
			b.Fatalf("destroy %s: %v", topo, err)
		}
		destroyed += time.Since(start)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(deployed.Seconds()/n, "deploy-s")
	b.ReportMetric(destroyed.Seconds()/n, "destroy-s")
	for s, d := range steps {
		b.ReportMetric(d.Seconds()/n, string(s)+"-s")
	}
	b.ReportMetric(0, "ns/op")
}
