package helm

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rocelab/rocelab/internal/ociimage"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
)

// The test node: containerd (Debian's, with its runc) and a kubelet built
// by scripts/k8s-bin.sh, both in one harness machine's network namespace
// (hostNetwork pods get that namespace: it is containerd's), everything
// under a directory of the test's own, with its own containerd socket,
// state and runc root; kube-controller-manager and kube-scheduler beside
// the API server in the client namespace. Pods that are not on the host's
// network get a bridge (CNI's bridge and host-local plugins) on
// PodCIDR, routed from the client and the other machines.

// PodCIDR is the test node's pod network.
const PodCIDR = "10.244.0.0/24"

// PauseImage is the sandbox image the node's containerd uses, built here.
const PauseImage = "rocelab.test/pause:1"

// Node is a running test node.
type Node struct {
	Name   string // the machine's name, the Node's
	Dir    string
	Socket string // containerd's
	Client *kubernetes.Clientset
	Config *rest.Config
	m      agenttest.Machine
}

// k8sBinaries returns the directory holding the Kubernetes binaries the
// node needs — etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kubelet — from scripts/k8s-bin.sh's cache
// ($ROCELAB_K8S_CACHE, /var/cache/rocelab/k8s; $ROCELAB_K8S_BIN names a
// directory instead), waiting while a build is under way (up to
// nodeBuildWait), or reports them missing: a skip, a failure under CI.
func k8sBinaries(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("ROCELAB_K8S_BIN"); dir != "" {
		if m := missingBinaries(dir); len(m) > 0 {
			testenv.Missing(t, strings.Join(m, ", ")+" in $ROCELAB_K8S_BIN "+dir)
		}
		return dir
	}
	cache := os.Getenv("ROCELAB_K8S_CACHE")
	if cache == "" {
		cache = "/var/cache/rocelab/k8s"
	}
	deadline := time.Now().Add(nodeBuildWait)
	for logged := false; ; {
		dirs, _ := filepath.Glob(filepath.Join(cache, "kubernetes-*"))
		busy := false
		for _, d := range dirs {
			if strings.HasSuffix(d, ".building") {
				busy = busy || building(strings.TrimSuffix(d, ".building"))
			} else if len(missingBinaries(d)) == 0 {
				return d
			}
		}
		if !busy || time.Now().After(deadline) {
			testenv.Missing(t, "etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubelet (scripts/k8s-bin.sh builds them into "+cache+")")
			return ""
		}
		if !logged {
			t.Logf("waiting for scripts/k8s-bin.sh to build the Kubernetes binaries (until %v)", deadline.Format(time.TimeOnly))
			logged = true
		}
		time.Sleep(5 * time.Second)
	}
}

func missingBinaries(dir string) []string {
	var out []string
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"} {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.Mode()&0o111 == 0 {
			out = append(out, b)
		}
	}
	return out
}

// nodeBuildWait bounds k8sBinaries' wait: cold, scripts/k8s-bin.sh took
// 42 minutes here at the lowest priority beside other tests (kube-apiserver
// 28 of them; the node's three binaries 4.5 after it); make unit gives a
// test binary 60.
const nodeBuildWait = 50 * time.Minute

// building reports whether scripts/k8s-bin.sh is building into dir: its
// PID is in dir.building.
func building(dir string) bool {
	b, err := os.ReadFile(dir + ".building")
	if err != nil {
		return false
	}
	var pid int
	fmt.Sscan(string(b), &pid)
	p, err := proc.Lookup(pid)
	return pid > 0 && err == nil && p.Alive()
}

// requireNodeTools skips or fails t unless containerd, its runc shim,
// runc, ctr and the CNI plugins the node uses are installed.
func requireNodeTools(t *testing.T) {
	t.Helper()
	for _, c := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr"} {
		testenv.RequireTool(t, c)
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBin, p)); err != nil {
			testenv.Missing(t, "the CNI plugin "+p+" in "+cniBin+" (Debian: containernetworking-plugins)")
		}
	}
}

// cniBin is where Debian's containernetworking-plugins puts the plugins.
const cniBin = "/usr/lib/cni"

