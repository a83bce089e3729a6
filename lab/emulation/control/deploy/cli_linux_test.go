package deploy_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/base/state"
)

// rocelab runs the built command and returns its exit code and output.
func rocelab(t *testing.T, args ...string) (int, string) {
	t.Helper()
	out, err := exec.Command(binary(t), args...).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("rocelab %v: %v", args, err)
	}
	return 0, string(out)
}

// TestCrashSafety kills the real `rocelab deploy` with SIGKILL once it
// has recorded some objects (the crash matrix of crash_linux_test.go stops
// a deploy at each step exactly; this one kills the command itself, wherever
// it happens to be), then `rocelab destroy --all` must leave the machine as
// it was.
func TestCrashSafety(t *testing.T) {
	requireRoot(t)
	root := runRoot(t)
	for _, at := range []int{3, 15, 28} {
		before := look(t, root, nil)
		lab := labName(t, "crash")
		cmd := exec.Command(binary(t), "deploy", "-t", "laptop", "--name", lab, "--root", root)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stateFile := filepath.Join(state.Dir(root, lab), state.StateFile)
		n := 0
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
			var f state.File
			if b, err := os.ReadFile(stateFile); err == nil && json.Unmarshal(b, &f) == nil && len(f.Objects) >= at {
				n = len(f.Objects)
				break
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		if n == 0 {
			t.Fatalf("deploy never recorded %d objects", at)
		}
		t.Logf("killed deploy after %d objects", n)
		destroyAllLeavesNothing(t, root, nil, before)
	}
}

// TestCLIBadInput: bad input exits 2 and creates nothing.
func TestCLIBadInput(t *testing.T) {
	requireRoot(t)
	root := runRoot(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\nnodes:\n  h1: {kind: hots}\n"), 0o644)
	before := snap(t)
	for _, args := range [][]string{
		{"deploy", "-t", bad},
		{"deploy", "-t", "no-such-topology"},
		{"deploy", "--scale", "0"},
		{"deploy", "--name", "bad/name"},
		{"deploy", "--runtime", "lxc"},
		{"destroy"},
		{"destroy", "--all", "--name", "x"},
		{"exec", "no-such-node", "--", "true"},
		// A lab that is not there is named as such, not "destroyed".
		{"destroy", "--name", "nosuch"},
		{"stats", "--name", "nosuch"},
		{"perf", "write", "--from", "host1", "--to", "host2", "--name", "nosuch"},
		{"fault", "list", "--name", "nosuch"},
		{"restart", "rtsw1", "--name", "nosuch"},
		{"capture", "rtsw1:p1", "-w", "/dev/null", "--name", "nosuch"},
		// No lab deployed under this root: nothing to pick from.
		{"stats"},
		{"collective", "allreduce"},
		{"fault", "list"},
	} {
		args = append(args, "--root", root)
		if code, out := rocelab(t, args...); code != 2 {
			t.Errorf("rocelab %v: exit %d, want 2\n%s", args, code, out)
		}
	}
	sameSnapshot(t, before)
	if labs, _ := state.List(root); len(labs) != 0 {
		t.Errorf("run dirs created: %v", labs)
	}
}

// TestCLIDeployExecDestroy drives the commands end to end.
func TestCLIDeployExecDestroy(t *testing.T) {
	requireRoot(t)
	root := runRoot(t)
	before := snap(t)
	lab := labName(t, "cli")
	t.Cleanup(func() { rocelab(t, "destroy", "--name", lab, "--root", root) })
	if code, out := rocelab(t, "deploy", "-t", "incast", "--name", lab, "--root", root, "--scale", "1000", "-o", "json"); code != 0 {
		t.Fatalf("deploy: exit %d\n%s", code, out)
	}
	if code, out := rocelab(t, "inspect", "--name", lab, "--root", root); code != 0 {
		t.Errorf("inspect: exit %d\n%s", code, out)
	}
	if code, out := rocelab(t, "exec", "sw1", "--name", lab, "--root", root, "--", "sh", "-c", "exit 7"); code != 7 {
		t.Errorf("exec: exit %d, want 7\n%s", code, out)
	}
	if code, out := rocelab(t, "destroy", "--name", lab, "--root", root); code != 0 {
		t.Errorf("destroy: exit %d\n%s", code, out)
	}
	sameSnapshot(t, before)
}

// TestInterruptDeploy sends SIGINT to `rocelab deploy` at several points:
// it must exit 130 within seconds having rolled back everything, with no
// `destroy` needed.
func TestInterruptDeploy(t *testing.T) {
	requireRoot(t)
	for _, at := range []int{8, 32} {
		root := runRoot(t)
		before := snap(t)
		lab := labName(t, "sigint")
		cmd := exec.Command(binary(t), "deploy", "-t", "laptop", "--name", lab, "--root", root)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stateFile := filepath.Join(state.Dir(root, lab), state.StateFile)
		n := 0
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
			var f state.File
			if b, err := os.ReadFile(stateFile); err == nil && json.Unmarshal(b, &f) == nil && len(f.Objects) >= at {
				n = len(f.Objects)
				break
			}
		}
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("deploy did not stop within 15 s of SIGINT (at %d objects)", n)
		}
		var ee *exec.ExitError
		if n > 0 && (!errors.As(err, &ee) || ee.ExitCode() != 130) {
			// A deploy that finished before the signal exits 0: then it
			// is a lab to destroy, not a failure of the rollback.
			if err == nil {
				rocelab(t, "destroy", "--name", lab, "--root", root)
				t.Logf("deploy finished before SIGINT at %d objects", n)
				continue
			}
			t.Errorf("deploy after SIGINT at %d objects: %v, want exit 130", n, err)
		}
		t.Logf("interrupted deploy at %d objects", n)
		sameSnapshot(t, before)
		if labs, _ := state.List(root); len(labs) != 0 {
			t.Errorf("run dirs left after an interrupted deploy: %v", labs)
		}
	}
}

// TestOutputClosedMidRun closes the reader of `rocelab run`'s output
// (stdout and stderr on one pipe, as `rocelab run FILE 2>&1 | head -1`)
// while its lab is up: the command must stop as on Ctrl-C — destroy its
// lab and exit 130 — not die of SIGPIPE at its next line and leave the
// lab deployed (it did).
func TestOutputClosedMidRun(t *testing.T) {
	requireRoot(t)
	root := runRoot(t)
	before := snap(t)
	lab := labName(t, "pipe")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "run", "--name", lab, "--root", root, "--scale", "20000",
		filepath.Join("..", "..", "..", "..", "examples", "01-incast-hol", "scenario.yaml"))
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// The first line is "# deploying …"; the next ones come once the lab
	// is up, at 20,000× for 40 s of wall clock: the reader is gone then.
	line := make([]byte, 256)
	n, err := r.Read(line)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Logf("read %q, then closed the pipe", line[:n])
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		rocelab(t, "destroy", "--name", lab, "--root", root)
		t.Fatal("run did not stop within 60 s of its output's reader leaving")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		rocelab(t, "destroy", "--name", lab, "--root", root)
		t.Fatalf("run after its output's reader left: %v, want exit 130 (interrupted, its lab destroyed)", err)
	}
	sameSnapshot(t, before)
	if labs, _ := state.List(root); len(labs) != 0 {
		t.Errorf("run dirs left: %v", labs)
	}
}
