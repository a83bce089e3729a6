//go:build linux

// Package netnstest makes the named network namespaces of tests: created
// at once, deleted when the test ends.
package netnstest

import (
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/runtime/netns"
)

// New creates the namespace name for tb (which needs root: a skip, or a
// failure under CI) and deletes it when tb ends.
func New(tb testing.TB, name string) string {
	tb.Helper()
	testenv.RequireRoot(tb)
	if err := netns.Create(name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := netns.Delete(name); err != nil {
			tb.Error(err)
		}
	})
	return name
}
