package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildRocelab builds the rocelab command (with the build tags of the
// test binary that calls it), statically (CGO_ENABLED=0, so
// the docker runtime can put it into its image), into t's temporary
// directory and returns its path. Go's build cache makes every build after
// the first a link step.
func BuildRocelab(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rocelab")
	if err := BuildRocelabTo(bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// BuildRocelabTo builds the static rocelab command into path, and the
// slim rocelab-node beside it (deploy starts nodes with it, as after make
// build), for tests that share one binary across a test process.
func BuildRocelabTo(path string) error {
	for _, c := range []struct{ out, pkg string }{
		{path, "github.com/rocelab/rocelab/cmd/rocelab"},
		{filepath.Join(filepath.Dir(path), "rocelab-node"), "github.com/rocelab/rocelab/cmd/rocelab-node"},
	} {
		args := []string{"build", "-o", c.out}
		if buildTags != "" {
			args = append(args, "-tags", buildTags)
		}
		cmd := exec.Command("go", append(args, c.pkg)...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v\n%s", filepath.Base(c.out), err, out)
		}
	}
	return nil
}

// BuildCommand builds the command cmd/NAME of this module (statically,
// with the test binary's build tags) into t's temporary directory and
// returns its path: for the binaries BuildRocelab does not build
// (rocelab-controller).
func BuildCommand(t testing.TB, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	args := []string{"build", "-o", out}
	if buildTags != "" {
		args = append(args, "-tags", buildTags)
	}
	cmd := exec.Command("go", append(args, "github.com/rocelab/rocelab/cmd/"+name)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, msg)
	}
	return out
}

// RunRoot returns a fresh lab run-directory root for t, removed when t
// ends: on tmpfs under /run when it can (the lab's state file is fsynced
// on every change, which is slow on a disk), else in t's temporary
// directory.
func RunRoot(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/run", prefix)
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// BuildVerbsLib builds rocelab's drop-in libibverbs.so.1 into path with
// scripts/build-verbs-lib.sh (what `make build` runs), or skips t (fails
// it under CI) when the C compiler or the verbs headers are missing.
func BuildVerbsLib(t testing.TB, path string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("find the module's directory: %v", err)
	}
	script := filepath.Join(string(bytes.TrimSpace(out)), "scripts", "build-verbs-lib.sh")
	cmd := exec.Command(script, path)
	msg, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		Missing(t, string(bytes.TrimSpace(msg)))
		return
	}
	if errors.As(err, &ee) && ee.ExitCode() == 4 {
		// libibverbs.so.1 is there; librdmacm.so.1 is not
		// (RequireCMLib says so to the tests that need it).
		t.Logf("%s", bytes.TrimSpace(msg))
		return
	}
	if err != nil {
		t.Fatalf("build libibverbs: %v\n%s", err, msg)
	}
}

// RequireCMLib skips t (fails it under CI) unless BuildVerbsLib built
// rocelab's librdmacm.so.1 beside the libibverbs.so.1 at path.
func RequireCMLib(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "librdmacm.so.1")); err != nil {
		Missing(t, "rocelab's librdmacm.so.1 was not built: install librdmacm-dev (the rdma_cm headers)")
	}
}
