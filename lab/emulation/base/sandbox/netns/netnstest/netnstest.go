//go:build linux

// Package netnstest makes the named network namespaces of tests: created
// at once, deleted when the test ends, under names unique to the run.
package netnstest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
)

// start distinguishes parallel runs of the same binary, seq the names
// within a run.
var (
	start = rand.Uint32()
	seq   atomic.Uint32
)

// Unique returns a short name stem unique to this run (the PID and a
// sequence number) ending in tag; it fits an interface name with a
// 5-byte prefix.
func Unique(tag string) string {
	return fmt.Sprintf("%x%x%s", os.Getpid()&0xfffff, (start+seq.Add(1))&0xff, tag)
}

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

// NewUnique creates a namespace named rltest-<Unique(tag)> for tb.
func NewUnique(tb testing.TB, tag string) string {
	tb.Helper()
	return New(tb, "rltest-"+Unique(tag))
}
