package run

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// byHand are examples too large for the test (a minute or more): they
// are validated here and run by hand; a smaller copy of each runs.
var byHand = map[string]bool{
	"08-scale-permutation/scenario.yaml": true, // 1,024 hosts; small.yaml is its 128-host copy
	// 24,576 GPUs, minutes each; small.yaml runs the three on seed-24k's
	// tiers in small.
	"10-seed-24k/permutation-ecmp.yaml":  true,
	"10-seed-24k/permutation-spray.yaml": true,
	"10-seed-24k/hier-allreduce.yaml":    true,
}

// TestExamples runs every shipped example (examples/*/*.yaml but the
// topologies) in the simulator: each must pass (CI runs them all).
func TestExamples(t *testing.T) {
	all, _ := filepath.Glob("../../../examples/*/*.yaml")
	var files []string
	for _, f := range all {
		if filepath.Base(filepath.Dir(f)) == "topologies" {
			continue
		}
		if byHand[filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f)] {
			if _, err := scenario.Load(f); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			continue
		}
		files = append(files, f)
	}
	if len(files) < 7 {
		t.Fatalf("found %d examples, want at least 7", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			sc, err := scenario.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Sim(context.Background(), sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range out.Results {
				if !r.Pass {
					t.Errorf("FAIL %s: %s", r.Expectation, r.Message)
				}
			}
			for _, p := range out.Problems {
				t.Errorf("problem: %s", p)
			}
			// One busbw per job and size: a second source of the same
			// result would make sum() and count() of busbw(job=…) lie.
			if n := len(out.Snapshots); n > 0 {
				seen := map[[2]string]bool{}
				for _, s := range out.Snapshots[n-1].Samples {
					if s.Name != "collective_busbw_bytes_per_second" {
						continue
					}
					k := [2]string{s.Label("job"), s.Label("size")}
					if seen[k] {
						t.Errorf("busbw of job %s size %s emitted twice", k[0], k[1])
					}
					seen[k] = true
				}
			}
			checkRatesWithinLine(t, sc, out)
			t.Logf("%s: %v of fabric time in %v, %d events", sc.Name, out.FabricTime, out.Wall, out.Events)
		})
	}
}

// checkRatesWithinLine fails t when a plotted flow rate exceeds the line
// rate of the NIC that receives it, or a link's byte series shows a port
// sending faster than its link (issue 25: the victim of example 01 was
// plotted at 103 Gb/s on a 100G link). Tolerance: 0.1 %, for float sums.
func checkRatesWithinLine(t *testing.T, sc *scenario.Scenario, out *Outcome) {
	t.Helper()
	rateOf := func(nic string) float64 {
		node, port, _ := strings.Cut(nic, ":")
		if n := sc.Topology.Node(node); n != nil {
			if p := n.Port(port); p != nil {
				return float64(p.Rate)
			}
		}
		return 0
	}
	for _, s := range out.Series {
		switch s.Name {
		case "perf_flow_rate_bytes_per_second":
			line := rateOf(s.Label("to"))
			for _, p := range s.Points {
				if line > 0 && p.Max*8 > line*1.001 {
					t.Errorf("flow %s -> %s plotted at %.2f Gb/s at %v, over its %.0f Gb/s line", s.Label("from"), s.Label("to"), p.Max*8/1e9, p.T, line/1e9)
					break
				}
			}
		}
	}
}