// restConfig reaches the control plane from the client namespace.
func restConfig(t *testing.T, u *agenttest.Underlay, cp *agenttest.ControlPlane) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dial = func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		err = netns.Do(u.Client.NetNS, func() (err error) {
			var d net.Dialer
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	cfg.Timeout = 30 * time.Second
	return cfg
}

// rootCA is the API server's certificate chain's root, which the
// controller manager publishes to pods (kube-root-ca.crt).
func rootCA(t *testing.T, u *agenttest.Underlay, cp *agenttest.ControlPlane) []byte {
	t.Helper()
	var certs []byte
	err := netns.Do(u.Client.NetNS, func() error {
		c, err := tls.Dial("tcp", strings.TrimPrefix(cp.URL, "https://"), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return err
		}
		defer c.Close()
		chain := c.ConnectionState().PeerCertificates
		certs = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: chain[len(chain)-1].Raw})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return certs
}

// StartNode makes machine m a Kubernetes node of cp: containerd and a
// kubelet in m's namespace, the controller manager and the scheduler in
// the client's; it imports the pause image and the images given (docker
// archives), and returns once the Node is Ready. Everything stops at the
// end of the test, by PID, after the pods are gone.
func StartNode(t *testing.T, u *agenttest.Underlay, m agenttest.Machine, cp *agenttest.ControlPlane, images ...string) *Node {
	t.Helper()
	bin := k8sBinaries(t)
	requireNodeTools(t)
	dir, err := os.MkdirTemp("", "rltest-node-")
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{Name: m.Name, Dir: dir, Socket: filepath.Join(dir, "containerd.sock"), m: m}
	n.Config = restConfig(t, u, cp)
	if n.Client, err = kubernetes.NewForConfig(n.Config); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // runs last: after every process below stopped
		unmountUnder(t, dir)
		os.RemoveAll(dir)
		removeCgroups("kubepods")
	})

	ca := filepath.Join(dir, "root-ca.pem")
	write(t, ca, rootCA(t, u, cp))
	u.StartDaemon(t, "kube-controller-manager", filepath.Join(bin, "kube-controller-manager"),
		"--kubeconfig", cp.Kubeconfig, "--root-ca-file", ca, "--leader-elect=false",
		"--secure-port=0", "--controllers=*,-serviceaccount-token", "--use-service-account-credentials=false")
	u.StartDaemon(t, "kube-scheduler", filepath.Join(bin, "kube-scheduler"),
		"--kubeconfig", cp.Kubeconfig, "--leader-elect=false", "--secure-port=0")

	// containerd, its CRI plugin: our socket, state, runc root, CNI
	// configuration; restrict_oom_score_adj since this machine refuses
	// CAP_SYS_RESOURCE (no lowering of oom_score_adj).
	write(t, filepath.Join(dir, "net.d", "10-rltest.conflist"), []byte(fmt.Sprintf(`{
  "cniVersion": "1.0.0", "name": "rltest",
  "plugins": [{"type": "bridge", "bridge": "rlcni0", "isGateway": true, "ipMasq": false,
    "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": %q}}]
}`, PodCIDR, filepath.Join(dir, "cni-ipam"))))
	write(t, filepath.Join(dir, "containerd.toml"), []byte(fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = %[7]q
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[8]q
    conf_dir = %[9]q
`, filepath.Join(dir, "containerd"), filepath.Join(dir, "containerd-state"), n.Socket, n.Socket+".ttrpc",
		filepath.Join(dir, "opt"), PauseImage, filepath.Join(dir, "runc"), cniBin, filepath.Join(dir, "net.d"))))
	daemon(t, m, "containerd", "containerd", "--config", filepath.Join(dir, "containerd.toml"))
	waitFor(t, 30*time.Second, "containerd's socket", func() error { _, err := os.Stat(n.Socket); return err })
	t.Cleanup(func() { n.cleanupTasks(t) }) // before containerd stops

	pause := filepath.Join(dir, "pause")
	build := exec.Command("go", "build", "-o", pause, "./testdata/pause")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build pause: %v\n%s", err, out)
	}
	img, err := ociimage.Build(ociimage.Spec{Layers: [][]ociimage.File{{{Path: "/pause", Src: pause, Mode: 0o755}}},
		Entrypoint: []string{"/pause"}})
	if err != nil {
		t.Fatal(err)
	}
	tar := filepath.Join(dir, "pause.tar")
	if err := ociimage.WriteArchive(tar, PauseImage, img); err != nil {
		t.Fatal(err)
	}
	for _, a := range append([]string{tar}, images...) {
		n.ctr(t, "images", "import", a)
	}

	// The kubelet: cgroupfs (no systemd here), cgroup v1 allowed
	// (failCgroupV1: false), no swap check, eviction thresholds low
	// enough for a shared disk, its API on the machine's address.
	write(t, filepath.Join(dir, "kubelet.yaml"), []byte(fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://%[1]s
address: %[2]s
readOnlyPort: 0
authentication: {anonymous: {enabled: false}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
failSwapOn: false
podLogsDir: %[3]q
evictionHard: {memory.available: 50Mi, nodefs.available: 1%%, imagefs.available: 1%%, nodefs.inodesFree: 1%%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
syncFrequency: 5s
fileCheckFrequency: 5s
nodeStatusUpdateFrequency: 4s
`, n.Socket, m.Addr, filepath.Join(dir, "pod-logs"))))
	daemon(t, m, "kubelet", filepath.Join(bin, "kubelet"),
		"--config", filepath.Join(dir, "kubelet.yaml"), "--kubeconfig", cp.Kubeconfig,
		"--root-dir", filepath.Join(dir, "kubelet"), "--cert-dir", filepath.Join(dir, "kubelet-pki"),
		"--hostname-override", m.Name, "--node-ip", m.Addr.String())

	// The pod network is reached through the node from the other machines.
	for _, o := range append(append([]agenttest.Machine{}, u.Machines...), u.Client) {
		if o.Name != m.Name {
			route(t, o.NetNS, PodCIDR, m.Addr.String())
		}
	}
	waitFor(t, 3*time.Minute, "node "+m.Name+" Ready", func() error {
		node, err := n.Client.CoreV1().Nodes().Get(context.Background(), m.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					return nil
				}
				return fmt.Errorf("%s: %s", c.Reason, c.Message)
			}
		}
		return fmt.Errorf("no Ready condition")
	})
	return n
}

