package simlab

import (
	"fmt"
	"math"
	"testing"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/topologies"
)

func TestNearestRank(t *testing.T) {
	tests := []struct {
		name    string
		nonzero []int64
		n       int
		q       float64
		want    int64
	}{
		{"empty", nil, 0, 0.5, 0},
		{"all zero", nil, 10, 0.99, 0},
		{"all zero, max", nil, 10, 1, 0},
		{"one of ten, p50", []int64{7}, 10, 0.5, 0},
		{"one of ten, p90", []int64{7}, 10, 0.9, 0},
		{"one of ten, p99", []int64{7}, 10, 0.99, 7},
		{"one of ten, max", []int64{7}, 10, 1, 7},
		{"all nonzero, p50 of 4", []int64{1, 2, 3, 4}, 4, 0.5, 2},
		{"all nonzero, p99 of 4", []int64{1, 2, 3, 4}, 4, 0.99, 4},
		{"tiny q is the smallest", []int64{1, 2, 3, 4}, 4, 1e-9, 1},
		{"p99 of 200: rank 198", append(make([]int64, 0), seq(1, 200)...), 200, 0.99, 198},
		{"p50 of 200 with 100 zeros: rank 100 is a zero", seq(1, 100), 200, 0.5, 0},
		{"p51 of 200 with 100 zeros: rank 102", seq(1, 100), 200, 0.51, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := nearestRank(tc.nonzero, tc.n, tc.q); got != tc.want {
				t.Errorf("nearestRank(%d nonzero, n %d, q %g) = %d, want %d", len(tc.nonzero), tc.n, tc.q, got, tc.want)
			}
		})
	}
}

