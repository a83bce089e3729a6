package main

import (
	"bufio"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/runtime/netns"
)

// TestBrokenPipeCleansUp: a reader that goes away (rocelab … | head) stops
// a command as Ctrl-C does — it removes what it made and exits 141 —
// instead of the SIGPIPE killing it first. Here the compliance suite's
// own endpoint node: its namespaces, process and run directory.
func TestBrokenPipeCleansUp(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.Exclusive(t)
	bin := testenv.BuildRocelab(t)
	before := complianceNetns(t)
	cmd := exec.Command(bin, "compliance", "--iut", "node")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout // the progress lines: the first write after the close breaks
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "# [1/") {
		t.Fatalf("first line %q, %v", line, err)
	}
	out.Close() // as head does after its line
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitBrokenPipe {
		t.Errorf("rocelab after its reader went away: %v, want exit %d", err, exitBrokenPipe)
	}
	if after := complianceNetns(t); len(after) != len(before) {
		t.Errorf("namespaces left behind: %v (before: %v)", after, before)
	}
}

// complianceNetns lists the compliance suite's namespaces (rlc-…).
func complianceNetns(t *testing.T) []string {
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
