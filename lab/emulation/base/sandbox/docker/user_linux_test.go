package docker

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker/dockertest"
	"golang.org/x/sys/unix"
)

// idleCmd keeps a busybox container running and ends it at once on
// SIGTERM (a shell as PID 1 has no default action for it).
var idleCmd = []string{"sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1000 & wait; done"}

// TestUserContainer creates a node whose container is the user's image
// with the node process in a sidecar: the sidecar shares the user
// container's network namespace and nothing else, exec runs in the user's
// container with its hostname, environment, /etc/hosts and binds, and
// Remove takes both containers. A missing image fails before anything is
// created.
func TestUserContainer(t *testing.T) {
	t.Parallel()
	r := newRuntime(t)
	img := dockertest.Busybox(t, r.c)
	lab, runDir := uniqueLab("u"), t.TempDir()
	data := t.TempDir()
	os.WriteFile(filepath.Join(data, "f"), []byte("from the host\n"), 0o644)
	spec := sandbox.NodeSpec{
		Lab: lab, Node: "h1", RunDir: runDir,
		Argv: []string{BinaryPath, "serve", runDir, "h1"},
		User: &sandbox.UserContainer{
			Image: img, Cmd: idleCmd, Env: []string{"GREETING=hello"}, Binds: []string{data + ":/data:ro"},
			Hostname: "h1", Hosts: []string{"st1:198.19.0.9"},
		},
	}
	n, err := r.Create(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	removed := false
	t.Cleanup(func() {
		if !removed {
			r.Remove(t.Context(), n.Ref)
		}
	})
	if n.Image != img || n.Ref.ID == "" {
		t.Errorf("node %+v: want image %s", n, img)
	}
	// The node process (the sidecar's) is in the user container's netns.
	var user, side unix.Stat_t
	if err := unix.Stat(n.NetNSPath, &user); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat("/proc/"+strconv.Itoa(n.Process.PID)+"/ns/net", &side); err != nil {
		t.Fatal(err)
	}
	if user.Ino != side.Ino {
		t.Errorf("sidecar netns %d, user container's %d", side.Ino, user.Ino)
	}
	waitFile(t, filepath.Join(runDir, "h1.ifaces"), "lo")
	sideIns, err := r.c.ContainerInspect(t.Context(), SidecarName(lab, "h1"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(sideIns.HostConfig.NetworkMode), "container:"+n.Ref.ID; got != want {
		t.Errorf("sidecar network mode %q, want %q", got, want)
	}
	if sideIns.Config.Labels[LabelRole] != RoleSidecar || sideIns.HostConfig.Privileged {
		t.Errorf("sidecar labels %v, privileged %v", sideIns.Config.Labels, sideIns.HostConfig.Privileged)
	}
	if got := status(t, n.Process.PID, "CapEff"); got != "0000000000003000" {
		t.Errorf("sidecar CapEff = %s, want NET_ADMIN|NET_RAW only", got)
	}

	// Exec runs in the user's container, even for a command the host has.
	var out bytes.Buffer
	code, err := r.Exec(t.Context(), n.Ref, []string{"sh", "-c", `echo $GREETING; hostname; grep st1 /etc/hosts; cat /data/f; readlink /bin/sh`}, sandbox.Stdio{Out: &out, Err: &out})
	if err != nil || code != 0 {
		t.Fatalf("exec: %d, %v\n%s", code, err, out.String())
	}
	if want := "hello\nh1\n198.19.0.9\tst1\nfrom the host\nbusybox\n"; out.String() != want {
		t.Errorf("exec output %q, want %q", out.String(), want)
	}

	if err := r.Remove(t.Context(), n.Ref); err != nil {
		t.Fatal(err)
	}
	removed = true
	list, err := r.c.ContainerList(t.Context(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelLab+"="+lab))})
	if err != nil || len(list) != 0 {
		t.Errorf("after Remove: %d containers of lab %s (%v)", len(list), lab, err)
	}

	spec.Node, spec.User.Image = "h2", "rocelab-test/no-such-image:0"
	if _, err := r.Create(t.Context(), spec); !errors.Is(err, ErrNoImage) {
		t.Errorf("Create with a missing image: %v, want ErrNoImage", err)
	}
	if refs, err := r.Leftovers(t.Context(), lab); err != nil || len(refs) != 0 {
		t.Errorf("after a failed Create: leftovers %v, %v", refs, err)
	}
}

// TestUserEndsBeforeSidecar: a user command that ends after its start was
// seen and before the sidecar joins its network namespace fails with the
// user container's exit code and output, not with the engine's refusal to
// join, and leaves no container behind. A gate file holds the command
// until the test has seen it running, so the race is taken every time.
func TestUserEndsBeforeSidecar(t *testing.T) {
	t.Parallel()
	r := newRuntime(t)
	img := dockertest.Busybox(t, r.c)
	lab, runDir, gate := uniqueLab("ue"), t.TempDir(), t.TempDir()
	spec := sandbox.NodeSpec{
		Lab: lab, Node: "h1", RunDir: runDir,
		Argv: []string{BinaryPath, "serve", runDir, "h1"},
		User: &sandbox.UserContainer{Image: img},
	}
	side, sideHost, err := r.nodeConfig(t.Context(), spec, RoleSidecar)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &container.Config{
		Image:  img,
		Cmd:    []string{"sh", "-c", "while [ ! -e /gate/go ]; do sleep 0.05; done; echo bye from h1; exit 3"},
		Labels: labels(spec, RoleUser),
	}
	host := &container.HostConfig{NetworkMode: "none", Binds: []string{gate + ":/gate"}}
	node, err := r.run(t.Context(), spec, ContainerName(lab, "h1"), cfg, host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Remove(context.Background(), node.Ref) })
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waited, errs := r.c.ContainerWait(t.Context(), node.Ref.ID, container.WaitConditionNotRunning)
	select {
	case <-waited:
	case err := <-errs:
		t.Fatal(err)
	}

	_, err = r.addSidecar(t.Context(), spec, node, side, sideHost)
	if err == nil {
		t.Fatal("sidecar joined a container that has ended")
	}
	t.Logf("addSidecar: %v", err)
	for _, want := range []string{"must keep running", "exit code 3", "bye from h1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !errors.Is(err, ErrNotRunning) {
		t.Errorf("error %v does not wrap ErrNotRunning", err)
	}
	if refs, err := r.Leftovers(t.Context(), lab); err != nil || len(refs) != 0 {
		t.Errorf("after a failed sidecar: leftovers %v, %v", refs, err)
	}
}
