package inproc

import (
	"context"
	"testing"
	"time"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/compliance"
)

// TestReferencePasses runs every case against the reference endpoint.
func TestReferencePasses(t *testing.T) {
	start := time.Now()
	rep, err := compliance.Run(context.Background(), compliance.Options{Profile: compliance.ProfileMetaRoCE, PcapDir: t.TempDir()}, NewEnv(Options{Seed: 1}))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Verdict != "pass" {
			t.Errorf("%s [%v]: %s\n%s", r.Case, r.Cites, r.Detail, joinLog(r.Log))
		}
	}
	t.Logf("%d cases in %v", len(rep.Results), time.Since(start))
}

func joinLog(l []string) string {
	s := ""
	for _, x := range l {
		s += "\t" + x + "\n"
	}
	return s
}

// TestMutantsCaught runs the suite against every mutant of the reference:
// each must fail at least one case citing a MUST (the mutation score is
// caught/total and must be 100 %).
func TestMutantsCaught(t *testing.T) {
	muts := endpoint.Mutants()
	if len(muts) < 20 {
		t.Fatalf("%d mutants, want at least 20", len(muts))
	}
	caught := 0
	for _, m := range muts {
		rep, err := compliance.Run(context.Background(), compliance.Options{}, NewEnv(Options{Seed: 1, Mutant: m}))
		if err != nil {
			t.Fatal(err)
		}
		var killers []string
		for _, r := range rep.Failed() {
			if r.Mandatory {
				killers = append(killers, r.Case)
			}
		}
		if len(killers) == 0 {
			t.Errorf("mutant %s survived every case", m)
			continue
		}
		caught++
		t.Logf("mutant %-24s caught by %v", m, killers)
	}
	t.Logf("mutation score: %d/%d = %.0f%%", caught, len(muts), 100*float64(caught)/float64(len(muts)))
}
