package helm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/rocelab/rocelab/internal/labca"
	"github.com/rocelab/rocelab/internal/ociimage"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
	"github.com/rocelab/rocelab/lab/cluster/kube"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
)

// rocelabImage builds rocelab's image as `make image` does (the programs
// statically; the verbs libraries when they can be built) into dir, and
// returns the docker archive's path.
func rocelabImage(t *testing.T, dir, ref string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	if err := testenv.BuildRocelabTo(filepath.Join(bin, "rocelab")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(testenv.BuildCommand(t, "rocelab-controller"), filepath.Join(bin, "rocelab-controller")); err != nil {
		t.Fatal(err)
	}
	exec.Command("../../scripts/build-verbs-lib.sh", filepath.Join(bin, "lib", "libibverbs.so.1")).Run()
	spec, err := ociimage.Rocelab(bin, "test")
	if err != nil && !errors.Is(err, ociimage.ErrNoVerbsLib) {
		t.Fatal(err)
	}
	img, err := ociimage.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	tar := filepath.Join(dir, "rocelab.tar")
	if err := ociimage.WriteArchive(tar, ref, img); err != nil {
		t.Fatal(err)
	}
	return tar
}

// TestChartOnKubelet installs the chart on a real node (StartNode) of a
// real control plane: the agent runs as the DaemonSet's pod on machine m1
// and the controller as the Deployment's two pods there, beside a second
// machine whose agent is a process (one kubelet per machine is not
// possible here: two kubelets would share one cgroup tree). A lab
// deployed through a Lab resource reaches Running across both machines,
// perf crosses them with its data checked, the agent's pod deleted comes
// back as a new pod that brings m1's part back, and deleting the Lab
// leaves nothing on either machine.
func TestChartOnKubelet(t *testing.T) {
	testenv.RequireRoot(t)
	k8sBinaries(t)
	requireNodeTools(t)
	testenv.Exclusive(t)
	begin := time.Now()
	dir := t.TempDir()
	tar := rocelabImage(t, dir, "rocelab:test")
	bin := filepath.Join(dir, "bin", "rocelab")
	u := agenttest.New(t, 2)
	cp := u.StartControlPlane(t)
	m1, m2 := u.Machines[0], u.Machines[1]
	n := StartNode(t, u, m1, cp, tar)
	t.Logf("node %s Ready with the images imported: %v", m1.Name, time.Since(begin).Round(time.Second))
	ctx := t.Context()
	const ns = "rocelab"

	// The namespace, and the lab CA the harness's commands trust, made
	// before the install: the chart's lookup must keep it.
	if _, err := n.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	caPEM, keyPEM := read(t, filepath.Join(u.CADir, labca.CertFile)), read(t, filepath.Join(u.CADir, labca.KeyFile))
	if _, err := n.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rocelab-agent-ca"},
		Data: map[string][]byte{"ca.pem": caPEM, "ca-key.pem": keyPEM}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(read(t, u.TokenFile)))
	r, err := Render(ChartDir(), Release{Name: "rocelab", Namespace: ns, Config: n.Config, Values: map[string]any{
		"image":     map[string]any{"repository": "rocelab", "tag": "test", "pullPolicy": "Never"},
		"apiServer": map[string]any{"host": u.Client.Addr.String(), "port": "6443"},
		"agent":     map[string]any{"token": token, "runDir": m1.Root},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range r.Objects {
		if o.GetKind() == "Secret" && o.GetName() == "rocelab-agent-ca" && at(o.Object, "data", "ca.pem") == nil {
			t.Fatalf("the chart's lookup did not keep the lab CA: %v", o.Object)
		}
	}
	if len(r.CRDs) == 0 {
		t.Fatal("the chart has no CRD (crds/labs.yaml)")
	}
	start := time.Now()
	if err := Apply(ctx, n.Config, append(r.CRDs, r.Objects...)); err != nil {
		t.Fatal(err)
	}
	agentPod := n.waitPods(t, ns, "app.kubernetes.io/component=agent", 1, "")
	n.waitPods(t, ns, "app.kubernetes.io/component=controller", 2, "")
	t.Logf("chart applied, the agent's pod and the controller's two pods Ready: %v", time.Since(start).Round(time.Millisecond))

	kc := []string{"--kubeconfig", cp.Kubeconfig, "--namespace", ns}
	m2.StartAgent(t, bin, kc...)
	lab := fmt.Sprintf("hl%04x", os.Getpid()&0xffff)
	t.Cleanup(func() {
		u.Run(t, time.Minute, bin, append([]string{"destroy", "--name", lab, "--root", u.Client.Root}, kc...)...)
	})
	start = time.Now()
	out := run(t, u, bin, append([]string{"deploy", "--runtime", "kubernetes", "-t", "laptop", "--name", lab}, kc...)...)
	t.Logf("deploy through a Lab resource, the agent in a pod: %v\n%s", time.Since(start).Round(time.Millisecond), out)
	for _, want := range []string{"Running", m1.Name, m2.Name, "links cross machines"} {
		if !strings.Contains(out, want) {
			t.Errorf("deploy output lacks %q", want)
		}
	}
	dyn, err := dynamic.NewForConfig(n.Config)
	if err != nil {
		t.Fatal(err)
	}
	labs := dyn.Resource(kube.LabsResource).Namespace(ns)
	if l, err := labs.Get(ctx, lab, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if conds, _, _ := unstructured.NestedSlice(l.Object, "status", "conditions"); len(conds) > 0 {
		ready := ""
		for _, c := range conds {
			if at(c, "type") == "Ready" {
				ready = fmt.Sprint(at(c, "status"), " ", at(c, "reason"))
			}
		}
		if !strings.HasPrefix(ready, "True") {
			t.Errorf("the Lab's Ready condition: %q (%v)", ready, conds)
		}
	}
	if out := run(t, u, bin, "perf", "write", "--from", "host1", "--to", "host4", "--name", lab, "--iters", "100"); !strings.Contains(out, "Data check: ok") {
		t.Errorf("perf across machines did not check its data:\n%s", out)
	}

	rollController(t, n, ns, lab, m1.Root, m2.Root)

	// The agent's pod deleted: the DaemonSet's new pod repairs m1's part.
	start = time.Now()
	if err := n.Client.CoreV1().Pods(ns).Delete(ctx, agentPod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.waitPods(t, ns, "app.kubernetes.io/component=agent", 1, agentPod)
	waitFor(t, time.Minute, "the lab whole again", func() error {
		code, out := u.Run(t, time.Minute, bin, "inspect", "--name", lab, "--root", u.Client.Root)
		if code != 0 || strings.Contains(out, "degraded") {
			return fmt.Errorf("inspect: exit %d\n%s", code, out)
		}
		return nil
	})
	t.Logf("agent pod deleted, a new one serving the whole lab: %v", time.Since(start).Round(time.Millisecond))
	if out := run(t, u, bin, "perf", "write", "--from", "host4", "--to", "host1", "--name", lab, "--iters", "50"); !strings.Contains(out, "Data check: ok") {
		t.Errorf("perf after the new agent pod:\n%s", out)
	}

	// kubectl delete of the Lab: the finalizer's parts go, then the Lab.
	start = time.Now()
	if err := labs.Delete(ctx, lab, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the Lab gone", func() error {
		if _, err := labs.Get(ctx, lab, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	t.Logf("Lab deleted, its parts gone: %v", time.Since(start).Round(time.Millisecond))
	if left := leftovers(t, lab, m1.Root, m2.Root); len(left) > 0 {
		t.Errorf("deleting the Lab left %v", left)
	}

	// Uninstall: the kubelet takes the pods down before it stops.
	for _, o := range r.Objects {
		if k := o.GetKind(); k == "DaemonSet" || k == "Deployment" {
			res := map[string]string{"DaemonSet": "daemonsets", "Deployment": "deployments"}[k]
			gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: res}
			fg := metav1.DeletePropagationForeground
			dyn.Resource(gvr).Namespace(ns).Delete(ctx, o.GetName(), metav1.DeleteOptions{PropagationPolicy: &fg})
		}
	}
	waitFor(t, 2*time.Minute, "the chart's pods gone", func() error {
		pods, err := n.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) > 0 {
			return fmt.Errorf("%d pods (%v)", len(pods.Items), err)
		}
		return nil
	})
	t.Logf("whole test: %v", time.Since(begin).Round(time.Second))
}

// rollController restarts the controller's Deployment as `kubectl
// rollout restart` does — a rolling update, new pods beside old ones —
// and checks that the Lab stayed Running throughout, that no node of it
// was started again (the same PIDs on both machines), and that the leader
// Lease passed to a new pod.
func rollController(t *testing.T, n *Node, ns, lab string, roots ...string) {
	t.Helper()
	ctx := t.Context()
	pids := func() string {
		var b strings.Builder
		for _, r := range roots {
			l, err := deploy.Deployed(r, lab)
			if err != nil {
				t.Fatal(err)
			}
			for _, nd := range l.Nodes {
				fmt.Fprintf(&b, "%s=%d ", nd.Name, nd.PID)
			}
		}
		return b.String()
	}
	holder := func() string {
		l, err := n.Client.CoordinationV1().Leases(ns).Get(ctx, "rocelab-controller", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return fmt.Sprint("none: ", err)
		}
		return *l.Spec.HolderIdentity
	}
	dyn, err := dynamic.NewForConfig(n.Config)
	if err != nil {
		t.Fatal(err)
	}
	labs := dyn.Resource(kube.LabsResource).Namespace(ns)
	before, leader := pids(), holder()
	start := time.Now()
	deps := n.Client.AppsV1().Deployments(ns)
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"rocelab.test/restarted":%q}}}}}`, start.Format(time.RFC3339Nano))
	if _, err := deps.Patch(ctx, "rocelab-controller", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	phases := map[string]int{}
	waitFor(t, 3*time.Minute, "the controller's rolling update", func() error {
		if u, err := labs.Get(ctx, lab, metav1.GetOptions{}); err == nil {
			p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			phases[p]++
		}
		d, err := deps.Get(ctx, "rocelab-controller", metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := d.Status
		if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != 2 || st.ReadyReplicas != 2 || st.Replicas != 2 {
			return fmt.Errorf("%+v", st)
		}
		return nil
	})
	var newLeader string
	waitFor(t, time.Minute, "a new pod leading", func() error {
		if newLeader = holder(); newLeader == leader || newLeader == "" {
			return fmt.Errorf("held by %q (was %s)", newLeader, leader)
		}
		return nil
	})
	t.Logf("controller rolled (two replicas, one surging): %v; leader %s -> %s; the Lab's phase while it rolled %v",
		time.Since(start).Round(time.Millisecond), leader, newLeader, phases)
	for p := range phases {
		if p != kube.PhaseRunning {
			t.Errorf("the Lab was %s during the rolling update (%v)", p, phases)
		}
	}
	if after := pids(); after != before {
		t.Errorf("the rolling update restarted nodes: before %s, after %s", before, after)
	}
}

// waitPods waits until want pods match selector in ns, all Running and
// Ready on the node, none named not, and returns the first one's name.
func (n *Node) waitPods(t *testing.T, ns, selector string, want int, not string) string {
	t.Helper()
	var first string
	waitFor(t, 3*time.Minute, fmt.Sprintf("%d pods %s Ready", want, selector), func() error {
		pods, err := n.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		ready := 0
		var why []string
		for _, p := range pods.Items {
			if p.Name == not || p.DeletionTimestamp != nil {
				continue
			}
			ok := p.Status.Phase == corev1.PodRunning
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
					ok = false
				}
			}
			for _, cs := range p.Status.ContainerStatuses {
				if w := cs.State.Waiting; w != nil {
					why = append(why, p.Name+": "+w.Reason+" "+w.Message)
				}
				if tm := cs.LastTerminationState.Terminated; tm != nil {
					why = append(why, fmt.Sprintf("%s: exited %d %s", p.Name, tm.ExitCode, tm.Message))
				}
			}
			if ok {
				ready++
				first = p.Name
			} else {
				why = append(why, p.Name+" "+string(p.Status.Phase))
			}
		}
		if ready != want {
			return fmt.Errorf("%d of %d ready: %v", ready, want, why)
		}
		return nil
	})
	return first
}

// run runs rocelab in the client namespace and fails t unless it exits 0.
func run(t *testing.T, u *agenttest.Underlay, bin string, args ...string) string {
	t.Helper()
	code, out := u.Run(t, 3*time.Minute, bin, append(args, "--root", u.Client.Root)...)
	if code != 0 {
		t.Fatalf("rocelab %s: exit %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// leftovers lists what lab left: its namespaces and run directories.
func leftovers(t *testing.T, lab string, roots ...string) []string {
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
	for _, r := range roots {
		if _, err := os.Stat(state.Dir(r, lab)); err == nil {
			out = append(out, "run dir in "+r)
		}
	}
	return out
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
