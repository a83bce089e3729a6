package cluster_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
)

// requireRoot: the lab tests need root and the machine to themselves.
func requireRoot(t *testing.T) {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.Exclusive(t)
}

// labName is a lab name unique to this test process.
func labName(_ *testing.T, what string) string {
	return fmt.Sprintf("rlc%x-%s", os.Getpid()&0xffff, what)
}

// binary builds the rocelab command (once per test process).
func binary(t *testing.T) string { return testenv.BuildRocelab(t) }

// noNamespacesOf fails t when a named namespace of lab is left.
func noNamespacesOf(t *testing.T, lab string) {
	t.Helper()
	names, err := netns.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.Contains(n, lab) {
			t.Errorf("namespace %s of lab %s left behind", n, lab)
		}
	}
}
