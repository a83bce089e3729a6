package docker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	imageapi "github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker/dockertest"
	"github.com/vishvananda/netlink"
	vns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// socketPath is the engine's default socket.
const socketPath = "/var/run/docker.sock"

// requireDocker skips t (fails it under CI) unless it runs as root and a
// Docker engine answers on socketPath.
func requireDocker(t testing.TB) {
	t.Helper()
	testenv.RequireRoot(t)
	// One at a time, and not beside another package's Exclusive tests:
	// TestRocelabImage removes the node image it built, which a deploy
	// test running beside it may be using.
	testenv.Exclusive(t)
	if _, err := os.Stat(socketPath); err != nil {
		testenv.Missing(t, "a Docker engine ("+socketPath+")")
	}
	c, err := client.NewClientWithOpts(client.WithHost("unix://"+socketPath), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Ping(ctx); err != nil {
		testenv.Missing(t, "a Docker engine answering on "+socketPath+" ("+err.Error()+")")
	}
}

// newRuntime returns a runtime whose node image holds the sleeper.
func newRuntime(t testing.TB) *Runtime {
	t.Helper()
	requireDocker(t)
	r, err := New(Options{Binary: sleeper(t), StopTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	start := time.Now()
	img, err := r.EnsureImage(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s (built: %v) in %v", img.Ref, img.Built, time.Since(start))
	return r
}

var labSeq atomic.Int32

// uniqueLab is a lab name no other test run uses.
func uniqueLab(tag string) string {
	return fmt.Sprintf("rlt%d-%d%s", os.Getpid(), labSeq.Add(1), tag)
}

// create creates a sleeper node that writes its interfaces to
// runDir/NODE.ifaces, removed at cleanup.
func create(t testing.TB, r *Runtime, lab, node, runDir string) sandbox.Node {
	t.Helper()
	start := time.Now()
	n, err := r.Create(t.Context(), sandbox.NodeSpec{
		Lab: lab, Node: node, RunDir: runDir,
		Argv: []string{BinaryPath, "serve", runDir, node},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("created %s/%s in %v", lab, node, time.Since(start))
	t.Cleanup(func() {
		if err := r.Remove(context.Background(), n.Ref); err != nil {
			t.Error(err)
		}
	})
	return n
}

// waitFile waits until path exists and contains want, and returns it.
func waitFile(t testing.TB, path, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), want) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not contain %q: %q, %v", path, want, b, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// status returns a field of /proc/PID/status.
func status(t testing.TB, pid int, field string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return ""
}

func linkNames(t testing.TB, h *netlink.Handle) []string {
	t.Helper()
	links, err := h.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range links {
		names = append(names, l.Attrs().Name)
	}
	slices.Sort(names)
	return names
}

func TestCreateNode(t *testing.T) {
	t.Parallel()
	r := newRuntime(t)
	lab, runDir := uniqueLab("c"), t.TempDir()
	n := create(t, r, lab, "n1", runDir)

	ins, err := r.c.ContainerInspect(t.Context(), n.Ref.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The container also inherits the image's label.
	if got := ins.Config.Labels; got[LabelLab] != lab || got[LabelNode] != "n1" {
		t.Errorf("labels %v, want %s=%s and %s=n1", got, LabelLab, lab, LabelNode)
	}
	if want := "/" + ContainerName(lab, "n1"); ins.Name != want {
		t.Errorf("container name %q, want %q", ins.Name, want)
	}
	if ins.HostConfig.Privileged || ins.HostConfig.NetworkMode != "none" {
		t.Errorf("privileged %v, network mode %q", ins.HostConfig.Privileged, ins.HostConfig.NetworkMode)
	}
	if ins.State.Pid != n.Process.PID || !n.Process.Alive() {
		t.Errorf("Process %v, container PID %d, alive %v", n.Process, ins.State.Pid, n.Process.Alive())
	}
	if want := fmt.Sprintf("/proc/%d/ns/net", n.Process.PID); n.NetNSPath != want {
		t.Errorf("NetNSPath %q, want %q", n.NetNSPath, want)
	}
	// NET_ADMIN (12) and NET_RAW (13), nothing else.
	for _, f := range []string{"CapEff", "CapPrm", "CapBnd"} {
		if got := status(t, n.Process.PID, f); got != "0000000000003000" {
			t.Errorf("%s = %s, want 0000000000003000 (NET_ADMIN|NET_RAW)", f, got)
		}
	}

	// Its own network namespace, with lo only.
	ns, err := vns.GetFromPath(n.NetNSPath)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	host, err := vns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	if ns.Equal(host) {
		t.Fatal("the container shares the host's network namespace")
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if got := linkNames(t, h); !slices.Equal(got, []string{"lo"}) {
		t.Errorf("links in the container: %v, want [lo]", got)
	}
	// The node process sees the run directory at the same path.
	waitFile(t, filepath.Join(runDir, "n1.ifaces"), "lo\n")

	// Move a veth end into the container; the node process sees it.
	a, b := fmt.Sprintf("rlta%d", os.Getpid()%100000), fmt.Sprintf("rltb%d", os.Getpid()%100000)
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a}, PeerName: b}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName(a); err == nil {
			netlink.LinkDel(l)
		}
	})
	peer, err := netlink.LinkByName(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := netlink.LinkSetNsFd(peer, int(ns)); err != nil {
		t.Fatal(err)
	}
	if got := linkNames(t, h); !slices.Equal(got, []string{"lo", b}) {
		t.Errorf("links in the container after the move: %v, want [lo %s]", got, b)
	}
	if err := n.Process.Signal(unix.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(runDir, "n1.ifaces"), b+"\n")

	// A second node of the same name is refused, and the first survives.
	if _, err := r.Create(t.Context(), sandbox.NodeSpec{Lab: lab, Node: "n1", RunDir: runDir, Argv: []string{BinaryPath, "serve", runDir, "x"}}); err == nil {
		t.Error("a second container of the same node was created")
	}
	if !n.Process.Alive() {
		t.Error("a refused duplicate removed the first node")
	}
}

func TestExec(t *testing.T) {
	t.Parallel()
	r := newRuntime(t)
	lab, runDir := uniqueLab("e"), t.TempDir()
	n := create(t, r, lab, "n1", runDir)
	run := func(in string, argv ...string) (int, string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		st := sandbox.Stdio{Out: &out, Err: &errb}
		if in != "" {
			st.In = strings.NewReader(in)
		}
		code, err := r.Exec(t.Context(), n.Ref, argv, st)
		if err != nil {
			t.Fatalf("Exec %v: %v", argv, err)
		}
		return code, out.String(), errb.String()
	}

	// Host tools run in the container's network namespace.
	code, out, _ := run("", "cat", "/proc/net/dev")
	if code != 0 || !strings.Contains(out, "lo:") || strings.Count(out, "\n") != 3 {
		t.Errorf("cat /proc/net/dev: exit %d, want 0 and two header lines plus lo:\n%s", code, out)
	}
	if code, _, _ := run("", "/bin/true"); code != 0 {
		t.Errorf("/bin/true: exit %d", code)
	}
	if code, _, _ := run("", "sh", "-c", "exit 7"); code != 7 {
		t.Errorf("sh -c 'exit 7': exit %d", code)
	}
	if code, out, _ := run("hello\n", "cat"); code != 0 || out != "hello\n" {
		t.Errorf("cat with stdin: exit %d, output %q", code, out)
	}
	// A command that is in the image runs in the container.
	if code, out, _ := run("", BinaryPath, "ifaces"); code != 3 || out != "lo\n" {
		t.Errorf("%s ifaces: exit %d, output %q; want exit 3 and lo", BinaryPath, code, out)
	}
	if !inContainer(n.Process.PID, BinaryPath) || inContainer(n.Process.PID, "cat") || inContainer(n.Process.PID, "/rocelab/../etc") {
		t.Error("inContainer does not tell what is in the image")
	}
	if _, err := r.Exec(t.Context(), n.Ref, []string{"rocelab-no-such-command"}, sandbox.Stdio{}); err == nil {
		t.Error("Exec of a command found nowhere succeeded")
	}
	// A Go function in the node's namespace, via a netlink handle.
	ns, err := vns.GetFromPath(n.NetNSPath)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil || lo.Attrs().Flags&unix.IFF_UP == 0 {
		t.Errorf("lo in the container: %v, %v", lo, err)
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	r := newRuntime(t)
	lab, runDir := uniqueLab("r"), t.TempDir()
	n, err := r.Create(t.Context(), sandbox.NodeSpec{Lab: lab, Node: "n1", RunDir: runDir, Argv: []string{BinaryPath, "serve", runDir, "n1"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(runDir, "n1.ifaces"), "lo")
	start := time.Now()
	if err := r.Remove(t.Context(), n.Ref); err != nil {
		t.Fatal(err)
	}
	t.Logf("removed in %v", time.Since(start))
	if n.Process.Alive() {
		t.Error("the node process survived Remove")
	}
	if _, err := r.c.ContainerInspect(t.Context(), n.Ref.ID); !client.IsErrNotFound(err) {
		t.Errorf("container after Remove: %v", err)
	}
	if _, err := os.Stat(n.NetNSPath); err == nil {
		t.Error("the node's namespace file still exists")
	}
	for _, ref := range []sandbox.Ref{n.Ref, {Runtime: Name, Lab: lab, Node: "n1"}, {Runtime: Name, Lab: lab, Node: "never", ID: "0123456789ab"}} {
		if err := r.Remove(t.Context(), ref); err != nil {
			t.Errorf("Remove(%+v) of what is gone: %v", ref, err)
		}
	}
	if _, err := r.Exec(t.Context(), n.Ref, []string{"true"}, sandbox.Stdio{}); err == nil {
		t.Error("Exec in a removed node succeeded")
	}
}

func TestCreateRollsBack(t *testing.T) {
	t.Parallel()
	r := newRuntime(t)
	lab := uniqueLab("f")
	_, err := r.Create(t.Context(), sandbox.NodeSpec{Lab: lab, Node: "n1", RunDir: t.TempDir(), Argv: []string{"/no/such/binary"}})
	if err == nil {
		t.Fatal("Create of a node whose command does not exist succeeded")
	}
	t.Logf("Create: %v", err)
	refs, err := r.Leftovers(t.Context(), lab)
	if err != nil || len(refs) != 0 {
		t.Errorf("after a failed Create: leftovers %v, %v", refs, err)
	}
	for _, bad := range []sandbox.NodeSpec{
		{Lab: "bad/lab", Node: "n", RunDir: "/tmp", Argv: []string{BinaryPath}},
		{Lab: lab, Node: "", RunDir: "/tmp", Argv: []string{BinaryPath}},
		{Lab: lab, Node: "n", RunDir: "rel", Argv: []string{BinaryPath}},
		{Lab: lab, Node: "n", RunDir: "/tmp"},
	} {
		if _, err := r.Create(t.Context(), bad); err == nil {
			t.Errorf("Create(%+v) succeeded", bad)
		}
	}
}

func TestLeftovers(t *testing.T) {
	t.Parallel()
	r := newRuntime(t)
	labA, labB, runDir := uniqueLab("a"), uniqueLab("b"), t.TempDir()
	a1 := create(t, r, labA, "n1", runDir)
	a2 := create(t, r, labA, "n2", runDir)
	b1 := create(t, r, labB, "n1", runDir)

	// A decoy: same image, running, no labels.
	img, err := r.EnsureImage(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	decoy, err := r.c.ContainerCreate(t.Context(),
		&container.Config{Image: img.Ref, Cmd: []string{BinaryPath, "serve", runDir, "decoy"}},
		&container.HostConfig{NetworkMode: "none", CapDrop: []string{"ALL"}, Binds: []string{runDir + ":" + runDir}},
		nil, nil, fmt.Sprintf("rltest-decoy-%d", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.c.ContainerRemove(context.Background(), decoy.ID, container.RemoveOptions{Force: true}); err != nil {
			t.Error(err)
		}
	})
	if err := r.c.ContainerStart(t.Context(), decoy.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}

	got, err := r.Leftovers(t.Context(), labA)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]sandbox.Ref{a1.Ref, a2.Ref}, got); diff != "" {
		t.Errorf("Leftovers(%s) (-want +got):\n%s", labA, diff)
	}
	all, err := r.Leftovers(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var ours []sandbox.Ref
	for _, ref := range all {
		if ref.ID == decoy.ID {
			t.Error("Leftovers lists the unlabelled decoy")
		}
		if ref.Lab == labA || ref.Lab == labB {
			ours = append(ours, ref)
		}
	}
	// In Leftovers' order, by lab name: labB's may sort first ("…-10b"
	// before "…-9a" once uniqueLab's counter has two digits).
	want := []sandbox.Ref{a1.Ref, a2.Ref, b1.Ref}
	slices.SortFunc(want, func(x, y sandbox.Ref) int {
		if c := strings.Compare(x.Lab, y.Lab); c != 0 {
			return c
		}
		return strings.Compare(x.Node, y.Node)
	})
	if diff := cmp.Diff(want, ours); diff != "" {
		t.Errorf("Leftovers(\"\") of this test's labs (-want +got):\n%s", diff)
	}

	// Cleanup driven by Leftovers removes every lab container and nothing else.
	for _, ref := range ours {
		if err := r.Remove(t.Context(), ref); err != nil {
			t.Error(err)
		}
	}
	for _, lab := range []string{labA, labB} {
		if refs, err := r.Leftovers(t.Context(), lab); err != nil || len(refs) != 0 {
			t.Errorf("Leftovers(%s) after cleanup: %v, %v", lab, refs, err)
		}
	}
	if ins, err := r.c.ContainerInspect(t.Context(), decoy.ID); err != nil || !ins.State.Running {
		t.Errorf("the decoy did not survive: %v", err)
	}
	if err := r.Remove(t.Context(), sandbox.Ref{Runtime: Name, ID: decoy.ID}); err == nil {
		t.Error("Remove of an unlabelled container succeeded")
	}
	if err := r.Remove(t.Context(), sandbox.Ref{Runtime: Name, Lab: labB, ID: a1.Ref.ID}); err != nil {
		t.Errorf("Remove of a gone container with another lab: %v", err)
	}
}

func TestRocelabImage(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	start := time.Now()
	bin := goBuild(t, "github.com/rocelab/rocelab/cmd/rocelab", t.TempDir(), "rocelab")
	t.Logf("go build rocelab (CGO_ENABLED=0) in %v", time.Since(start))
	r, err := New(Options{Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start = time.Now()
	img, err := r.EnsureImage(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s (built: %v) in %v", img.Ref, img.Built, time.Since(start))
	if img.Built {
		t.Cleanup(func() {
			if _, err := r.c.ImageRemove(context.Background(), img.Ref, imageapi.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
				t.Error(err)
			}
		})
	}
	ins, err := r.c.ImageInspect(t.Context(), img.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if ins.Config.Labels[LabelImage] != img.Hash || !strings.HasPrefix(img.Ref, ImageRepo+":") {
		t.Errorf("image %s labels %v, want %s=%s", img.Ref, ins.Config.Labels, LabelImage, img.Hash)
	}
	// Not rebuilt while the binary is the same.
	r2, err := New(Options{Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	again, err := r2.EnsureImage(t.Context())
	if err != nil || again.Built || again.Ref != img.Ref {
		t.Errorf("second EnsureImage: %+v, %v; want %s, not built", again, err, img.Ref)
	}

	// The static binary runs in the FROM scratch image.
	c, err := r.c.ContainerCreate(t.Context(),
		&container.Config{Image: img.Ref, Cmd: []string{BinaryPath, "--help"}, Labels: map[string]string{LabelLab: uniqueLab("i"), LabelNode: "help"}},
		&container.HostConfig{NetworkMode: "none", CapDrop: []string{"ALL"}}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	ref := sandbox.Ref{Runtime: Name, ID: c.ID}
	t.Cleanup(func() {
		if err := r.Remove(context.Background(), ref); err != nil {
			t.Error(err)
		}
	})
	if err := r.c.ContainerStart(t.Context(), c.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	waitc, errc := r.c.ContainerWait(t.Context(), c.ID, container.WaitConditionNotRunning)
	select {
	case w := <-waitc:
		if w.StatusCode != 0 {
			t.Errorf("rocelab --help in the image: exit %d", w.StatusCode)
		}
	case err := <-errc:
		t.Fatal(err)
	}
	var logs bytes.Buffer
	if err := r.Logs(t.Context(), ref, &logs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "rocelab") {
		t.Errorf("rocelab --help printed %q", logs.String())
	}
}

func BenchmarkCreateRemove(b *testing.B) {
	r := newRuntime(b)
	lab, runDir := uniqueLab("bench"), b.TempDir()
	for i := range b.N {
		n, err := r.Create(b.Context(), sandbox.NodeSpec{Lab: lab, Node: "n" + strconv.Itoa(i), RunDir: runDir, Argv: []string{BinaryPath, "serve", runDir, "n"}})
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Remove(b.Context(), n.Ref); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRemoveUnusedImages: the node images no container uses go (here one
// built from the sleeper with a byte appended, i.e. another binary), the
// image of a container that still exists stays, and another repository's
// image (the test busybox) is not touched. It also clears the machine's
// other unused node images: they are a cache, rebuilt when next needed.
func TestRemoveUnusedImages(t *testing.T) {
	t.Parallel()
	r := newRuntime(t)
	create(t, r, uniqueLab("img"), "n1", t.TempDir()) // a container of r's image
	busybox := dockertest.Busybox(t, r.c)

	b, err := os.ReadFile(sleeper(t))
	if err != nil {
		t.Fatal(err)
	}
	// Two more node images no container uses: this test's own, and a
	// stand-in for someone else's (another build's) that the test must
	// leave where it is, as it must every image it did not make.
	image := func(pad int) Image {
		bin := filepath.Join(t.TempDir(), "sleeper")
		if err := os.WriteFile(bin, append(b, make([]byte, pad)...), 0o755); err != nil {
			t.Fatal(err)
		}
		rt, err := New(Options{Binary: bin})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		img, err := rt.EnsureImage(t.Context())
		if err != nil || !img.Built {
			t.Fatalf("image: %+v, %v", img, err)
		}
		t.Cleanup(func() { r.c.ImageRemove(context.Background(), img.Ref, imageapi.RemoveOptions{PruneChildren: true}) })
		return img
	}
	unused, foreign := image(1), image(2)

	mine := func(ref string) bool { return ref == unused.Ref || ref == r.image.Ref }
	removed, err := r.RemoveUnusedImages(t.Context(), mine)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("removed %v", removed)
	if !slices.Contains(removed, unused.Ref) {
		t.Errorf("unused image %s not removed (%v)", unused.Ref, removed)
	}
	if _, err := r.c.ImageInspect(t.Context(), unused.Ref); !client.IsErrNotFound(err) {
		t.Errorf("unused image %s still there: %v", unused.Ref, err)
	}
	for _, keep := range []string{r.image.Ref, busybox, foreign.Ref} {
		if slices.Contains(removed, keep) {
			t.Errorf("%s removed", keep)
		}
		if _, err := r.c.ImageInspect(t.Context(), keep); err != nil {
			t.Errorf("%s gone: %v", keep, err)
		}
	}
}
