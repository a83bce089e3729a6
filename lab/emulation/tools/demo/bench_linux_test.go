package demo

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
)

// formerCapacityPPSPerCPU is what scale: auto assumed per CPU before the
// lossless capacity was measured (docs/performance.md): the "before" of
// BenchmarkCapacity.
const formerCapacityPPSPerCPU = 20_000

// BenchmarkCapacity is the emulation's speed as the laptop demo sees it,
// before and after the lossless capacity was measured (make bench runs it
// once, as root):
//
//   - before and after: one probe each (deploy the laptop lab, run the
//     demo's 4:1 incast and an all-to-all twice, destroy) at the k that
//     scale: auto picks with the former assumption (20,000 frames/s per
//     CPU) and with DefaultCapacityPPSPerCPU. It reports that k, the
//     lossless drops, the node loops' lag p50/p99/max (wall µs, worst
//     node) and p99 in fabric nanoseconds (wall / k), CPU per frame and
//     wake-ups per second;
//   - search: rocelab demo --capacity's search, reporting the measured
//     lossless capacity per CPU and the smallest lossless k.
func BenchmarkCapacity(b *testing.B) {
	testenv.RequireRoot(b)
	testenv.Exclusive(b)
	bin := testenv.BuildRocelab(b)
	topo, err := topologies.Builtin(topologies.DefaultTopology)
	if err != nil {
		b.Fatal(err)
	}
	cpus := float64(runtime.NumCPU())
	for _, c := range []struct {
		name   string
		perCPU float64
		groups int
	}{
		{"before", formerCapacityPPSPerCPU, 0},
		{"after", deploy.DefaultCapacityPPSPerCPU, 0},
		{"one-group", deploy.DefaultGroupCapacityPPS / cpus, 1},
	} {
		k := deploy.AutoScale(topo, c.perCPU*cpus)
		if c.groups == 1 {
			k = deploy.AutoScaleOneGroup(topo, deploy.DefaultGroupCapacityPPS)
		}
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				res := capacity(b, bin, topo, k, c.groups)
				if len(res.Probes) != 1 {
					b.Fatalf("%d probes, want 1", len(res.Probes))
				}
				p := res.Probes[0]
				l := p.Loops
				b.ReportMetric(float64(k), "k")
				b.ReportMetric(c.perCPU, "assumed-pps/cpu")
				b.ReportMetric(p.LosslessDrops, "lossless-drops")
				b.ReportMetric(p.IncastGbps, "incast-Gb/s")
				b.ReportMetric(us(l.LagP50), "lag-p50-us")
				b.ReportMetric(us(l.LagP99), "lag-p99-us")
				b.ReportMetric(us(l.LagMax), "lag-max-us")
				b.ReportMetric(float64(l.LagP99.Nanoseconds())/float64(k), "lag-p99-fabric-ns")
				b.ReportMetric(us(l.CPUPerFrame), "cpu-us/frame")
				b.ReportMetric(l.WakeupsPerSecond, "wakeups/s")
			}
		})
	}
	for _, s := range []struct {
		name   string
		groups int
	}{{"search", 0}, {"search-one-group", 1}} {
		b.Run(s.name, func(b *testing.B) {
			for range b.N {
				res := capacity(b, bin, topo, 0, s.groups)
				if res.MinScale == 0 {
					b.Fatal("no k passed")
				}
				b.ReportMetric(res.PerCPU, "lossless-pps/cpu")
				b.ReportMetric(res.FabricPPS/float64(res.MinScale), "lab-pps")
				b.ReportMetric(float64(res.MinScale), "min-k")
				b.ReportMetric(float64(len(res.Probes)), "probes")
			}
		})
	}
}

// capacity runs FindCapacity on topo with the built binary, its nodes in
// that many groups (0: a process each): one probe at k when k > 0, else
// the whole search.
func capacity(b *testing.B, bin string, topo *topologies.Topology, k, groups int) *Capacity {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	opts := CapacityOptions{Setup: Setup{
		Topology: topo, LabName: fmt.Sprintf("bc%d", k%10000), Binary: bin,
		Root: testenv.RunRoot(b, "rltest-capacity-"), NodeGroups: groups, ExactLinks: groups > 0,
	}}
	if k > 0 {
		opts.Start, opts.Min, opts.Max = k, k, k
	}
	res, err := FindCapacity(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
