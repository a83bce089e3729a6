package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/jsonapi"
	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
	"golang.org/x/sys/unix"
)

// TestAgentTrouble: what the commands say when an agent is down or
// refuses the token — the machine and its agent named, and what helps
// (not rocelab restart, which cannot) — an inspect that exits 1 and shows
// the machine unreachable, a destroy the agents refuse that says so and
// keeps the lab, and a capture on another machine interrupted with
// Ctrl-C that writes the frames it has.
func TestAgentTrouble(t *testing.T) {
	u, bin, a1, a2, lab := twoAgents(t, "at")
	t.Cleanup(func() {
		u.Run(t, time.Minute, bin, "destroy", "--name", lab, "--root", u.Client.Root)
	})
	run(t, u, bin, 0, "deploy", "-t", "laptop", "--name", lab, "--agents", agenttest.Agents(a1, a2))

	// Ctrl-C on a capture on another machine's node, beside a perf into
	// it: the frames captured so far come back and are written.
	pcap := filepath.Join(t.TempDir(), "host3.pcap")
	c := u.Start(t, bin, "capture", "host3:gpu0", "-w", pcap, "-c", "100000000", "--wall-duration", "2m", "--name", lab, "--root", u.Client.Root)
	time.Sleep(time.Second)
	run(t, u, bin, 0, "perf", "write", "--from", "host1", "--to", "host3", "--name", lab, "--iters", "200")
	c.Proc.Signal(unix.SIGINT)
	code, out := c.Wait(t, time.Minute)
	b, err := os.ReadFile(pcap)
	if code != 130 || err != nil || len(b) < 24+100*16 || !strings.Contains(out, "frames captured") {
		t.Errorf("capture across machines interrupted: exit %d (want 130), file of %d bytes (%v), want the frames so far:\n%s", code, len(b), err, out)
	}

	// A wrong token: every agent refuses; the commands say so and name
	// the machines' agents.
	token := os.Getenv(jsonapi.TokenEnv)
	t.Setenv(jsonapi.TokenEnv, "not-the-token")
	for _, args := range [][]string{
		{"inspect", "--name", lab},
		{"perf", "write", "--from", "host1", "--to", "host3", "--name", lab, "--iters", "10"},
		{"stats", "--name", lab, "ctsw1"},
	} {
		code, out := u.Run(t, time.Minute, bin, append(args, "--root", u.Client.Root)...)
		if code != 1 || !strings.Contains(out, "token") || !strings.Contains(out, a1.Addr) || strings.Contains(out, "rocelab restart") {
			t.Errorf("rocelab %s with a wrong token: exit %d, want 1 naming the token and agent %s, not rocelab restart:\n%s", args[0], code, a1.Addr, out)
		}
	}
	code, out = u.Run(t, time.Minute, bin, "destroy", "--name", lab, "--root", u.Client.Root)
	if code != 1 || strings.Contains(out, "destroyed lab") || !strings.Contains(out, "token") || !strings.Contains(out, "kept") {
		t.Errorf("destroy with a wrong token: exit %d, want 1 saying the agents refused and the lab is kept:\n%s", code, out)
	}
	t.Setenv(jsonapi.TokenEnv, token)
	if out := run(t, u, bin, 0, "inspect", "--name", lab); !strings.Contains(out, "running") {
		t.Errorf("the lab after a refused destroy:\n%s", out)
	}

	// m2's agent is down (its nodes run on): the commands name m2 and its
	// agent, and say to start the agent again.
	a2.Kill()
	code, out = u.Run(t, time.Minute, bin, "inspect", "--name", lab, "--root", u.Client.Root)
	if code != 1 || !strings.Contains(out, "unreachable") || !strings.Contains(out, a2.Addr) || strings.Contains(out, ": running") {
		t.Errorf("inspect with m2's agent down: exit %d, want 1 showing m2 (%s) unreachable:\n%s", code, a2.Addr, out)
	}
	for _, args := range [][]string{
		{"perf", "write", "--from", "host1", "--to", "host3", "--name", lab, "--iters", "10"},
		{"stats", "--name", lab},
	} {
		code, out := u.Run(t, time.Minute, bin, append(args, "--root", u.Client.Root)...)
		if code != 1 || !strings.Contains(out, "machine m2") || !strings.Contains(out, a2.Addr) || !strings.Contains(out, "agent") || strings.Contains(out, "rocelab restart") {
			t.Errorf("rocelab %s with m2's agent down: exit %d, want 1 naming machine m2 and its agent %s, not rocelab restart:\n%s", args[0], code, a2.Addr, out)
		}
	}
	code, out = u.Run(t, time.Minute, bin, "destroy", "--name", lab, "--root", u.Client.Root)
	if code != 1 || strings.Contains(out, "destroyed lab") || !strings.Contains(out, "m2") {
		t.Errorf("destroy with m2's agent down: exit %d, want 1 naming m2:\n%s", code, out)
	}
	// The agent comes back: the lab is whole, and a second destroy
	// finishes the job.
	u.Machines[1].StartAgent(t, bin)
	run(t, u, bin, 0, "perf", "write", "--from", "host1", "--to", "host3", "--name", lab, "--iters", "20")
	run(t, u, bin, 0, "destroy", "--name", lab)
	if left := leftovers(t, u, lab); len(left) > 0 {
		t.Errorf("destroy left %v", left)
	}
}
