package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

// TestBehindVerdict: a lab that cannot keep up with its dilated clock
// says so instead of giving a verdict. A process per node at k = 40 is
// far behind on any machine (frames read hundreds of µs of fabric time
// after they were due): inspect shows the nodes behind while traffic
// runs; `rocelab run` of example 01 at that k exits 3, names a k that
// would keep up, and writes a JUnit report whose testcases are skipped,
// neither passed nor failed; with --retry-behind it runs again at larger
// k until it keeps up and passes.
func TestBehindVerdict(t *testing.T) {
	requireRoot(t)
	root := runRoot(t)
	lab := labName(t, "behind")
	deployLab(t, "laptop", lab, root, deploy.Options{Scale: 40})
	done := make(chan struct{})
	var perfOut string
	go func() {
		defer close(done)
		_, perfOut, _ = rocelabWithin(t, 2*time.Minute, "perf", "write", "--root", root, "--name", lab, "--from", "host1", "--to", "host4", "--qps", "4", "--duration", "5ms", "--stall", "90s")
	}()
	var seen bool
	for try := 0; try < 20 && !seen; try++ {
		time.Sleep(500 * time.Millisecond)
		l, err := deploy.OnlyLab(context.Background(), root, lab)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range l.Lab.Nodes {
			if n.Health == deploy.HealthBehind && strings.Contains(n.BehindDetail, "late on average") {
				seen = true
			}
		}
		if seen && (l.Status != "running" || len(l.Behind) == 0) {
			t.Errorf("nodes behind: the lab's status is %q, behind %v; want running, with the nodes named", l.Status, l.Behind)
		}
	}
	<-done
	// Whether the perf completed (its results flagged BEHIND) or gave up
	// (its explanation naming the nodes behind), it says so.
	if !strings.Contains(perfOut, "behind") && !strings.Contains(perfOut, "BEHIND") {
		t.Errorf("perf on a lab far behind its clock does not say so:\n%s", perfOut)
	}
	if !seen {
		t.Errorf("a lab at k = 40 with traffic: no node said it was behind")
	}
	deploy.Destroy(context.Background(), root, lab)

	ex := "../../../../examples/01-incast-hol/scenario.yaml"
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out, _ := rocelabWithin(t, 3*time.Minute, "run", ex, "--root", root, "--node-groups", "0", "--scale", "40", "--junit", junit, "-q")
	if code != 3 || !strings.Contains(out, "behind at k = 40") || !strings.Contains(out, "k = 80 would likely keep up") {
		t.Errorf("run at k = 40, a process per node: exit %d, want 3 naming k = 80\n%s", code, out)
	}
	if b, _ := os.ReadFile(junit); !strings.Contains(string(b), `skipped="5"`) || strings.Contains(string(b), "<failure") {
		t.Errorf("JUnit of a run that fell behind: want its 5 testcases skipped, none failed\n%s", b)
	}
	code, out, _ = rocelabWithin(t, 8*time.Minute, "run", ex, "--root", root, "--node-groups", "0", "--scale", "250", "--retry-behind")
	if code != 0 || !strings.Contains(out, "PASS: 5 of 5") {
		t.Errorf("run --retry-behind from k = 250: exit %d, want 0 and a pass\n%s", code, out)
	}
}