func seq(from, to int64) []int64 {
	var out []int64
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

func TestLargeFabric(t *testing.T) {
	for _, tc := range []struct {
		topo string
		want bool
	}{{"laptop", false}, {"two-zones", false}, {"seed-24k", true}} {
		tp, err := topologies.Builtin(tc.topo)
		if err != nil {
			t.Fatal(err)
		}
		if got := LargeFabric(tp); got != tc.want {
			t.Errorf("LargeFabric(%s) = %v, want %v", tc.topo, got, tc.want)
		}
	}
	if LargeFabric(nil) {
		t.Error("LargeFabric(nil) = true")
	}
}

// TestSamplerAggregate runs an incast across the zones of two-zones with
// a per-queue sampler and an aggregating one side by side: every
// aggregate equals the same aggregate of the per-queue readings.
func TestSamplerAggregate(t *testing.T) {
	l := build(t, "two-zones", Options{})
	spec := SamplerSpec{Interval: time(2), MaxPoints: 4096, Queues: true, PFC: true, Flows: true, Ports: true}
	full := l.Sample(spec)
	spec.Aggregate = true
	agg := l.Sample(spec)
	var from []string
	for h := 1; h <= 8; h++ {
		from = append(from, fmt.Sprintf("z1-host%d:gpu0", h), fmt.Sprintf("z1-host%d:gpu1", h))
	}
	if _, err := l.Perf(PerfSpec{Name: "incast", From: from, To: []string{"z2-host1:gpu0"}, Size: 128 << 10, Iterations: 8}); err != nil {
		t.Fatal(err)
	}
	l.Run(time(500))
	full.Stop()
	agg.Stop()
	fs, as := full.Store(), agg.Store()
	if n := len(as.Find("switch_queue_depth_bytes")) + len(as.Find("perf_flow_rate_bytes_per_second")); n != 0 {
		t.Errorf("the aggregating sampler kept %d per-queue or per-flow series", n)
	}
	tp := l.Topology()
	role := func(node string) string {
		if r := tp.Node(node).Role; r != "" {
			return string(r)
		}
		return TierRole
	}
	// Per reading time: the deepest queue of each switch and tier, the
	// queues of each tier, the pause time of each tier.
	deepest := map[string]map[clock.Time]float64{}
	tierMax := map[string]map[clock.Time]float64{}
	queues := map[string]int{}
	for _, s := range fs.Find("switch_queue_depth_bytes") {
		node := s.Label("node")
		r := role(node)
		queues[r]++
		if deepest[node] == nil {
			deepest[node] = map[clock.Time]float64{}
		}
		if tierMax[r] == nil {
			tierMax[r] = map[clock.Time]float64{}
		}
		for _, p := range s.Points {
			deepest[node][p.T] = max(deepest[node][p.T], p.Max)
			tierMax[r][p.T] = max(tierMax[r][p.T], p.Max)
		}
	}
	sawQueue := false
	for node, byT := range deepest {
		s, ok := as.Get(AggSwitchDepth, lbl("node", node))
		if !ok {
			t.Fatalf("no %s of %s", AggSwitchDepth, node)
		}
		for _, p := range s.Points {
			if p.Max != byT[p.T] {
				t.Errorf("%s at %v: deepest %g, per-queue readings say %g", node, p.T, p.Max, byT[p.T])
			}
			sawQueue = sawQueue || p.Max > 0
		}
	}
	if !sawQueue {
		t.Fatal("the incast queued nowhere")
	}
	for r, byT := range tierMax {
		s, ok := as.Get(AggTierDepth, lbl("role", r), lbl("stat", "max"))
		if !ok {
			t.Fatalf("no %s of %s", AggTierDepth, r)
		}
		for _, p := range s.Points {
			if p.Max != byT[p.T] {
				t.Errorf("tier %s at %v: max %g, per-queue readings say %g", r, p.T, p.Max, byT[p.T])
			}
		}
		if q, _ := as.Get(AggTierQueues, lbl("role", r)); int(q.Totals.Last) != queues[r] {
			t.Errorf("tier %s: %g queues, per-queue series %d", r, q.Totals.Last, queues[r])
		}
		// p50 <= p99 <= max at every reading.
		p50, _ := as.Get(AggTierDepth, lbl("role", r), lbl("stat", "p50"))
		p99, _ := as.Get(AggTierDepth, lbl("role", r), lbl("stat", "p99"))
		for i := range s.Points {
			if !(p50.Points[i].Max <= p99.Points[i].Max && p99.Points[i].Max <= s.Points[i].Max) {
				t.Errorf("tier %s at %v: p50 %g, p99 %g, max %g", r, s.Points[i].T, p50.Points[i].Max, p99.Points[i].Max, s.Points[i].Max)
			}
		}
	}
	// Pause times: the tier sums equal the final telemetry's.
	samples := l.Samples()
	paused := map[string]float64{}
	for _, sm := range samples {
		if sm.Name == "switch_queue_paused_seconds_total" && sm.Label("tc") == "3" {
			paused[role(sm.Label("node"))] += sm.Value
		}
	}
	pausedAny := false
	for r, want := range paused {
		s, _ := as.Get(AggTierPaused, lbl("role", r))
		if math.Abs(s.Totals.Last-want) > 1e-12 {
			t.Errorf("tier %s paused %g s, telemetry says %g s", r, s.Totals.Last, want)
		}
		pausedAny = pausedAny || want > 0
	}
	if !pausedAny {
		t.Error("the incast paused no queue")
	}
	nic, _ := as.Get(AggNICPaused)
	if want := telemetry.Sum(samples, "nic_paused_seconds_total", lbl("prio", "3")); math.Abs(nic.Totals.Last-want) > 1e-12 {
		t.Errorf("NICs paused %g s, telemetry says %g s", nic.Totals.Last, want)
	}
	// The job's rate is the sum of its flows' at every reading.
	sum := map[clock.Time]float64{}
	for _, s := range fs.Find("perf_flow_rate_bytes_per_second") {
		for _, p := range s.Points {
			sum[p.T] += p.V
		}
	}
	rate, ok := as.Get(AggJobRate, lbl("job", "incast"))
	if !ok || rate.Totals.Max <= 0 {
		t.Fatalf("job rate %+v", rate.Totals)
	}
	for _, p := range rate.Points {
		if math.Abs(p.V-sum[p.T]) > 1e-6*max(p.V, 1) {
			t.Errorf("job rate at %v: %g, flows' sum %g", p.T, p.V, sum[p.T])
		}
	}
	if a, _ := as.Get(AggJobActive, lbl("job", "incast")); a.Totals.Max != 16 || a.Totals.Last != 0 {
		t.Errorf("active flows: max %g, last %g; want 16 and 0", a.Totals.Max, a.Totals.Last)
	}
}
