package main

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
)

// TestDestroyUsage: destroy takes exactly one of -t, --name and --all,
// and --images only with --all (exit 2, before anything is touched).
func TestDestroyUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		say  string
	}{
		{[]string{"destroy"}, "exactly one of"},
		{[]string{"destroy", "--name", "a", "--all"}, "exactly one of"},
		{[]string{"destroy", "--name", "a", "--images"}, "--images goes with --all"},
		{[]string{"destroy", "--name", "Bad Name!"}, "lab name"},
	} {
		code, _, stderr, err := runCLI(tc.args...)
		if code != 2 || !strings.Contains(stderr+errString(err), tc.say) {
			t.Errorf("%v: exit %d (%v), want 2 saying %q", tc.args, code, err, tc.say)
		}
	}
}

// TestDestroyBusyLab: destroy against a lab whose deploy holds its lock
// fails without printing "destroyed lab" first (it did, then failed with
// the lab still running).
func TestDestroyBusyLab(t *testing.T) {
	testenv.RequireRoot(t)
	root := t.TempDir()
	l, err := state.Open(root, "busy1", false) // a deploy in progress
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	code, stdout, stderr, err := runCLI("destroy", "--name", "busy1", "--root", root)
	if code == 0 || strings.Contains(stdout, "destroyed") {
		t.Errorf("destroy of a lab being deployed: exit %d, stdout %q (%v %s); want a failure and nothing called destroyed", code, stdout, err, stderr)
	}
}
