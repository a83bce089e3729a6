package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/jsonapi"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

// twoAgents sets a test up with two machines, each running its agent,
// and returns them, the rocelab binary and a lab name starting with tag.
func twoAgents(t *testing.T, tag string) (u *agenttest.Underlay, bin string, a1, a2 *agenttest.Agent, lab string) {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.Exclusive(t)
	bin = testenv.BuildRocelab(t)
	u = agenttest.New(t, 2)
	a1 = u.Machines[0].StartAgent(t, bin)
	a2 = u.Machines[1].StartAgent(t, bin)
	return u, bin, a1, a2, fmt.Sprintf("%s%04x", tag, os.Getpid()&0xffff)
}

// run runs rocelab in the harness's client namespace against its own
// root, and fails the test unless it exits with want.
func run(t *testing.T, u *agenttest.Underlay, bin string, want int, args ...string) string {
	t.Helper()
	code, out := u.Run(t, 3*time.Minute, bin, append(args, "--root", u.Client.Root)...)
	if code != want {
		t.Fatalf("rocelab %s: exit %d, want %d:\n%s", strings.Join(args, " "), code, want, out)
	}
	return out
}

// leftovers lists what lab left on the machine: namespaces, and run
// directories under the harness's roots.
func leftovers(t *testing.T, u *agenttest.Underlay, lab string) []string {
	t.Helper()
	var out []string
	names, err := netns.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, state.NetnsPrefix+lab+"-") {
			out = append(out, "netns "+n)
		}
	}
	for _, m := range append(u.Machines, u.Client) {
		if _, err := os.Stat(state.Dir(m.Root, lab)); err == nil {
			out = append(out, "run dir on "+m.Name)
		}
	}
	return out
}

