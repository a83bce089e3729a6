package main

import (
	"strings"
	"testing"
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
