package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestInCI(t *testing.T) {
	tests := []struct {
		env  string
		want bool
	}{
		{"", false}, {"false", false}, {"0", false}, {"true", true}, {"1", true}, {"yes", true},
	}
	for _, tc := range tests {
		t.Setenv("CI", tc.env)
		if got := InCI(); got != tc.want {
			t.Errorf("CI=%q: InCI() = %v, want %v", tc.env, got, tc.want)
		}
	}
}

// fakeTB records whether the helper skipped or failed.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }

func TestMissingToolFailsInCI(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		tb := &fakeTB{}
		RequireTool(tb, "rocelab-no-such-tool-xyz")
		if ci == "" && (!tb.skipped || tb.failed) {
			t.Errorf("outside CI: skipped=%v failed=%v, want a skip", tb.skipped, tb.failed)
		}
		if ci != "" && (!tb.failed || tb.skipped) {
			t.Errorf("in CI: skipped=%v failed=%v, want a failure", tb.skipped, tb.failed)
		}
	}
}

// TestExclusiveReentrant: a test that asks for the lock again, itself or
// in a subtest, goes on (it used to wait for itself forever), and the lock
// is free again when the test ends.
func TestExclusiveReentrant(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.Run("holder", func(t *testing.T) {
			lockExclusive(t, path)
			lockExclusive(t, path)
			t.Run("sub", func(t *testing.T) { lockExclusive(t, path) })
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a test that holds the lock waited for it again")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("the lock is still held after the test: %v", err)
	}
	if holdsExclusive("TestExclusiveReentrant/holder") {
		t.Error("the holder is still in the book")
	}
}
