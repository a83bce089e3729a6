package deploy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

// TestExitCodeRule checks the README's one rule across every command that
// takes input (issue 24, item 5): 0 success; 1 a runtime failure (the lab
// or the machine, not the words: a dead node, a stalled job, a command that
// failed); 2 bad input or usage (a bad flag or file, a lab, node, port or
// fault that does not exist), with a sentence naming what is wrong.
func TestExitCodeRule(t *testing.T) {
	requireRoot(t)
	root := runRoot(t)
	lab := labName(t, "exit")
	empty := t.TempDir() // a root with no lab at all
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nnodes:\n  a: {kind: hots}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := []string{"--root", root, "--name", lab}
	none := []string{"--root", empty}
	deployLab(t, "laptop", lab, root, deploy.Options{})

	type row struct {
		args []string
		code int
		say  string // in the output, for exits 1 and 2
	}
	with := func(args []string, flags ...string) []string { return append(append([]string(nil), args...), flags...) }
	rows := []row{
		// No lab deployed under the root: every command that needs one.
		{with([]string{"inspect", "--name", "nope"}, none...), 2, "nope"},
		{with([]string{"stats"}, none...), 2, "no lab"},
		{with([]string{"perf", "write", "--from", "host1", "--to", "host4"}, none...), 2, "host1"},
		{with([]string{"collective", "allreduce"}, none...), 2, "no lab"},
		{with([]string{"fault", "list"}, none...), 2, "no lab"},
		{with([]string{"fault", "add", "rtsw1", "loss", "1%"}, none...), 2, "rtsw1"},
		{append(append([]string{"exec"}, none...), "host1", "--", "true"), 2, "host1"},
		{with([]string{"capture", "rtsw1:p1", "-w", "/dev/null", "-c", "1"}, none...), 2, "rtsw1"},
		{with([]string{"restart", "rtsw1"}, none...), 2, "rtsw1"},
		// Bad words about a deployed lab.
		{with([]string{"perf", "write", "--from", "host1:gpu7", "--to", "host4"}, at...), 2, "gpu7"},
		{with([]string{"perf", "write", "--from", "host1", "--to", "rtsw1"}, at...), 2, "rtsw1"},
		{with([]string{"perf", "write", "--from", "host1", "--to", "st1"}, at...), 2, "st1"},
		{with([]string{"perf", "write", "--from", "host1", "--to", "host4", "--size", "lots"}, at...), 2, "lots"},
		{with([]string{"fault", "add", "nosuch", "loss", "1%"}, at...), 2, "nosuch"},
		{with([]string{"fault", "add", "rtsw1", "wobble", "1%"}, at...), 2, "wobble"},
		{with([]string{"fault", "clear", "rtsw1/f999"}, at...), 2, "f999"},
		{append(append([]string{"exec"}, at...), "nosuch", "--", "true"), 2, "nosuch"},
		{with([]string{"capture", "rtsw1:p99", "-w", "/dev/null", "-c", "1"}, at...), 2, "p99"},
		{with([]string{"restart", "nosuch"}, at...), 2, "nosuch"},
		{with([]string{"stats", "--interval", "-1s"}, at...), 2, "interval"},
		{with([]string{"collective", "allreduce", "--sizes", "huge"}, at...), 2, "huge"},
		{with([]string{"stats", "--no-such-flag"}, at...), 2, "no-such-flag"},
		// Files.
		{[]string{"validate", bad}, 2, "bad.yaml:3"},
		{[]string{"deploy", "-t", bad, "--root", empty}, 2, "bad.yaml:3"},
		{[]string{"graph", "-t", bad}, 2, "bad.yaml:3"},
		{[]string{"run", bad}, 2, "bad.yaml"},
		// Success, and a command's own failure passed on.
		{with([]string{"fault", "list"}, at...), 0, ""},
		{append(append([]string{"exec"}, at...), "host1", "--", "true"), 0, ""},
		{append(append([]string{"exec"}, at...), "host1", "--", "false"), 1, "status 1"},
	}
	for _, r := range rows {
		code, out, _ := rocelabWithin(t, time.Minute, r.args...)
		if code != r.code || (r.code != 0 && !strings.Contains(out, r.say)) {
			t.Errorf("rocelab %s: exit %d, want %d saying %q\n%s", strings.Join(r.args, " "), code, r.code, r.say, out)
		}
	}

	// The lab's state, not the words: a dead switch is exit 1 for every
	// command that reads or drives it, naming the node.
	kill9(t, root, lab, "rtsw1")
	for _, args := range [][]string{
		{"stats"},
		{"fault", "list"},
		{"perf", "write", "--from", "host1", "--to", "host4", "--stall", "1s"},
	} {
		code, out, _ := rocelabWithin(t, time.Minute, with(args, at...)...)
		if code != 1 || !strings.Contains(out, "rtsw1") {
			t.Errorf("rocelab %s with rtsw1 dead: exit %d, want 1 naming rtsw1\n%s", strings.Join(args, " "), code, out)
		}
	}
}
