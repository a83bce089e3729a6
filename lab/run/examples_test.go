package run

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rocelab/rocelab/lab/scenario"
)

// TestExamples runs every shipped example (examples/*/*.yaml but the
// topologies) in the simulator: each must pass (CI runs them all).
func TestExamples(t *testing.T) {
	all, _ := filepath.Glob("../../examples/*/*.yaml")
	var files []string
	for _, f := range all {
		if filepath.Base(filepath.Dir(f)) != "topologies" {
			files = append(files, f)
		}
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
			t.Logf("%s: %v of fabric time in %v, %d events", sc.Name, out.FabricTime, out.Wall, out.Events)
		})
	}
}
