// Package testenv lets tests ask for what they need from the machine — root,
// a tool on PATH — and decides what happens when it is missing: on a
// developer's machine the test is skipped with the reason; in CI (the CI
// environment variable is set to anything but "" or "false") it fails, so a
// CI run can never go green by skipping.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run under CI.
func InCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// missing skips t, or fails it under CI.
func missing(t testing.TB, what string) {
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
		missing(t, "root")
	}
}

// RequireTool skips or fails t unless name is on PATH, and returns its path.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		missing(t, "the "+name+" command")
	}
	return path
}
