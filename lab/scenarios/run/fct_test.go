package run

import (
	"context"
	"math"
	"testing"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// simRun parses src and runs it in the simulator; every expectation must
// hold and no problem arise.
func simRun(t *testing.T, src string, opts Options) *Outcome {
	t.Helper()
	sc, err := scenario.Parse(t.Name()+".yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Sim(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Results {
		if !r.Pass {
			t.Errorf("FAIL %s: %s", r.Expectation, r.Message)
		} else {
			t.Logf("ok %s", r.Message)
		}
	}
	for _, p := range out.Problems {
		t.Errorf("problem: %s", p)
	}
	return out
}

// stat reads the fct summary statistic of job ("" for every job).
func stat(t *testing.T, out *Outcome, job, stat string) float64 {
	t.Helper()
	match := []telemetry.Label{{Name: "stat", Value: stat}, {Name: "job", Value: job}}
	ss, err := out.Metrics.Lookup("flow_fct_seconds", match)
	if err != nil || len(ss) != 1 || len(ss[0].Points) != 1 {
		t.Fatalf("flow_fct_seconds %v: %d series (%v)", match, len(ss), err)
	}
	return ss[0].Points[0].Value
}

// TestFCTStreaming runs 6,000 messages (more than the 4,096 readings a
// flow keeps exactly) whose completion times grow once a background
// elephant joins the receiver's link: the fct statistics cover every
// message, not the first 4,096.
func TestFCTStreaming(t *testing.T) {
	out := simRun(t, `name: fct-long
topology: laptop
duration: 10ms
workloads:
  - {name: w, kind: perf, from: host1:gpu0, to: host3:gpu0, size: 4KB, iters: 3000, qps: 2}
  - {name: w2, kind: perf, from: host2:gpu1, to: host4:gpu1, size: 8KB, iters: 100}
  - {name: bg, kind: background, pattern: elephant, from: host2:gpu0, to: host3:gpu0, start: 100us, duration: 1ms}
expect:
  - count(fct(job=w)) == 6000
  - count(fct) == 6100
  - p99(fct(job=w)) > p50(fct(job=w))
  - max(fct(job=w)) >= p999(fct(job=w))
  - flow_slowdown(job=w) >= 1
  - flow_slowdown(job=w2) >= 1
`, Options{})
	var flow float64
	for _, j := range out.Jobs {
		if j.Name == "w" {
			if len(j.Flows) != 1 || j.Flows[0].Messages != 6000 {
				t.Fatalf("job w: %+v", j.Flows)
			}
			flow = j.Flows[0].FCTP99
		}
	}
	// One flow: the job's p99 is the flow's (streamed) p99, up to the
	// rank convention; past 4,096 readings both come from the histogram.
	if p99 := stat(t, out, "w", "p99"); math.Abs(p99-flow) > 0.01*flow {
		t.Errorf("p99(fct(job=w)) = %g s, the flow's p99 %g s", p99, flow)
	}
	if all, w := stat(t, out, "", "max"), stat(t, out, "w", "max"); all < w {
		t.Errorf("max over every job %g < max of w %g", all, w)
	}
	// The elephant slows the later messages: the tail is well above the
	// median.
	if p50, p99 := stat(t, out, "w", "p50"), stat(t, out, "w", "p99"); p99 < 1.5*p50 {
		t.Errorf("p99 %g s not above 1.5 × p50 %g s: the elephant did not show", p99, p50)
	}
}

// TestScaleWorkloads runs a permutation (twice, the second spraying over
// MetaRoCE paths), an all-to-all perf job, a hierarchical all-reduce and
// an all-to-all collective on the laptop topology.
func TestScaleWorkloads(t *testing.T) {
	src := `name: scale-small
topology: laptop
duration: 2ms
seed: 3
workloads:
  - {name: perm, kind: perf, pattern: permutation, size: 256KB, iters: 1, cc: none}
  - {name: spray, kind: perf, pattern: permutation, size: 64KB, qps: 4, paths: 16, iters: 1, mode: metaroce, cc: none, start: 200us}
  - {name: a2a, kind: perf, pattern: all-to-all, from: "host[1-2]:gpu0", to: "host[3-4]:gpu0", size: 64KB, iters: 2, start: 400us}
  - {name: hier, kind: collective, op: hier-allreduce, ranks: all, sizes: 1MB, start: 600us}
  - {name: coll, kind: collective, op: alltoall, ranks: "host[1-4]:gpu0", sizes: 256KB, iters: 1, warmup: 0, start: 1ms}
expect:
  - count(fct(job=perm)) == 8
  - count(fct(job=spray)) == 32
  - count(fct(job=a2a)) == 8
  - flow_slowdown(job=perm) >= 1
  - busbw(job=hier) > 0
  - busbw(job=coll) > 0
`
	out := simRun(t, src, Options{})
	perm := func(o *Outcome) map[string]string {
		m := map[string]string{}
		for _, j := range o.Jobs {
			if j.Name == "perm" {
				for _, f := range j.Flows {
					m[f.From] = f.To
				}
			}
		}
		return m
	}
	p := perm(out)
	if len(p) != 8 {
		t.Fatalf("permutation of %d flows, want 8: %v", len(p), p)
	}
	recv := map[string]bool{}
	for from, to := range p {
		if from == to || recv[to] {
			t.Errorf("flow %s->%s: self or second flow to %s", from, to, to)
		}
		recv[to] = true
	}
	for _, j := range out.Jobs {
		if j.Name == "hier" && (len(j.Collective) != 1 || j.Collective[0].Ranks != 8 || j.Collective[0].Op != "hier_all_reduce") {
			t.Errorf("hier: %+v", j.Collective)
		}
	}
	// --seed draws another permutation.
	again := simRun(t, src, Options{Seed: 4, SeedSet: true})
	q := perm(again)
	same := true
	for from, to := range p {
		same = same && q[from] == to
	}
	if same {
		t.Errorf("seeds 3 and 4 ran the same permutation %v", p)
	}
}
