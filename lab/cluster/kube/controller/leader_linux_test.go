package controller_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
	"github.com/rocelab/rocelab/lab/cluster/kube"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
)

// TestLeaderElection runs two rocelab-controllers at once on a real
// control plane, as a rolling update of the controller's Deployment does,
// with the agents of two machines: three Labs all reach Ready, each
// deployed once and by the leader alone (its log and the Labs' Events
// say so); the Ready and Degraded conditions and the Events are what
// kubectl describe shows. When the leader stops, the other takes the
// Lease, leaves the running Labs alone, deploys a new one, and deleting
// every Lab leaves nothing on the machines.
func TestLeaderElection(t *testing.T) {
	testenv.RequireRoot(t)
	agenttest.K8sBinaries(t) // may wait for a build: not while holding the lock
	testenv.Exclusive(t)
	bin := testenv.BuildRocelab(t)
	ctlBin := testenv.BuildCommand(t, "rocelab-controller")
	u := agenttest.New(t, 2)
	cp := u.StartControlPlane(t)
	c := newClient(t, restConfig(t, u, cp))
	ctx := t.Context()
	kc := []string{"--kubeconfig", cp.Kubeconfig}
	u.Machines[0].StartAgent(t, bin, kc...)
	a2 := u.Machines[1].StartAgent(t, bin, kc...)
	// Short lease timing so that a leader that dies without giving up the
	// Lease is replaced in seconds; a stopped one gives it up at once.
	ctls := map[string]*ctlProc{}
	for _, name := range []string{"a", "b"} {
		ctls[name] = startController(t, u, name, ctlBin, append(kc, "--root", u.Client.Root+"/ctl-"+name,
			"--leader-elect-lease-duration", "6s", "--leader-elect-renew-deadline", "4s", "--leader-elect-retry-period", "500ms")...)
	}
	leader := func(except string) (string, *ctlProc) {
		var name string
		waitFor(t, time.Minute, "a controller leads", func() (bool, string) {
			for n, p := range ctls {
				if n != except && strings.Contains(p.Log(), "controller leading") {
					name = n
					return true, ""
				}
			}
			return false, "none logged it"
		})
		return name, ctls[name]
	}
	first, lp := leader("")
	holder := leaseHolder(t, c)
	t.Logf("controller %s leads (Lease holder %s)", first, holder)

	id := fmt.Sprintf("%04x", os.Getpid()&0xffff)
	labs := []string{"le1-" + id, "le2-" + id, "le3-" + id}
	t.Cleanup(func() { deleteLabs(t, c, u, labs) })
	for _, name := range labs {
		l := &kube.Lab{ObjectMeta: metav1.ObjectMeta{Namespace: labNS, Name: name}, Spec: kube.LabSpec{Topology: tiny, Source: "tiny.yaml"}}
		if err := c.Create(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for _, name := range labs {
		waitReady(t, c, name)
	}
	t.Logf("three Labs Ready in %v", time.Since(start).Round(time.Millisecond))
	once := func(what string) {
		t.Helper()
		all := map[string]int{}
		for n, p := range ctls {
			for l, k := range p.deploys() {
				all[l] += k
				t.Logf("%s: controller %s deployed %s %d times", what, n, l, k)
			}
		}
		for _, name := range labs {
			if k := all[labNS+"/"+name]; k != 1 {
				t.Errorf("%s: Lab %s deployed %d times, want once", what, name, k)
			}
			evs := labEvents(t, c, labNS, name)
			if r := reasons(evs); r[kube.ReasonDeploying] != 1 || r[kube.ReasonDeployed] != 1 {
				t.Errorf("%s: Lab %s has Events %v, want one Deploying and one Deployed:%s", what, name, r, describe(evs))
			}
		}
	}
	once("with two controllers")
	for n, p := range ctls {
		if n != first && len(p.deploys()) > 0 {
			t.Errorf("controller %s, not the leader, deployed %v", n, p.deploys())
		}
	}
	l, _ := getLab(t, c, labNS, labs[0])
	t.Logf("kubectl describe lab %s: %s %s, %d machines, %d nodes; conditions %+v%s", l.Name, l.Status.Phase, l.Status.Message,
		l.Status.Machines, l.Status.Nodes, l.Status.Conditions, describe(labEvents(t, c, labNS, l.Name)))

	// The leader stops (the old pod of a rolling update): the other leads.
	lp.Stop()
	second, _ := leader(first)
	waitFor(t, 30*time.Second, "the Lease changes hands", func() (bool, string) {
		h := leaseHolder(t, c)
		return h != holder && h != "", h
	})
	t.Logf("controller %s leads after %s stopped (Lease holder %s)", second, first, leaseHolder(t, c))
	labs = append(labs, "le4-"+id)
	if err := c.Create(ctx, &kube.Lab{ObjectMeta: metav1.ObjectMeta{Namespace: labNS, Name: labs[3]}, Spec: kube.LabSpec{Topology: tiny}}); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c, labs[3])
	// It looked at the three running Labs (they are still Ready), and
	// deployed only the new one.
	time.Sleep(2 * time.Second)
	for _, name := range labs[:3] {
		waitReady(t, c, name)
	}
	once("after the handover")
	if got := ctls[second].deploys(); len(got) != 1 || got[labNS+"/"+labs[3]] != 1 {
		t.Errorf("the new leader deployed %v, want only %s", got, labs[3])
	}

	// m2's agent goes: the leader's check finds its nodes unreachable and
	// the Labs Degraded, AgentLost, with a Warning Event; a new agent
	// brings them back to Ready.
	a2.Stop()
	waitFor(t, time.Minute, "Lab "+labs[0]+" Degraded with its agent lost", func() (bool, string) {
		l, err := getLab(t, c, labNS, labs[0])
		if err != nil {
			return false, err.Error()
		}
		st, reason := condition(l, kube.ConditionDegraded)
		rst, _ := condition(l, kube.ConditionReady)
		return st == metav1.ConditionTrue && reason == kube.ReasonAgentLost && rst == metav1.ConditionFalse && l.Status.Phase == kube.PhaseDegraded &&
			reasons(labEvents(t, c, labNS, labs[0]))[kube.ReasonAgentLost] > 0, fmt.Sprintf("%s %s %+v", l.Status.Phase, l.Status.Message, l.Status.Conditions)
	})
	l, _ = getLab(t, c, labNS, labs[0])
	t.Logf("m2's agent stopped: %s: %s%s", l.Status.Phase, l.Status.Message, describe(labEvents(t, c, labNS, labs[0])))
	u.Machines[1].StartAgent(t, bin, kc...)
	for _, name := range labs {
		waitReady(t, c, name)
	}
	once("after m2's agent came back")
	deleteLabs(t, c, u, labs)
}

// waitReady waits until Lab name is Ready for its generation, and checks
// its status says so throughout.
func waitReady(t *testing.T, c client.Client, name string) {
	t.Helper()
	waitFor(t, 3*time.Minute, "Lab "+name+" Ready", func() (bool, string) {
		l, err := getLab(t, c, labNS, name)
		if err != nil {
			return false, err.Error()
		}
		st, reason := condition(l, kube.ConditionReady)
		dst, dreason := condition(l, kube.ConditionDegraded)
		return st == metav1.ConditionTrue && reason == kube.ReasonDeployed && dst == metav1.ConditionFalse && dreason == kube.ReasonHealthy &&
			l.Status.Phase == kube.PhaseRunning && l.Status.ObservedGeneration == l.Generation &&
			l.Status.Machines == 2 && l.Status.Nodes == 5, fmt.Sprintf("%s %s %+v", l.Status.Phase, l.Status.Message, l.Status.Conditions)
	})
}

// leaseHolder is the holder of the controllers' leader Lease.
func leaseHolder(t *testing.T, c client.Client) string {
	t.Helper()
	var l coordv1.Lease
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "rocelab-controller"}, &l); err != nil {
		t.Fatalf("leader Lease: %v", err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// deleteLabs deletes labs, waits until they are gone, and checks that
// nothing of them is left on the machines.
func deleteLabs(t *testing.T, c client.Client, u *agenttest.Underlay, labs []string) {
	t.Helper()
	ctx := context.Background() // also a cleanup's, after t.Context ended
	for _, name := range labs {
		err := c.Delete(ctx, &kube.Lab{ObjectMeta: metav1.ObjectMeta{Namespace: labNS, Name: name}})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete Lab %s: %v", name, err)
		}
	}
	for _, name := range labs {
		waitFor(t, 2*time.Minute, "Lab "+name+" gone", func() (bool, string) {
			_, err := getLab(t, c, labNS, name)
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		names, err := netns.List()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if strings.HasPrefix(n, state.NetnsPrefix+name+"-") {
				t.Errorf("Lab %s deleted, its namespace %s left", name, n)
			}
		}
		for _, m := range u.Machines {
			if _, err := os.Stat(state.Dir(m.Root, name)); err == nil {
				t.Errorf("Lab %s deleted, its run directory left on %s", name, m.Name)
			}
		}
	}
}