// ctr runs ctr against the node's containerd in the k8s.io namespace.
func (n *Node) ctr(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ctr", append([]string{"--address", n.Socket, "--namespace", "k8s.io"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// cleanupTasks kills and deletes every container task containerd still
// runs (their shims exit with them), by containerd's API: the pods the
// test did not delete, once the kubelet has stopped.
func (n *Node) cleanupTasks(t *testing.T) {
	out, err := exec.Command("ctr", "--address", n.Socket, "--namespace", "k8s.io", "tasks", "ls", "-q").Output()
	if err != nil {
		t.Logf("ctr tasks ls: %v", err)
		return
	}
	for _, id := range strings.Fields(string(out)) {
		exec.Command("ctr", "--address", n.Socket, "--namespace", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id).Run()
	}
	for _, id := range strings.Fields(string(out)) {
		for range 50 {
			if exec.Command("ctr", "--address", n.Socket, "--namespace", "k8s.io", "tasks", "delete", id).Run() == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// daemon starts a process in m's namespace for the rest of the test,
// stopped by PID (SIGTERM, then SIGKILL after 10 s); its output is
// logged when the test fails.
func daemon(t *testing.T, m agenttest.Machine, name, path string, args ...string) {
	t.Helper()
	var log bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = &log, &log
	p, err := netns.Start(m.NetNS, cmd)
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		<-waited
		if t.Failed() {
			out := log.String()
			if len(out) > 6000 {
				out = "…" + out[len(out)-6000:]
			}
			t.Logf("%s:\n%s", name, out)
		}
	})
}

// unmountUnder detaches every mount at or below dir, deepest first: the
// kubelet bind-mounts its root directory onto itself (and pods' volumes
// below it) and leaves that mount when it stops.
func unmountUnder(t *testing.T, dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Log(err)
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			points = append(points, f[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
			t.Logf("unmount %s: %v", p, err)
		}
	}
}

// removeCgroups removes the kubelet's cgroups named name under every
// hierarchy, deepest first, once no process is left in them (rmdir fails
// on a cgroup in use, which stays).
func removeCgroups(name string) {
	roots, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", name))
	for _, r := range roots {
		var dirs []string
		filepath.WalkDir(r, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.Reverse(dirs)
		for _, d := range dirs {
			unix.Rmdir(d)
		}
	}
}

func route(t *testing.T, ns, dst, via string) {
	t.Helper()
	h, err := netns.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, d, err := net.ParseCIDR(dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.RouteAdd(&netlink.Route{Dst: d, Gw: net.ParseIP(via)}); err != nil {
		t.Fatalf("route %s via %s in %s: %v", dst, via, ns, err)
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls f until it returns nil, failing t after timeout with its
// last error.
func waitFor(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v: %v", what, timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
