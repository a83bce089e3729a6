package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
	"github.com/rocelab/rocelab/lab/cluster/kube"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
	"golang.org/x/sys/unix"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// TestLabsMadeWithKubectl: a Lab made as kubectl apply makes it (a YAML
// manifest, created with client-go's dynamic client) runs under the
// controller, and this machine's commands say how to reach it until
// rocelab attach records it; then inspect, perf and stats work on it and
// destroy deletes it, leaving nothing. An interrupted deploy --runtime
// kubernetes deletes the Lab it created; destroy --namespace removes a
// Lab that a killed deploy left behind, known here or not.
func TestLabsMadeWithKubectl(t *testing.T) {
	testenv.RequireRoot(t)
	agenttest.K8sBinaries(t) // may wait for a build: not while holding the lock
	testenv.Exclusive(t)
	bin := testenv.BuildRocelab(t)
	u := agenttest.New(t, 2)
	cp := u.StartControlPlane(t)
	kc := []string{"--kubeconfig", cp.Kubeconfig}
	ctl := testenv.BuildCommand(t, "rocelab-controller")
	u.StartDaemon(t, "controller", ctl, append([]string{"--root", u.Client.Root + "/controller"}, kc...)...)
	// The agents announce themselves in the default namespace, rocelab.
	u.Machines[0].StartAgent(t, bin, kc...)
	u.Machines[1].StartAgent(t, bin, kc...)
	cfg := restConfig(t, u, cp)
	kcl, err := kube.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lab := fmt.Sprintf("kk%04x", os.Getpid()&0xffff)
	t.Cleanup(func() {
		u.Run(t, 2*time.Minute, bin, "destroy", "--name", lab, "--root", u.Client.Root, "--namespace", kube.DefaultNamespace, "--kubeconfig", cp.Kubeconfig)
	})

	tp, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	kubectlApply(t, cfg, kube.DefaultNamespace, lab, tp.Text())
	waitPhase(t, kcl, kube.DefaultNamespace, lab, kube.PhaseRunning)

	// Not known here yet: the error says how to attach.
	code, out := u.Run(t, time.Minute, bin, "inspect", "--name", lab, "--root", u.Client.Root)
	if code != 2 || !strings.Contains(out, "rocelab attach --name "+lab) {
		t.Errorf("inspect of a Lab made with kubectl, not attached: exit %d, want 2 and how to attach:\n%s", code, out)
	}
	out = run(t, u, bin, 0, append([]string{"attach", "--name", lab}, kc...)...)
	if !strings.Contains(out, "attached (Lab rocelab/"+lab) {
		t.Errorf("attach:\n%s", out)
	}
	if out = run(t, u, bin, 0, append([]string{"attach"}, kc...)...); !strings.Contains(out, "attached already") {
		t.Errorf("attach of every running Lab, again:\n%s", out)
	}
	out = run(t, u, bin, 0, "inspect", "--name", lab)
	for _, want := range []string{"running", "m1", "m2", "links cross machines"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect of the attached Lab lacks %q:\n%s", want, out)
		}
	}
	if out = run(t, u, bin, 0, "perf", "write", "--from", "host1", "--to", "host3", "--name", lab, "--iters", "50"); !strings.Contains(out, "Data check: ok") {
		t.Errorf("perf on the attached Lab did not check its data:\n%s", out)
	}
	run(t, u, bin, 0, "stats", "--name", lab, "ctsw1")
	run(t, u, bin, 0, append([]string{"destroy", "--name", lab}, kc...)...)
	if _, err := kcl.GetLab(t.Context(), kube.DefaultNamespace, lab); !apierrors.IsNotFound(err) {
		t.Errorf("destroy left the Lab: %v", err)
	}
	if left := leftovers(t, u, lab); len(left) > 0 {
		t.Errorf("destroy of the attached Lab left %v", left)
	}

	// A deploy interrupted while its Lab waits (no agent announces
	// itself in namespace default: the Lab stays pending) deletes it.
	idle := lab + "i"
	c := u.Start(t, bin, "deploy", "--runtime", "kubernetes", "-t", "laptop", "--name", idle, "--namespace", "default", "--kubeconfig", cp.Kubeconfig, "--root", u.Client.Root)
	waitPhase(t, kcl, "default", idle, kube.PhasePending)
	c.Proc.Signal(unix.SIGINT)
	code, out = c.Wait(t, 2*time.Minute)
	if code != 130 || !strings.Contains(out, "deleted again") {
		t.Errorf("deploy interrupted: exit %d, want 130 saying its Lab is deleted:\n%s", code, out)
	}
	if _, err := kcl.GetLab(t.Context(), "default", idle); !apierrors.IsNotFound(err) {
		t.Errorf("the interrupted deploy left its Lab: %v", err)
	}
	if _, err := deploy.Deployed(u.Client.Root, idle); err == nil {
		t.Error("the interrupted deploy left a record here")
	}

	// A deploy killed outright cannot clean up: its Lab stays, unknown
	// here. destroy without --namespace says where to look; with it, the
	// Lab goes.
	c = u.Start(t, bin, "deploy", "--runtime", "kubernetes", "-t", "laptop", "--name", idle, "--namespace", "default", "--kubeconfig", cp.Kubeconfig, "--root", u.Client.Root)
	waitPhase(t, kcl, "default", idle, kube.PhasePending)
	c.Proc.Signal(unix.SIGKILL)
	c.Wait(t, time.Minute)
	code, out = u.Run(t, time.Minute, bin, "destroy", "--name", idle, "--root", u.Client.Root)
	if code != 2 || !strings.Contains(out, "--namespace") {
		t.Errorf("destroy of a Lab not known here, no --namespace: exit %d, want 2 naming --namespace:\n%s", code, out)
	}
	out = run(t, u, bin, 0, append([]string{"destroy", "--name", idle, "--namespace", "default"}, kc...)...)
	if !strings.Contains(out, "deleted Lab default/"+idle) {
		t.Errorf("destroy --namespace of a left-behind Lab:\n%s", out)
	}
	if _, err := kcl.GetLab(t.Context(), "default", idle); !apierrors.IsNotFound(err) {
		t.Errorf("destroy --namespace left the Lab: %v", err)
	}
}

