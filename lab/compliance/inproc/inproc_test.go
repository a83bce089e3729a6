package inproc

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/compliance"
)

// TestReferencePasses runs every case against the reference endpoint.
func TestReferencePasses(t *testing.T) {
	start := time.Now()
	rep, err := compliance.Run(context.Background(), compliance.Options{Mode: endpoint.ModeMetaRoCE, PcapDir: t.TempDir()}, NewEnv(Options{Seed: 1}))
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

// timeoutEnv is the in-process Env counting the IUT's retransmission
// timeouts, as the emulated one does (compliance.TimeoutCounter).
type timeoutEnv struct{ *env }

func (e timeoutEnv) Timeouts() (int64, error) {
	var n int64
	for _, q := range e.qps {
		n += q.ad.QP.Stats().Timeouts
	}
	return n, nil
}

// TestRerunAfterTimeout: a case that fails after the IUT's retransmission
// timer fired runs once more, and the second run's verdict counts (with
// the first failure in its log); a case that fails with no timeout, fails
// both runs, or tests timeouts (Case.Timeouts) is not passed.
func TestRerunAfterTimeout(t *testing.T) {
	runs := map[string]int{}
	// silence posts a WRITE and lets the IUT time out (200 us) before
	// failing on the runs in failOn.
	silence := func(id string, timeout bool, failOn ...int) compliance.Case {
		return compliance.Case{ID: "test/" + id, Mode: endpoint.ModeRoCEv2, Cites: []string{"MR-4.13"}, Title: id,
			Run: func(ct *compliance.T) {
				runs[id]++
				if timeout {
					c := ct.Connect(compliance.ConnOpts{})
					c.Post(compliance.WR{WRID: 1, Op: "write", Len: 64, RemoteAddr: 0x100, RKey: 1})
					ct.Collect(300 * clock.Microsecond)
				}
				if slices.Contains(failOn, runs[id]) {
					ct.Errorf("%s failed on run %d", id, runs[id])
				}
			}}
	}
	timer := silence("timer-case", true, 1)
	timer.Timeouts = true // timeouts are what it tests: no second try
	cases := append(compliance.Cases(),
		silence("lost-race", true, 1),
		silence("no-timeout", false, 1, 2),
		silence("fails-twice", true, 1, 2),
		timer)
	newEnv := func(ctx context.Context) (compliance.Env, error) {
		e, err := newEnv(Options{Seed: 1})
		return timeoutEnv{e}, err
	}
	rep, err := compliance.RunCases(context.Background(), cases, compliance.Options{Include: []string{"test/"}}, newEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 4 {
		t.Fatalf("%d results, want the 4 test cases", len(rep.Results))
	}
	want := map[string]struct {
		verdict      string
		runs, reruns int
	}{
		"test/lost-race":   {"pass", 2, 1},
		"test/no-timeout":  {"fail", 1, 0},
		"test/fails-twice": {"fail", 2, 1},
		"test/timer-case":  {"fail", 1, 0},
	}
	for _, r := range rep.Results {
		w := want[r.Case]
		if r.Verdict != w.verdict || runs[strings.TrimPrefix(r.Case, "test/")] != w.runs || r.Reruns != w.reruns {
			t.Errorf("%s: verdict %s after %d runs (reruns %d), want %s after %d (%d)", r.Case, r.Verdict, runs[strings.TrimPrefix(r.Case, "test/")], r.Reruns, w.verdict, w.runs, w.reruns)
		}
	}
	if r := rep.Results[0]; len(r.Log) == 0 || !strings.Contains(r.Log[0], "run 1 failed after the IUT's retransmission timer fired (lost-race failed on run 1)") {
		t.Errorf("log of the rerun case: %q", r.Log)
	}
}
