package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
)

// TestMakeDemoBuildsWhatItRuns: make demo compiles rocelab and the node
// binary its labs start, not the Kubernetes controller or the verbs
// library it never uses.
func TestMakeDemoBuildsWhatItRuns(t *testing.T) {
	mk := testenv.RequireTool(t, "make")
	out, err := exec.Command(mk, "-n", "-C", "../..", "demo").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n demo: %v\n%s", err, out)
	}
	plan := string(out)
	for _, want := range []string{"./cmd/rocelab\n", "./cmd/rocelab-node\n", "scripts/demo.sh"} {
		if !strings.Contains(plan, want) {
			t.Errorf("make demo does not run %q:\n%s", strings.TrimSpace(want), plan)
		}
	}
	for _, unwanted := range []string{"rocelab-controller", "build-verbs-lib"} {
		if strings.Contains(plan, unwanted) {
			t.Errorf("make demo builds %s, which the demo does not use:\n%s", unwanted, plan)
		}
	}
}
