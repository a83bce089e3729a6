package run

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// flowFigures are what the flow-level mode is compared on: per perf job
// the mean and p99 of its message completion times and its flows' summed
// goodput, per collective job and size the time of one iteration
// (seconds; goodput in Gb/s × 1e-6, so that all print ×1e6).
func flowFigures(out *Outcome) map[string]float64 {
	m := map[string]float64{}
	for _, s := range out.Snapshots[len(out.Snapshots)-1].Samples {
		job := s.Label("job")
		switch {
		case s.Name == "flow_fct_seconds" && job != "" && (s.Label("stat") == "avg" || s.Label("stat") == "p99"):
			m[job+" fct "+s.Label("stat")] = s.Value
		case s.Name == "collective_time_seconds":
			m[job+" time "+s.Label("size")] = s.Value
		case s.Name == "flow_goodput_bytes_per_second":
			m[job+" bw (sum, Gb/s)"] += s.Value * 8 / 1e9 * 1e-6 // printed ×1e6
		}
	}
	return m
}

func loadScenario(t testing.TB, file string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestFlowMatchesPackets runs a small incast in both modes: the
// flow-level mode's completion times must stay near the packet
// simulator's (docs/performance.md, "Flow-level mode", has the figures of
// every kind of scenario).
func TestFlowMatchesPackets(t *testing.T) {
	sc := loadScenario(t, "testdata/flow/incast.yaml")
	pkt, err := Sim(context.Background(), sc, Options{Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	fl, err := Sim(context.Background(), sc, Options{Flow: true})
	if err != nil {
		t.Fatal(err)
	}
	if !pkt.Pass || !fl.Pass {
		t.Fatalf("pass: packet %v, flow %v (%v %v)", pkt.Pass, fl.Pass, pkt.Problems, fl.Problems)
	}
	want, got := flowFigures(pkt), flowFigures(fl)
	for _, k := range []string{"incast fct avg", "incast fct p99"} {
		if want[k] == 0 || math.Abs(got[k]/want[k]-1) > 0.10 {
			t.Errorf("%s: flow %.4g s, packet %.4g s: off by more than 10 %%", k, got[k], want[k])
		}
	}
}

// TestFlowNotMeasured checks that an expectation on what the flow-level
// mode does not model fails, saying so, and that the mode is named.
func TestFlowNotMeasured(t *testing.T) {
	sc := loadScenario(t, "../../../examples/04-ecmp/qp.yaml")
	out, err := Flow(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Mode != ModeFlow {
		t.Errorf("mode %q", out.Mode)
	}
	for _, r := range out.Results {
		drops := strings.HasPrefix(r.Expectation, "drops(")
		if drops && (r.Pass || !strings.Contains(r.Message, "not measured in flow mode")) {
			t.Errorf("%s: pass %v, %q", r.Expectation, r.Pass, r.Message)
		}
		if !drops && !r.Pass {
			t.Errorf("%s: %s", r.Expectation, r.Message)
		}
	}
	if out.Pass {
		t.Error("the run passed with an expectation not measured")
	}
}

// TestFlowRefuses checks that what the flow-level mode does not model is
// refused by name, before anything runs, and that the hierarchical
// all-reduce no longer is.
func TestFlowRefuses(t *testing.T) {
	read := loadScenario(t, "../../../examples/01-incast-hol/scenario.yaml")
	read.Workloads[0].PerfOp = 1 // read
	for _, tc := range []struct {
		name string
		sc   *scenario.Scenario
		want string // "" if accepted
	}{
		{"perf read", read, "workload incast: perf reads are not modelled"},
		{"faults", loadScenario(t, "../../../examples/06-pfc-storm/"+firstYAML(t, "../../../examples/06-pfc-storm")), "faults are not modelled"},
		{"fe", loadScenario(t, "../../../examples/07-fe-checkpoint/scenario.yaml"), "kind fe is not modelled"},
		{"chakra and background", loadScenario(t, "../../../examples/09-chakra/transformer-ai-zone-64-incast.yaml"), "workload step: kind chakra is not modelled"},
		{"hierarchical all-reduce", parseScenario(t, hierYAML), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckFlow(tc.sc)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "run it without --flow")):
				t.Errorf("error %v, want %q and the way out", err, tc.want)
			}
		})
	}
}

