package run

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rocelab/rocelab/lab/scenarios/scenario"
)

// byHand are examples too large for the test (a minute or more): they
// are validated here and run by hand; a smaller copy of each runs.
var byHand = map[string]bool{
	"08-scale-permutation/scenario.yaml": true, // 1,024 hosts; small.yaml is its 128-host copy
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
			t.Logf("%s: %v of fabric time in %v, %d events", sc.Name, out.FabricTime, out.Wall, out.Events)
		})
	}
}
