package agent_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/tools/stats"
)

// TestLabOnKubernetes runs a lab through a Lab resource on a real
// control plane (etcd and kube-apiserver, in the client namespace): the
// agents of two machines announce themselves with Leases, rocelab
// rocelab-controller deploys the Lab across them (racks whole: back-end
// leaf–spine and front-end links cross as VXLAN tunnels), and from the
// client: perf between machines checks its data, a 3:1 incast into host3
// makes its leaf send PFC frames that the spine on the other machine
// receives, an all-reduce over both machines completes, a machine that
// loses its agent and nodes comes back with a new agent, and deleting the
// Lab (rocelab destroy) removes everything from every machine. Not covered: agents as
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
	out = run(t, u, bin, 0, "perf", "write", "--from", "host1", "--to", "host4", "--name", lab, "--iters", "100")
	if !strings.Contains(out, "Data check: ok") {
		t.Errorf("perf across machines did not check its data:\n%s", out)
	}
	incastOverTunnels(t, u, bin, lab)
	run(t, u, bin, 0, "collective", "allreduce", "--name", lab, "--sizes", "1MB", "--iters", "2")

	// m2 loses its agent and its nodes; its engine starts a new agent.
	// Kill returns once the old agent is gone, so the dial StartAgent
	// waits for reaches the new one; the new agent listens before it
	// repairs its nodes, and the inspect below waits out that repair: the
	// lab is whole at the first asking.
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

// incastOverTunnels runs a 3:1 incast into host3:gpu0 from the other
// rack's hosts (rocelab perf three times at once) and checks, with rocelab
// inspect and stats, that host3's leaf paused the spines across the
// machines: the far ends of its links that cross machines received PFC
// frames, and forwarded the incast's bytes.
func incastOverTunnels(t *testing.T, u *agenttest.Underlay, bin, lab string) {
	t.Helper()
	var st []deploy.LabStatus
	if err := json.Unmarshal([]byte(run(t, u, bin, 0, "inspect", "--name", lab, "-o", "json")), &st); err != nil || len(st) != 1 || st[0].Lab == nil || st[0].Placement == nil {
		t.Fatalf("inspect -o json: %v", err)
	}
	l := st[0].Lab
	far := map[string]bool{} // "node/port" of the spine ends of rtsw2's crossing links
	for _, c := range l.Placement.Crossings {
		a, b, _ := strings.Cut(c.Name, " -- ")
		if strings.HasPrefix(a, "rtsw2:") {
			far[strings.Replace(b, ":", "/", 1)] = true
		}
		if strings.HasPrefix(b, "rtsw2:") {
			far[strings.Replace(a, ":", "/", 1)] = true
		}
	}
	if len(far) == 0 {
		t.Fatalf("no link of rtsw2 crosses machines: %+v", l.Placement.Crossings)
	}
	pfc := func() (frames, bps float64) {
		var r stats.Report
		if err := json.Unmarshal([]byte(run(t, u, bin, 0, "stats", "--name", lab, "-o", "json")), &r); err != nil {
			t.Fatalf("stats -o json: %v", err)
		}
		for _, p := range r.Ports {
			if far[p.Node+"/"+p.Port] {
				frames += p.PFCRx
				bps += p.TxBps
			}
		}
		return frames, bps
	}
	before, _ := pfc()
	var wg sync.WaitGroup
	for _, from := range []string{"host1:gpu0", "host1:gpu1", "host2:gpu0"} {
		wg.Go(func() {
			code, out := u.Run(t, 3*time.Minute, bin, "perf", "write", "--from", from, "--to", "host3:gpu0", "--name", lab, "--duration", "2ms", "--root", u.Client.Root)
			if code != 0 {
				t.Errorf("incast %s -> host3:gpu0: exit %d\n%s", from, code, out)
			}
		})
	}
	wg.Wait()
	after, _ := pfc()
	if after <= before {
		t.Errorf("the 3:1 incast into host3 sent no PFC frame over the tunnels to %v (%v before, %v after)", far, before, after)
	}
	t.Logf("incast into host3: %v PFC frames crossed the machines to %v", after-before, far)
}