// TestLabAcrossAgents deploys laptop over two machines, each with its
// agent, from a third: the commands reach the nodes through the agents;
// when one machine's agent and nodes die, a new agent brings its part
// back; destroy leaves nothing on any machine.
func TestLabAcrossAgents(t *testing.T) {
	u, bin, a1, a2, lab := twoAgents(t, "ag")
	t.Cleanup(func() {
		u.Run(t, time.Minute, bin, "destroy", "--name", lab, "--root", u.Client.Root)
	})

	start := time.Now()
	out := run(t, u, bin, 0, "deploy", "-t", "laptop", "--name", lab, "--agents", agenttest.Agents(a1, a2))
	t.Logf("deploy across 2 machines: %v\n%s", time.Since(start).Round(time.Millisecond), out)
	out = run(t, u, bin, 0, "inspect", "--name", lab)
	for _, want := range []string{"running", "MACHINE", "m1", "m2", "links cross machines (VXLAN)", "rtsw2"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}

	// Verified RDMA between the machines, then a collective over all.
	out = run(t, u, bin, 0, "perf", "write", "--from", "host1", "--to", "host3", "--name", lab, "--iters", "200")
	t.Logf("perf across machines:\n%s", out)
	out = run(t, u, bin, 0, "collective", "allreduce", "--name", lab, "--sizes", "1MB", "--iters", "2")
	t.Logf("collective across machines:\n%s", out)
	out = run(t, u, bin, 0, "stats", "--name", lab, "ctsw1")
	if !strings.Contains(out, "ctsw1") {
		t.Errorf("stats ctsw1:\n%s", out)
	}
	// A command in a node on another machine: its output and exit code.
	exec := func(argv ...string) (int, string) {
		return u.Run(t, time.Minute, bin, append([]string{"exec", "--name", lab, "--root", u.Client.Root, "host3", "--"}, argv...)...)
	}
	if code, out := exec("cat", "/proc/net/dev"); code != 0 || !strings.Contains(out, "-3p1") {
		t.Errorf("exec cat /proc/net/dev in host3: exit %d, its ports not listed:\n%s", code, out)
	}
	if code, out := exec("sh", "-c", "exit 3"); code != 3 {
		t.Errorf("exec sh -c 'exit 3' in host3: exit %d:\n%s", code, out)
	}
	// A capture on another machine's node, beside a perf into it.
	pcap := filepath.Join(t.TempDir(), "host3.pcap")
	captured := make(chan string, 1)
	go func() {
		code, out := u.Run(t, time.Minute, bin, "capture", "host3:gpu0", "-w", pcap, "-c", "50", "--name", lab, "--root", u.Client.Root)
		captured <- fmt.Sprintf("exit %d: %s", code, out)
	}()
	time.Sleep(500 * time.Millisecond)
	run(t, u, bin, 0, "perf", "write", "--from", "host1", "--to", "host3", "--name", lab, "--iters", "200")
	if got := <-captured; !strings.HasPrefix(got, "exit 0") {
		t.Errorf("capture across machines: %s", got)
	}
	if b, err := os.ReadFile(pcap); err != nil || len(b) < 24+50*16 || string(b[:4]) != "\xd4\xc3\xb2\xa1" && string(b[:4]) != "\x4d\x3c\xb2\xa1" {
		t.Errorf("capture file: %d bytes, %v", len(b), err)
	}
	// The dashboard's /metrics reads every node through its agent.
	u.StartDaemon(t, "dashboard", bin, "dashboard", "--name", lab, "--root", u.Client.Root, "--listen", "127.0.0.1:9464")
	metrics := u.Get(t, "http://127.0.0.1:9464/metrics", 20*time.Second)
	for _, node := range []string{"ctsw2", "rtsw1"} { // one on each machine
		if want := fmt.Sprintf(`rocelab_switch_port_rx_packets_total{lab=%q,node=%q`, lab, node); !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// A node restarted through its machine's agent.
	run(t, u, bin, 0, "restart", "--name", lab, "host3")
	// A fault on a link that crosses machines, set through the agent of
	// the machine that sends on it.
	run(t, u, bin, 0, "fault", "add", "rtsw2", "to", "ctsw1", "loss", "1%", "--name", lab)
	if out = run(t, u, bin, 0, "fault", "list", "--name", lab); !strings.Contains(out, "rtsw2") || !strings.Contains(out, "loss") {
		t.Errorf("fault list:\n%s", out)
	}
	run(t, u, bin, 0, "fault", "clear", "--all", "--name", lab)

	// Machine m2 loses its agent and every node process of its part.
	a2.Kill()
	killPart(t, u.Machines[1], lab)
	code, out := u.Run(t, time.Minute, bin, "inspect", "--name", lab, "--root", u.Client.Root)
	if !strings.Contains(out, "degraded") {
		t.Errorf("inspect with m2 gone (exit %d) does not say degraded:\n%s", code, out)
	}
	code, out = u.Run(t, time.Minute, bin, "perf", "write", "--from", "host1", "--to", "host3", "--name", lab, "--iters", "10", "--root", u.Client.Root)
	if code != 1 || !strings.Contains(out, "host3") {
		t.Errorf("perf to a dead machine: exit %d, want 1 and an error naming host3:\n%s", code, out)
	}
	// Its engine starts the agent again: the part comes back.
	a2 = u.Machines[1].StartAgent(t, bin)
	out = run(t, u, bin, 0, "inspect", "--name", lab)
	if strings.Contains(out, "degraded") {
		t.Errorf("after the agent came back:\n%s", out)
	}
	run(t, u, bin, 0, "perf", "write", "--from", "host1", "--to", "host3", "--name", lab, "--iters", "50")

	// m2 reboots: its agent, processes, namespaces (and tunnels with
	// them) and run directory go; its agent starts again with nothing.
	// deploy --repair has the agent deploy the part again.
	a2.Kill()
	rebootPart(t, u.Machines[1], lab)
	a2 = u.Machines[1].StartAgent(t, bin)
	if out := run(t, u, bin, 0, "deploy", "--repair", "--name", lab); !strings.Contains(out, "restarted host3") {
		t.Errorf("deploy --repair after m2 lost its part:\n%s", out)
	}
	run(t, u, bin, 0, "perf", "write", "--from", "host1", "--to", "host3", "--name", lab, "--iters", "50")

	start = time.Now()
	run(t, u, bin, 0, "destroy", "--name", lab)
	t.Logf("destroy across 2 machines: %v", time.Since(start).Round(time.Millisecond))
	if left := leftovers(t, u, lab); len(left) > 0 {
		t.Errorf("destroy left %v", left)
	}

	// The same lab deployed again at once gets its tunnels (the same
	// VNIs) without waiting: destroy removed them before their namespaces,
	// whose teardown the kernel finishes later.
	out = run(t, u, bin, 0, "deploy", "-t", "laptop", "--name", lab, "--agents", agenttest.Agents(a1, a2))
	if strings.Contains(out, "waited") {
		t.Errorf("deploy right after destroy waited for the old lab's tunnels:\n%s", out)
	}
	run(t, u, bin, 0, "perf", "write", "--from", "host1", "--to", "host3", "--name", lab, "--iters", "50")
	run(t, u, bin, 0, "destroy", "--name", lab)
	if left := leftovers(t, u, lab); len(left) > 0 {
		t.Errorf("the second destroy left %v", left)
	}
}

// killPart kills every node process of m's part of lab, as a machine
// whose engine killed the agent's pod would lose them.
func killPart(t *testing.T, m agenttest.Machine, lab string) {
	t.Helper()
	part, err := deploy.Deployed(m.Root, lab)
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, n := range part.Nodes {
		if n.PID != 0 {
			proc.Process{PID: n.PID, StartTime: n.StartTime}.Stop(0)
			killed++
		}
	}
	if killed == 0 {
		t.Fatalf("%s's part runs no node process", m.Name)
	}
}

// rebootPart does to m's part of lab what a reboot of m would once its
// agent is gone: its node processes, namespaces (their tunnels with them)
// and run directory go. (rocelab destroy would not do: on this one machine, its
// sweep of the lab's leftovers would take the other machines' parts.)
func rebootPart(t *testing.T, m agenttest.Machine, lab string) {
	t.Helper()
	killPart(t, m, lab)
	part, err := deploy.Deployed(m.Root, lab)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range part.Nodes {
		if err := netns.Delete(n.NetNS); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(state.Dir(m.Root, lab)); err != nil {
		t.Fatal(err)
	}
}

// TestDeployAcrossFailures: an agent that does not answer is named and
// nothing is made; a part that fails to deploy takes the other parts down
// with it.
func TestDeployAcrossFailures(t *testing.T) {
	u, bin, a1, a2, lab := twoAgents(t, "af")

	code, out := u.Run(t, time.Minute, bin, "deploy", "-t", "laptop", "--name", lab, "--agents", a1.Addr+",198.18.7.99:7470", "--root", u.Client.Root)
	if code != 1 || !strings.Contains(out, "198.18.7.99:7470") {
		t.Errorf("deploy with a dead agent: exit %d, want 1 naming it:\n%s", code, out)
	}
	// An agent with a token answers nobody without it.
	t.Setenv(jsonapi.TokenEnv, "not-the-token")
	code, out = u.Run(t, time.Minute, bin, "deploy", "-t", "laptop", "--name", lab, "--agents", agenttest.Agents(a1, a2), "--root", u.Client.Root)
	if code != 1 || !strings.Contains(out, "wants its token") {
		t.Errorf("deploy with a wrong token: exit %d, want 1 saying the agent wants its token:\n%s", code, out)
	}
	token, err := jsonapi.ReadToken(u.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(jsonapi.TokenEnv, token)
	if left := leftovers(t, u, lab); len(left) > 0 {
		t.Errorf("a refused deploy left %v", left)
	}

	// A namespace in the way of one of m2's nodes fails m2's part.
	blocker := state.NetnsName(lab, "host3")
	if err := netns.Create(blocker); err != nil {
		t.Fatal(err)
	}
	defer netns.Delete(blocker)
	code, out = u.Run(t, 2*time.Minute, bin, "deploy", "-t", "laptop", "--name", lab, "--agents", agenttest.Agents(a1, a2), "--root", u.Client.Root)
	if code != 1 || !strings.Contains(out, "m2") {
		t.Errorf("deploy with m2's part failing: exit %d, want 1 naming m2:\n%s", code, out)
	}
	netns.Delete(blocker)
	if left := leftovers(t, u, lab); len(left) > 0 {
		t.Errorf("a failed deploy left %v", left)
	}

	// m2 runs a lab of this name for someone else (another deploying
	// machine): a deploy over m1 and m2 is refused, and its rollback
	// leaves m2's lab alone.
	other := filepath.Join(u.Client.Root, "other")
	code, out = u.Run(t, 2*time.Minute, bin, "deploy", "-t", "laptop", "--name", lab, "--agents", a2.Addr, "--root", other)
	if code != 0 {
		t.Fatalf("deploy on m2 alone: exit %d\n%s", code, out)
	}
	defer u.Run(t, time.Minute, bin, "destroy", "--name", lab, "--root", other)
	code, out = u.Run(t, 2*time.Minute, bin, "deploy", "-t", "laptop", "--name", lab, "--agents", agenttest.Agents(a1, a2), "--root", u.Client.Root)
	if code != 2 || !strings.Contains(out, "m2") {
		t.Errorf("deploy over a machine that runs the lab already: exit %d, want 2 naming m2:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(state.Dir(u.Machines[1].Root, lab), deploy.LabFile)); err != nil {
		t.Errorf("the rollback took m2's lab, which it did not make: %v", err)
	}
	if _, err := os.Stat(state.Dir(u.Machines[0].Root, lab)); err == nil {
		t.Error("the rollback left m1's part")
	}
}
