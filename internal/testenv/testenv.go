// Package testenv lets tests ask for what they need from the machine — root,
// a tool on PATH — and decides what happens when it is missing: on a
// developer's machine the test is skipped with the reason; in CI (the CI
// environment variable is set to anything but "" or "false") it fails, so a
// CI run can never go green by skipping.
package testenv

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// InCI reports whether the tests run under CI.
func InCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// Missing skips t because what is missing, or fails it under CI: for
// needs that RequireRoot and RequireTool do not cover (a Docker engine,
// IPv6 in the kernel).
func Missing(t testing.TB, what string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s is required in CI (CI=%q) and is missing", what, os.Getenv("CI"))
		return
	}
	t.Skipf("skipping: %s is missing (set CI=true to make this a failure)", what)
}

// RequireRoot skips or fails t unless it runs as root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "root")
	}
}

// RequireTool skips or fails t unless name is on PATH, and returns its path.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "the "+name+" command")
	}
	return path
}

// exclusiveLock is the file whose lock serialises Exclusive tests across
// the test binaries `go test ./...` runs in parallel.
const exclusiveLock = "/tmp/rocelab-exclusive-tests.lock"

// exclusive records which tests of this process hold the lock. flock
// treats two descriptors of one file as strangers even within a process,
// so a test (or a subtest of one) that asked twice, e.g. through two
// helpers, would wait for itself forever. The lock is the process's, so
// its book is too.
var exclusive = struct {
	sync.Mutex
	holders map[string]bool // test names
}{holders: map[string]bool{}}

// Exclusive makes t the only Exclusive test running on the machine until
// it ends: emulation tests whose results depend on timing (fidelity,
// scenario expectations) or that load the CPU heavily (deploying 100+
// nodes) take it so that they neither disturb each other nor are disturbed.
// A test that holds it already, itself or through a parent test, goes on.
func Exclusive(t testing.TB) {
	t.Helper()
	lockExclusive(t, exclusiveLock)
}

// lockExclusive is Exclusive with the lock file at path.
func lockExclusive(t testing.TB, path string) {
	t.Helper()
	if holdsExclusive(t.Name()) {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatalf("exclusive test lock: %v", err)
	}
	waited := time.Now()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("exclusive test lock: %v", err)
	}
	if d := time.Since(waited); d > time.Second {
		t.Logf("waited %v for the exclusive test lock", d.Round(time.Second))
	}
	exclusive.Lock()
	exclusive.holders[t.Name()] = true
	exclusive.Unlock()
	t.Cleanup(func() {
		exclusive.Lock()
		delete(exclusive.holders, t.Name())
		exclusive.Unlock()
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}

// holdsExclusive reports whether test name or a test above it holds the
// lock.
func holdsExclusive(name string) bool {
	exclusive.Lock()
	defer exclusive.Unlock()
	for h := range exclusive.holders {
		if name == h || strings.HasPrefix(name, h+"/") {
			return true
		}
	}
	return false
}