// hierYAML is a hierarchical all-reduce on the laptop topology (4 hosts
// × 2 GPUs).
const hierYAML = `name: flow-hier
topology: laptop
duration: 5ms
workloads:
  - {name: hier, kind: collective, op: hier-allreduce, ranks: all, sizes: 4MB, group: 2, cc: none}
expect:
  - busbw(job=hier) > 0
`

func parseScenario(t *testing.T, text string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("inline.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestFlowHierarchical runs hierarchical all-reduces in both modes: the
// flow-level time must be within 5 % of the packet simulator's (the
// issue's target for all-reduces) — on the laptop (8 GPUs, groups of 2,
// no two flows colliding) and on seed-24k's tiers in small (256 GPUs,
// NVLink in the hosts, a ring per rail in each zone, rails across the 2
// zones).
func TestFlowHierarchical(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, key string
	}{
		{"laptop", hierYAML, "hier time 4194304"},
		{"seed-2zones", `name: flow-hier-zones
topology: ../../../examples/topologies/seed-2zones.yaml
duration: 5ms
workloads:
  - {name: hier, kind: collective, op: hier-allreduce, ranks: all, sizes: 8MB, group: 8, levels: [16], nvlink: 3600G, cc: none}
expect:
  - busbw(job=hier) > 0
`, "hier time 8388608"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := parseScenario(t, tc.yaml)
			pkt, err := Sim(context.Background(), sc, Options{Partitions: 1})
			if err != nil {
				t.Fatal(err)
			}
			fl, err := Sim(context.Background(), sc, Options{Flow: true})
			if err != nil {
				t.Fatal(err)
			}
			if !pkt.Pass || !fl.Pass {
				t.Fatalf("pass: packet %v, flow %v (%v %v)", pkt.Pass, fl.Pass, pkt.Problems, fl.Problems)
			}
			want, got := flowFigures(pkt), flowFigures(fl)
			t.Logf("%s: packet %.2f µs, flow %.2f µs", tc.key, want[tc.key]*1e6, got[tc.key]*1e6)
			if want[tc.key] == 0 || math.Abs(got[tc.key]/want[tc.key]-1) > 0.05 {
				t.Errorf("%s: flow %.4g s, packet %.4g s: off by more than 5 %%", tc.key, got[tc.key], want[tc.key])
			}
			if len(fl.Jobs) != 1 || len(fl.Jobs[0].Collective) != 1 || fl.Jobs[0].Collective[0].Op != "hier_all_reduce" || !fl.Jobs[0].Done {
				t.Errorf("flow job summary %+v", fl.Jobs)
			}
		})
	}
}

func firstYAML(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(m) == 0 {
		t.Fatalf("no scenario in %s", dir)
	}
	return filepath.Base(m[0])
}

// BenchmarkFlowCompare prints the flow-level mode's figures beside the
// packet simulator's, with both wall times, for the scenario files in
// ROCELAB_FLOW_COMPARE (comma-separated; default example 08's 128-host
// copy): how docs/performance.md's table was measured. A measurement,
// not a check (TestFlowMatchesPackets checks), so a benchmark: run it
// with go test -run '^$' -bench FlowCompare -benchtime 1x.
func BenchmarkFlowCompare(t *testing.B) {
	files := os.Getenv("ROCELAB_FLOW_COMPARE")
	if files == "" {
		files = "../../../examples/08-scale-permutation/small.yaml"
	}
	for _, f := range strings.Split(files, ",") {
		sc := loadScenario(t, f)
		t0 := time.Now()
		fl, err := Sim(context.Background(), sc, Options{Flow: true})
		if err != nil {
			t.Fatal(err)
		}
		flowWall := time.Since(t0)
		t0 = time.Now()
		pkt, err := Sim(context.Background(), sc, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		pktWall := time.Since(t0)
		want, got := flowFigures(pkt), flowFigures(fl)
		var b strings.Builder
		fmt.Fprintf(&b, "%s: flow %v, packet %v (%d events)\n", f, flowWall.Round(time.Millisecond), pktWall.Round(time.Millisecond), pkt.Events)
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range want {
				if !yield(k) {
					return
				}
			}
		})
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-28s packet %10.2f  flow %10.2f  %+6.1f %%\n", k, want[k]*1e6, got[k]*1e6, 100*(got[k]/want[k]-1))
		}
		t.Log(b.String())
	}
}
