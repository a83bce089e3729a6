package agent_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/agent/agenttest"
)

// TestLabOnKubernetes runs a lab through a Lab resource on a real
// control plane (etcd and kube-apiserver, in the client namespace): the
// agents of two machines announce themselves with Leases, rocelab
// rocelab-controller deploys the Lab across them, the commands on the client
// reach the nodes through the agents, a machine that loses its agent and
// nodes comes back with a new agent, and deleting the Lab (rocelab
// destroy) removes everything from every machine. Not covered: agents as
// pods of a kubelet (the harness starts them as processes, as a DaemonSet
// would keep them running), and the controller as a Deployment.
func TestLabOnKubernetes(t *testing.T) {
	testenv.RequireRoot(t)
	agenttest.K8sBinaries(t) // may wait for a build: not while holding the lock
	testenv.Exclusive(t)
	bin := testenv.BuildRocelab(t)
	u := agenttest.New(t, 2)
	cp := u.StartControlPlane(t)
	kc := []string{"--kubeconfig", cp.Kubeconfig}
	ctl := testenv.BuildCommand(t, "rocelab-controller")
	u.StartDaemon(t, "controller", ctl, append([]string{"--root", u.Client.Root + "/controller"}, kc...)...)
	u.Machines[0].StartAgent(t, bin, kc...)
	a2 := u.Machines[1].StartAgent(t, bin, kc...)
	lab := fmt.Sprintf("kb%04x", os.Getpid()&0xffff)
	t.Cleanup(func() {
		u.Run(t, time.Minute, bin, "destroy", "--name", lab, "--root", u.Client.Root, "--kubeconfig", cp.Kubeconfig)
	})

	start := time.Now()
	out := run(t, u, bin, 0, append([]string{"deploy", "--runtime", "kubernetes", "-t", "laptop", "--name", lab}, kc...)...)
	t.Logf("deploy through a Lab resource: %v\n%s", time.Since(start).Round(time.Millisecond), out)
	for _, want := range []string{"Running", "m1", "m2", "links cross machines"} {
		if !strings.Contains(out, want) {
			t.Errorf("deploy output lacks %q", want)
		}
	}
	run(t, u, bin, 0, "perf", "write", "--from", "host1", "--to", "host4", "--name", lab, "--iters", "100")

	// m2 loses its agent and its nodes; its engine starts a new agent.
	a2.Kill()
	killPart(t, u.Machines[1], lab)
	u.Machines[1].StartAgent(t, bin, kc...)
	out = run(t, u, bin, 0, "inspect", "--name", lab)
	if strings.Contains(out, "degraded") {
		t.Errorf("after m2's agent came back:\n%s", out)
	}
	run(t, u, bin, 0, "perf", "write", "--from", "host4", "--to", "host1", "--name", lab, "--iters", "50")

	start = time.Now()
	run(t, u, bin, 0, "destroy", "--name", lab, "--kubeconfig", cp.Kubeconfig)
	t.Logf("destroy (the Lab deleted, its parts gone): %v", time.Since(start).Round(time.Millisecond))
	if left := leftovers(t, u, lab); len(left) > 0 {
		t.Errorf("deleting the Lab left %v", left)
	}

	// An API server that does not answer is an error, not a hang.
	bad := u.Client.Root + "/bad-kubeconfig"
	os.WriteFile(bad, []byte(strings.Replace(mustRead(t, cp.Kubeconfig), ":6443", ":6999", 1)), 0o600)
	code, out := u.Run(t, time.Minute, bin, "deploy", "--runtime", "kubernetes", "-t", "laptop", "--name", lab+"x", "--kubeconfig", bad, "--root", u.Client.Root)
	if code != 1 || !strings.Contains(out, "6999") {
		t.Errorf("deploy against a dead API server: exit %d, want 1 naming it:\n%s", code, out)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
