package deploy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/docker/dockertest"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
)

// The crash matrix kills a deploying process with SIGKILL at each deploy
// step, and a deployed lab's node processes of each kind, then runs
// `rocelab destroy --all` and checks that nothing is left: namespaces,
// interfaces, node processes, run directories and containers.
//
// A deploy is stopped at a step deterministically by a child process:
// this test binary run again with crashEnv set (see TestMain), which
// deploys through deploy.Deploy like `rocelab deploy` does and, at the
// chosen unit of the chosen step, says so on stdout and blocks there until
// the parent kills it. Node processes are the rocelab binary the tests
// build, so they outlive the child exactly as they outlive a killed CLI.

// crashEnv carries a crash child's orders: "ROOT|LAB|TOPOLOGY FILE|BINARY|RUNTIME|STEP|UNIT".
const crashEnv = "ROCELAB_TEST_CRASH_CHILD"

// stepWritten pauses after the last node is healthy, before the lab file
// is written.
const stepWritten deploy.Step = "written"

// crashChild runs a crash child's deploy and returns its exit code (it
// normally never returns: the parent kills it).
func crashChild(orders string) int {
	f := strings.Split(orders, "|")
	if len(f) != 7 {
		fmt.Fprintf(os.Stderr, "crash child: bad orders %q\n", orders)
		return 2
	}
	root, lab, file, bin, rtName, step := f[0], f[1], f[2], f[3], f[4], deploy.Step(f[5])
	unit, _ := strconv.Atoi(f[6])
	tp, err := topologies.Load(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var rt sandbox.Runtime
	// Two workers, so that a crash leaves a step part done; one for
	// docker, whose engine finishes a create already asked for after the
	// asker is killed, possibly after destroy --all has looked (a
	// leftover the test would blame on destroy).
	workers := 2
	if rtName == docker.Name {
		workers = 1
		drt, err := docker.New(docker.Options{Binary: bin})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		rt = drt
	}
	var (
		mu   sync.Mutex
		seen int
	)
	pause := func(where string) {
		fmt.Printf("paused at %s\n", where)
		os.Stdout.Sync()
		select {}
	}
	_, err = deploy.Deploy(context.Background(), deploy.Options{
		Topology: tp, LabName: lab, Root: root, Binary: bin, Runtime: rt, Workers: workers,
		Hook: func(s deploy.Step, name string) error {
			if s != step {
				return nil
			}
			mu.Lock()
			seen++
			n := seen
			mu.Unlock()
			if n >= unit {
				pause(fmt.Sprintf("%s %d (%s)", s, n, name))
			}
			return nil
		},
		Progress: func(e deploy.Event) {
			if step == stepWritten && e.Step == deploy.StepHealthy && e.Done == e.Total {
				pause(string(stepWritten))
			}
		},
	})
	fmt.Fprintf(os.Stderr, "crash child: deploy returned before the pause at %s %d: %v\n", step, unit, err)
	return 1
}

// crashTopology is the smallest lab with every step: two hosts with a GPU
// NIC on one switch and an FE NIC on another. With image, h2 runs in a
// user container of it (with its endpoint in a sidecar).
func crashTopology(t *testing.T, image string) string {
	t.Helper()
	h2 := "{kind: host, gpus: 1}"
	if image != "" {
		h2 = fmt.Sprintf("{kind: host, gpus: 1, image: %q, cmd: [sh, -c, \"trap 'exit 0' TERM; while :; do sleep 1000 & wait; done\"]}", image)
	}
	text := `name: crash
nodes:
  h1: {kind: host, gpus: 1}
  h2: ` + h2 + `
  sw: {kind: switch, role: rtsw}
  fe: {kind: switch, role: rsw}
links:
  - h1:gpu0 -- sw
  - h2:gpu0 -- sw
  - h1:fe0 -- fe
  - h2:fe0 -- fe
`
	path := filepath.Join(t.TempDir(), "crash.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// killDeployAt starts a crash child deploying file as lab and kills it
// with SIGKILL once it has paused at unit of step.
func killDeployAt(t *testing.T, root, lab, file, rt string, step deploy.Step, unit int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), crashEnv+"="+strings.Join([]string{root, lab, file, binary(t), rt, string(step), strconv.Itoa(unit)}, "|"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		l, _ := r.ReadString('\n')
		lines <- strings.TrimSpace(l)
		io.Copy(io.Discard, r)
	}()
	var paused string
	select {
	case paused = <-lines:
	case <-time.After(60 * time.Second):
	}
	syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	if !strings.HasPrefix(paused, "paused at "+string(step)) {
		t.Fatalf("deploy child never paused at %s %d (got %q)\n%s", step, unit, paused, stderr.String())
	}
	t.Logf("killed the deploy %s", paused)
}

// leftovers is what a lab can leave on the machine, for this test process.
type leftovers struct {
	Net snapshot
	// Processes running the tests' rocelab binary.
	Processes []string
	// Containers of this test process's labs (docker only).
	Containers []string
	// RunDirs under the test's root.
	RunDirs []string
}

// nodeProcesses lists the processes whose executable is the tests' rocelab
// binary or the rocelab-node beside it: node processes the labs started on
// the host.
func nodeProcesses(t *testing.T) []string {
	t.Helper()
	bin, node := binary(t), state.NodeExecutable(binary(t))
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && (exe == bin || exe == node) {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			out = append(out, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(strings.TrimSpace(string(cmdline)), "\x00", " ")))
		}
	}
	return out
}

