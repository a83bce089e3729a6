package deploy_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/endpoint/collective"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker/dockertest"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
)

// userTopology writes laptop.yaml with every host and the storage node in
// a container of image: hosts idle, st1 serves dir over HTTP on port 8080.
func userTopology(t *testing.T, image, dir string) string {
	t.Helper()
	base, err := topologies.BuiltinFile("laptop")
	if err != nil {
		t.Fatal(err)
	}
	const idle = `trap 'exit 0' TERM; while :; do sleep 1000 & wait; done`
	defaults := fmt.Sprintf(`defaults:
  host:
    image: %s
    cmd: [sh, -c, %q]
    env: {JOB: loader}
  storage:
    image: %s
    cmd: [sh, -c, %q]
    binds: ["%s:/www:ro"]
`, image, idle, image, "httpd -p 8080 -h /www; "+idle, dir)
	text := strings.Replace(string(base), "defaults:\n", defaults, 1)
	path := filepath.Join(t.TempDir(), "laptop-user.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rocelabOut runs the built command and returns its exit code, stdout and
// stderr.
func rocelabOut(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(binary(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatalf("rocelab %v: %v", args, err)
	}
	return 0, out.String(), errb.String()
}

// rxBytes sums what switch node received on all its ports.
func rxBytes(t *testing.T, n deploy.Node) float64 {
	t.Helper()
	c := nodeapi.NewClient(n.Socket)
	defer c.Close()
	samples, err := c.Telemetry(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, s := range samples {
		if s.Name == "switch_port_rx_bytes_total" {
			sum += s.Value
		}
	}
	return sum
}

// TestDockerUserImages deploys laptop.yaml with the hosts and the storage
// node in a user image (busybox) and checks, on that one lab: the user
// containers own the FE (a 1 MiB file fetched by name from st1's HTTP
// server arrives intact, and the FE switch's counters move by at least
// that), BE perf and an all-reduce still run with verified data, inspect
// shows the image and reports a kill -9 of one host's sidecar and of
// another's user container, and destroy --all leaves nothing behind. Before it, the
// cheap refusals: --runtime netns and a missing image exit 2 and 1 with
// nothing created.
func TestDockerUserImages(t *testing.T) {
	c := requireDocker(t)
	requireRoot(t)
	img := dockertest.Busybox(t, c)
	root := runRoot(t)
	before, beforeCt := snap(t), containers(t, c)
	www := t.TempDir()
	blob := make([]byte, 1<<20)
	rand.Read(blob)
	if err := os.WriteFile(filepath.Join(www, "blob"), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(www, 0o755)
	sum := sha256.Sum256(blob)
	file := userTopology(t, img, www)
	lab := labName(t, "user")
	flags := []string{"--name", lab, "--root", root}

	// Refusals first: nothing may be created.
	if code, _, stderr := rocelabOut(t, append([]string{"deploy", "-t", file, "--runtime", "netns"}, flags...)...); code != 2 ||
		!strings.Contains(stderr, "laptop-user.yaml:10:12") || !strings.Contains(stderr, "--runtime netns") {
		t.Errorf("deploy --runtime netns: exit %d, want 2 naming the image's position and the flag:\n%s", code, stderr)
	}
	missing := strings.ReplaceAll(string(must(os.ReadFile(file))), img, "rocelab-test/no-such-image:0")
	mfile := filepath.Join(t.TempDir(), "missing.yaml")
	os.WriteFile(mfile, []byte(missing), 0o644)
	if code, _, stderr := rocelabOut(t, append([]string{"deploy", "-t", mfile}, flags...)...); code != 1 ||
		!strings.Contains(stderr, "rocelab-test/no-such-image:0") || !strings.Contains(stderr, "not present locally") {
		t.Errorf("deploy with a missing image: exit %d, want 1 naming it:\n%s", code, stderr)
	}
	sameSnapshot(t, before)
	if labs, _ := state.List(root); len(labs) != 0 {
		t.Errorf("run dirs created by refused deploys: %v", labs)
	}

	// No --runtime: the images pick docker.
	start := time.Now()
	t.Cleanup(func() { deploy.Destroy(context.Background(), root, lab) })
	code, out, stderr := rocelabOut(t, append([]string{"deploy", "-t", file, "-o", "json"}, flags...)...)
	if code != 0 {
		t.Fatalf("deploy: exit %d\n%s", code, stderr)
	}
	t.Logf("deploy laptop with user images in %v", time.Since(start).Round(time.Millisecond))
	var l deploy.Lab
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]deploy.Node{}
	for _, n := range l.Nodes {
		nodes[n.Name] = n
		wantImg, wantSide := "", ""
		if n.Kind != topologies.KindSwitch {
			wantImg = img
			if n.Kind == topologies.KindHost {
				wantSide = docker.SidecarName(lab, n.Name)
			}
		}
		if l.Runtime != "docker" || n.Image != wantImg || n.Sidecar != wantSide || n.Container != docker.ContainerName(lab, n.Name) {
			t.Errorf("runtime %s, node %s: image %q sidecar %q container %q; want %q %q", l.Runtime, n.Name, n.Image, n.Sidecar, n.Container, wantImg, wantSide)
		}
	}
	// 5 switches, 4 hosts with a sidecar each, st1 without (no BE NIC).
	if got := len(containers(t, c)) - len(beforeCt); got != 14 {
		t.Errorf("%d containers, want 14", got)
	}

	// FE: by name, through the FE switch model, into the user's software.
	execIn := func(nodeName, script string) string {
		t.Helper()
		var o bytes.Buffer
		code, err := deploy.Exec(t.Context(), root, lab, nodeName, []string{"sh", "-c", script}, sandbox.Stdio{Out: &o, Err: &o})
		if err != nil || code != 0 {
			t.Errorf("%s: %s: exit %d, %v\n%s", nodeName, script, code, err, o.String())
		}
		return o.String()
	}
	execIn("host1", "ping -c 1 -W 2 st1")
	rx := rxBytes(t, nodes["rsw1"])
	got := execIn("host4", "echo $JOB $(hostname); wget -q -O - http://st1:8080/blob | sha256sum")
	if want := "loader host4\n" + hex.EncodeToString(sum[:]) + "  -\n"; got != want {
		t.Errorf("host4 fetched %q, want %q", got, want)
	}
	if d := rxBytes(t, nodes["rsw1"]) - rx; d < float64(len(blob)) {
		t.Errorf("rsw1 received %.0f bytes during the fetch, want at least %d", d, len(blob))
	}

	// BE: the endpoints in the sidecars still own the GPU NICs.
	start = time.Now()
	code, out, stderr = rocelabOut(t, append([]string{"perf", "write", "--from", "host1", "--to", "host3", "--iters", "200", "-o", "json"}, flags...)...)
	var perf jobs.PerfReport
	if code != 0 || json.Unmarshal([]byte(out), &perf) != nil || !perf.Checked || perf.WrongBytes != 0 || perf.Client.Messages == 0 {
		t.Errorf("perf: exit %d, %+v\n%s", code, perf, stderr)
	}
	t.Logf("perf in %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	code, out, stderr = rocelabOut(t, append([]string{"collective", "allreduce", "--sizes", "1MB", "--iters", "2", "-o", "json"}, flags...)...)
	var coll []collective.Result
	if code != 0 || json.Unmarshal([]byte(out), &coll) != nil || len(coll) != 1 || !coll[0].Checked || coll[0].Wrong != 0 || coll[0].Ranks != 8 {
		t.Errorf("collective: exit %d, %+v\n%s", code, coll, stderr)
	}

	t.Logf("collective in %v", time.Since(start).Round(time.Millisecond))

	// inspect shows the image; kill -9 of a sidecar, of a user container
	// and of a switch's node process (by its PID on the host) are
	// reported.
	if code, out, _ := rocelabOut(t, "inspect", "--name", lab, "--root", root); code != 0 || !strings.Contains(out, "IMAGE") || !strings.Contains(out, img) {
		t.Errorf("inspect: exit %d, no IMAGE column with %s:\n%s", code, img, out)
	}
	for _, name := range []string{docker.SidecarName(lab, "host2"), docker.ContainerName(lab, "host3")} {
		if err := c.ContainerKill(t.Context(), name, "KILL"); err != nil {
			t.Fatal(err)
		}
	}
	kill9(t, root, lab, "rtsw1")
	st, err := deploy.Inspect(t.Context(), root, lab)
	if err != nil || len(st) != 1 {
		t.Fatalf("inspect: %v", err)
	}
	health := map[string]string{}
	for _, n := range st[0].Nodes {
		if !n.Alive() { // behind (a busy machine) is alive
			health[n.Name] = n.Health
		}
	}
	t.Logf("after kill -9: %v", health)
	if st[0].Status != "degraded" || len(health) != 3 || health["rtsw1"] == "" || !strings.Contains(health["host2"], "endpoint sidecar") ||
		!strings.Contains(health["host2"], "not running") || !strings.HasPrefix(health["host3"], "container: ") || !strings.Contains(health["host3"], "137") {
		t.Errorf("after kill -9: status %s, unhealthy nodes %v", st[0].Status, health)
	}

	start = time.Now()
	if code, out, stderr := rocelabOut(t, "destroy", "--all", "--root", root, "--only-prefix", prefix); code != 0 {
		t.Fatalf("destroy --all: exit %d\n%s%s", code, out, stderr)
	}
	t.Logf("destroy --all in %v", time.Since(start).Round(time.Millisecond))
	sameSnapshot(t, before)
	if diff := cmp.Diff(beforeCt, containers(t, c)); diff != "" {
		t.Errorf("containers changed (-before +after):\n%s", diff)
	}
	if labs, _ := state.List(root); len(labs) != 0 {
		t.Errorf("run dirs left: %v", labs)
	}
}

// TestDockerUserRollback: a deploy that fails after a host's user
// container and sidecar exist removes both, and a user container whose
// command ends fails the deploy with its exit code and output, whether it
// ends at once or while the deploy goes on ("ends-later": a gate file
// holds the command until the nodes are being checked for health); none
// leaves anything behind.
func TestDockerUserRollback(t *testing.T) {
	c := requireDocker(t)
	img := dockertest.Busybox(t, c)
	root := runRoot(t)
	before, beforeCt := snap(t), containers(t, c)
	rt, err := docker.New(docker.Options{Binary: binary(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	gate := t.TempDir()
	var lab string // the subtest's
	for _, tc := range []struct {
		name, cmd string
		hook      func(deploy.Step, string) error
		want      []string
	}{
		{"hook", "trap 'exit 0' TERM; while :; do sleep 1000 & wait; done", func(s deploy.Step, n string) error {
			if s == deploy.StepHealthy && n == "h2" {
				return errors.New("injected")
			}
			return nil
		}, []string{"healthy h2", "injected"}},
		{"exits", "echo bye from h2; exit 3", nil, []string{"h2", "exit code 3", "bye from h2"}},
		{"ends-later", "while [ ! -e /gate/go ]; do sleep 0.05; done; echo bye from h2; exit 3", func(s deploy.Step, n string) error {
			if s != deploy.StepHealthy || n != "sw" {
				return nil
			}
			if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
				return err
			}
			waited, errs := c.ContainerWait(t.Context(), docker.ContainerName(lab, "h2"), "not-running")
			select {
			case <-waited:
				return nil
			case err := <-errs:
				return err
			}
		}, []string{"node h2 (image", "exit code 3", "bye from h2", "must keep running"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(filepath.Join(gate, "go"))
			text := fmt.Sprintf(`name: rb
nodes:
  h1: {kind: host, frontend: false}
  h2: {kind: host, frontend: false, image: %q, cmd: [sh, -c, %q], binds: [%q]}
  sw: {kind: switch, role: rtsw}
links:
  - h1:gpu0 -- sw
  - h2:gpu0 -- sw
`, img, tc.cmd, gate+":/gate")
			tp, err := topologies.Parse("rb.yaml", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			lab = labName(t, "rb-"+tc.name)
			_, err = deploy.Deploy(t.Context(), deploy.Options{Topology: tp, LabName: lab, Root: root, Binary: binary(t), Runtime: rt, Hook: tc.hook})
			if err == nil {
				deploy.Destroy(context.Background(), root, lab)
				t.Fatal("deploy succeeded")
			}
			t.Logf("deploy: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			sameSnapshot(t, before)
			if diff := cmp.Diff(beforeCt, containers(t, c)); diff != "" {
				t.Errorf("containers left (-before +after):\n%s", diff)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
