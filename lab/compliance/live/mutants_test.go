//go:build rocelab_mutants

// The mutation tests need the reference endpoint's mutants, compiled in
// only with the build tag rocelab_mutants (make test runs them); the node
// binary they start is built with the same tag (internal/testenv).

package live_test

import (
	"context"
	"os"
	"testing"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/compliance"
	"github.com/rocelab/rocelab/lab/compliance/live"
)

// TestMutantsCaught: the emulation mode catches defects of the node too —
// a retransmission timer that never doubles and a NIC that accepts a bad ICRC, each run through
// a node process started with the mutant, and every defect of its
// Communication Manager — and a failed case leaves its pcap.
func TestMutantsCaught(t *testing.T) {
	for _, tc := range []struct{ mutant, cases string }{
		{"no-backoff", "rc/timeout"},
		{"accept-bad-icrc", "nic/bad-icrc"},
		// The Communication Manager's defects, through the adapter's CM
		// operations (POST /cm/listen, /cm/connect).
		{"cm-drop-unknown-req", "cm/req-unlistened"},
		{"cm-no-req-retry", "cm/req-retry"},
		{"cm-no-rep-retry", "cm/rtu-lost"},
		{"cm-dup-req-new", "cm/dup-req"},
		{"cm-rep-wrong-remote-id", "cm/req-rep"},
		{"cm-ignore-mra", "cm/mra"},
		{"cm-no-drep", "cm/dreq"},
		{"cm-sidr-wrong-status", "cm/sidr-unlistened"},
	} {
		t.Run(tc.mutant, func(t *testing.T) {
			u := start(t, live.Options{Seed: 1, Mutant: tc.mutant})
			dir := t.TempDir()
			rep, err := compliance.Run(context.Background(), compliance.Options{Mode: endpoint.ModeMetaRoCE, Include: []string{tc.cases}, PcapDir: dir}, u.NewEnv())
			if err != nil {
				t.Fatal(err)
			}
			f := rep.Failed()
			if rep.OK() || len(f) != 1 || !f[0].Mandatory {
				t.Fatalf("mutant %s: report %+v, want %s to fail", tc.mutant, rep.Results, tc.cases)
			}
			t.Logf("mutant %s caught by %s: %s", tc.mutant, f[0].Case, f[0].Detail)
			if st, err := os.Stat(f[0].Pcap); err != nil || st.Size() < 100 {
				t.Errorf("pcap of the failed case: %v", err)
			}
		})
	}
}