func look(t *testing.T, root string, c *client.Client) leftovers {
	t.Helper()
	l := leftovers{Net: snap(t), Processes: nodeProcesses(t)}
	if c != nil {
		l.Containers = containers(t, c)
	}
	l.RunDirs, _ = state.List(root)
	return l
}

// destroyAllLeavesNothing runs `rocelab destroy --all` for this test
// process's labs and compares the machine with before.
func destroyAllLeavesNothing(t *testing.T, root string, c *client.Client, before leftovers) {
	t.Helper()
	start := time.Now()
	if code, out := rocelab(t, "destroy", "--all", "--root", root, "--only-prefix", prefix); code != 0 {
		t.Fatalf("destroy --all: exit %d\n%s", code, out)
	}
	t.Logf("destroy --all in %v", time.Since(start).Round(time.Millisecond))
	after := look(t, root, c)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("left behind after destroy --all (-before +after):\n%s", diff)
	}
	// Stop what destroy failed to: the test started it.
	for _, p := range after.Processes {
		if !slices.Contains(before.Processes, p) {
			pid, _ := strconv.Atoi(strings.Fields(p)[0])
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// crashSteps are the points a deploy is killed at: the second unit of each
// step (some of the step done, some not), and after the last node is
// healthy but before the lab file is written.
var crashSteps = []struct {
	step deploy.Step
	unit int
}{
	{deploy.StepNode, 2}, {deploy.StepLink, 2}, {deploy.StepAddress, 2},
	{deploy.StepStart, 2}, {deploy.StepHealthy, 2}, {stepWritten, 0},
}

// crashMatrix kills a deploy of file with runtime rt at every crashSteps
// point and destroys the remains.
func crashMatrix(t *testing.T, rt, file string, c *client.Client) {
	root := runRoot(t)
	for i, cs := range crashSteps {
		t.Run(string(cs.step), func(t *testing.T) {
			before := look(t, root, c)
			lab := labName(t, fmt.Sprintf("k%s%d", rt[:1], i))
			start := time.Now()
			killDeployAt(t, root, lab, file, rt, cs.step, cs.unit)
			after := look(t, root, c)
			// The kill must leave something to clean, or the case proves
			// nothing.
			if cmp.Equal(before, after) {
				t.Fatalf("the deploy killed at %s left nothing behind", cs.step)
			}
			if cs.step == deploy.StepHealthy && len(after.Processes)+len(after.Containers) == 0 {
				t.Errorf("no node process or container is left running after a kill at %s", cs.step)
			}
			t.Logf("deploy and kill in %v", time.Since(start).Round(time.Millisecond))
			destroyAllLeavesNothing(t, root, c, before)
		})
	}
}

// TestCrashMatrixDeploySteps kills a netns deploy at each step.
func TestCrashMatrixDeploySteps(t *testing.T) {
	requireRoot(t)
	crashMatrix(t, "netns", crashTopology(t, ""), nil)
}

// TestCrashMatrixDockerDeploySteps kills a docker deploy at each step; the
// lab has a user container and its sidecar.
func TestCrashMatrixDockerDeploySteps(t *testing.T) {
	c := requireDocker(t)
	requireRoot(t)
	crashMatrix(t, docker.Name, crashTopology(t, dockertest.Busybox(t, c)), c)
}

// TestCrashMatrixNodeKinds deploys laptop with `rocelab deploy`, kills a
// switch's node process and an endpoint host's with SIGKILL, and
// destroys everything with `rocelab destroy --all`. (Docker's node kinds,
// user containers and sidecars are killed in TestDockerUserImages.)
func TestCrashMatrixNodeKinds(t *testing.T) {
	requireRoot(t)
	root := runRoot(t)
	before := look(t, root, nil)
	lab := labName(t, "kinds")
	start := time.Now()
	if code, out := rocelab(t, "deploy", "-t", "laptop", "--name", lab, "--root", root); code != 0 {
		rocelab(t, "destroy", "--all", "--root", root, "--only-prefix", prefix)
		t.Fatalf("deploy: exit %d\n%s", code, out)
	}
	t.Logf("deploy laptop in %v", time.Since(start).Round(time.Millisecond))
	for _, node := range []string{"rtsw1", "host3"} {
		kill9(t, root, lab, node)
	}
	l, err := deploy.OnlyLab(t.Context(), root, lab)
	if err != nil {
		t.Fatal(err)
	}
	alive := 0
	for _, n := range l.Nodes {
		if n.PID != 0 && (proc.Process{PID: n.PID, StartTime: n.StartTime}).Alive() {
			alive++
		}
	}
	if alive == 0 {
		t.Fatal("no node process is left to destroy")
	}
	destroyAllLeavesNothing(t, root, nil, before)
}
