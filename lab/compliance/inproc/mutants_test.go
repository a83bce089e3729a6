//go:build rocelab_mutants

// The mutation tests need the reference endpoint's mutants, compiled in
// only with the build tag rocelab_mutants (make test runs them).

package inproc

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/compliance"
	"github.com/rocelab/rocelab/wire/capture"
)

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
		rep, err := compliance.Run(context.Background(), compliance.Options{Mode: endpoint.ModeMetaRoCE}, NewEnv(Options{Seed: 1, Mutant: m}))
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

// TestFailedCaseEvidence: a failed case names its pcap, which holds the
// exchange in both directions, and the report fails (exit 1 in the CLI).
func TestFailedCaseEvidence(t *testing.T) {
	dir := t.TempDir()
	rep, err := compliance.Run(context.Background(), compliance.Options{Mode: endpoint.ModeMetaRoCE, Include: []string{"nic/bad-icrc"}, PcapDir: dir},
		NewEnv(Options{Mutant: endpoint.MutAcceptBadICRC}))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Failed()) != 1 || rep.Failed()[0].Pcap == "" {
		t.Fatalf("report %+v: want one failed case with a pcap", rep.Results)
	}
	f, err := os.Open(rep.Failed()[0].Pcap)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var bad, fromIUT int
	err = capture.Read(f, func(d *capture.Decoded) error {
		if d.ICRC == capture.ICRCBad {
			bad++
		}
		if d.Packet.SrcIP == IUTIP {
			fromIUT++
		}
		return nil
	})
	if err != nil || bad != 1 || fromIUT == 0 {
		t.Errorf("pcap: %d frames with a bad ICRC, %d from the IUT, err %v; want the corrupted frame and the IUT's answers", bad, fromIUT, err)
	}
	var junit, js strings.Builder
	if err := rep.WriteJUnit(&junit); err != nil || !strings.Contains(junit.String(), `failures="1"`) {
		t.Errorf("JUnit: %v\n%s", err, junit.String())
	}
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"verdict": "fail"`) {
		t.Errorf("JSON: %v\n%s", err, js.String())
	}
}
