package live_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/compliance"
	"github.com/rocelab/rocelab/lab/compliance/live"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
)

// start builds rocelab, starts an endpoint node with o and checks at the
// end that it left no namespace behind.
func start(t *testing.T, o live.Options) *live.IUT {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.Exclusive(t) // timing checks: not beside another timing-sensitive test
	o.Binary = testenv.BuildRocelab(t)
	before := ours(t)
	u, err := live.Start(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := u.Close(); err != nil {
			t.Error(err)
		}
		if after := ours(t); len(after) != len(before) {
			t.Errorf("namespaces left behind: %v (before: %v)", after, before)
		}
	})
	return u
}

// ours lists the compliance namespaces of this process.
func ours(t *testing.T) []string {
	names, err := netns.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, "rlc-") {
			out = append(out, n)
		}
	}
	return out
}

func logReport(t *testing.T, rep *compliance.Report) {
	for _, r := range rep.Results {
		if r.Verdict != "pass" {
			t.Logf("%s [%v]: %s\n\t%s", r.Case, r.Cites, r.Detail, strings.Join(r.Log, "\n\t"))
		}
	}
}

// TestReferencePasses runs the whole metaroce mode against a real
// endpoint node process over a veth pair: every MUST case must pass.
func TestReferencePasses(t *testing.T) {
	u := start(t, live.Options{Seed: 1})
	begin := time.Now()
	rep, err := compliance.Run(t.Context(), compliance.Options{Mode: endpoint.ModeMetaRoCE, PcapDir: t.TempDir(), IUT: u.Describe()}, u.NewEnv())
	if err != nil {
		t.Fatal(err)
	}
	var fabric time.Duration
	for _, r := range rep.Results {
		fabric += time.Duration(r.Fabric / 1000)
	}
	t.Logf("%d cases, %d failed, in %v of wall clock (%v of fabric time at k=%d)", len(rep.Results), len(rep.Failed()), time.Since(begin), fabric, u.Scale())
	if !rep.OK() || len(rep.Results) != len(compliance.Cases()) {
		logReport(t, rep)
		t.Errorf("%d of %d cases failed, every MUST passed: %v", len(rep.Failed()), len(rep.Results), rep.OK())
	}
}

// TestStartFailsClean: a node that cannot start fails Start with the
// reason, and what Start made (namespaces, veth, run directory) is
// removed. Start used to call Close on its nil result here and panic.
func TestStartFailsClean(t *testing.T) {
	testenv.RequireRoot(t)
	before := ours(t)
	u, err := live.Start(t.Context(), live.Options{Binary: "/nonexistent/rocelab"})
	if err == nil {
		u.Close()
		t.Fatal("Start with a missing binary succeeded")
	}
	t.Logf("Start: %v", err)
	if after := ours(t); len(after) != len(before) {
		t.Errorf("namespaces left behind: %v (before: %v)", after, before)
	}
}