// restConfig reaches cp from the test process (through the client
// namespace).
func restConfig(t *testing.T, u *agenttest.Underlay, cp *agenttest.ControlPlane) *rest.Config {
	t.Helper()
	cfg, err := kube.Config(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dial = u.DialContext
	return cfg
}

// kubectlApply creates the Lab ns/name of topology text from a YAML
// manifest, as kubectl apply -f would: the CLI has no record of it.
func kubectlApply(t *testing.T, cfg *rest.Config, ns, name string, text []byte) {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "apiVersion: rocelab.dev/v1alpha1\nkind: Lab\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  topology: |\n", name, ns)
	for _, line := range strings.Split(strings.TrimRight(string(text), "\n"), "\n") {
		fmt.Fprintf(&b, "    %s\n", line)
	}
	var obj map[string]any
	if err := yaml.NewYAMLOrJSONDecoder(&b, 4096).Decode(&obj); err != nil {
		t.Fatal(err)
	}
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The controller installs the CRD as it starts: give it a moment.
	for deadline := time.Now().Add(30 * time.Second); ; {
		_, err = d.Resource(kube.LabsResource).Namespace(ns).Create(t.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if err == nil || !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("create Lab %s/%s: %v", ns, name, err)
	}
}

// waitPhase waits up to a minute until the Lab ns/name exists with phase
// (for PhasePending: exists, and the controller has looked at it).
func waitPhase(t *testing.T, c *kube.Client, ns, name, phase string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var last string
	for {
		l, err := c.GetLab(ctx, ns, name)
		if err == nil {
			last = l.Status.Phase + ": " + l.Status.Message
			if l.Status.Phase == phase && (phase != kube.PhasePending || l.Status.Message != "") {
				return
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Lab %s/%s not %q after a minute: %s", ns, name, phase, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
