package deploy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
	"github.com/vishvananda/netlink"
)

// prefix starts every lab name of this test process, so that the
// snapshots and sweeps of these tests see only their own labs.
var prefix = fmt.Sprintf("dt%04x", os.Getpid()&0xffff)

// labName is a unique lab name for test t.
func labName(t *testing.T, what string) string {
	return prefix + "-" + what
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds the rocelab command once per test process.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rocelab-deploy-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "rocelab")
		buildErr = testenv.BuildRocelabTo(binPath)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	if orders := os.Getenv(crashEnv); orders != "" {
		os.Exit(crashChild(orders))
	}
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// runRoot is a fresh run-directory root for t. It lives on tmpfs under
// /run when it can, like the real /run/rocelab: on a disk, the fsync of
// every state write would dominate the big topologies' timings.
func runRoot(t *testing.T) string { return testenv.RunRoot(t, "rltest-") }

// snapshot is the machine state a lab must leave as it found it: the
// named namespaces and root-namespace interfaces that belong (by name or
// tag) to this test process's labs.
type snapshot struct {
	Netns []string
	Links []string
}

func snap(t *testing.T) snapshot {
	t.Helper()
	var s snapshot
	names, err := netns.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, state.NetnsPrefix+prefix) {
			s.Netns = append(s.Netns, n)
		}
	}
	ls, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		a := l.Attrs()
		if _, _, _, ok := topologies.ParseIfName(a.Name); ok || strings.HasPrefix(a.Alias, state.AliasPrefix+prefix) {
			s.Links = append(s.Links, a.Name)
		}
	}
	slices.Sort(s.Links)
	return s
}

func sameSnapshot(t *testing.T, before snapshot) {
	t.Helper()
	if diff := cmp.Diff(before, snap(t)); diff != "" {
		t.Errorf("namespaces and interfaces changed (-before +after):\n%s", diff)
	}
}

// deployLab deploys topology name as lab under root, destroying it at
// cleanup.
func deployLab(t *testing.T, topo, lab, root string, o deploy.Options) *deploy.Lab {
	t.Helper()
	tp, err := topologies.Builtin(topo)
	if err != nil {
		t.Fatal(err)
	}
	o.Topology, o.LabName, o.Root = tp, lab, root
	if o.Binary == "" {
		o.Binary = binary(t)
	}
	t.Cleanup(func() {
		if _, err := deploy.Destroy(context.Background(), root, lab); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	l, err := deploy.Deploy(t.Context(), o)
	if err != nil {
		t.Fatalf("deploy %s as %s: %v", topo, lab, err)
	}
	return l
}

func requireRoot(t *testing.T) {
	t.Helper()
	testenv.RequireRoot(t)
	testenv.Exclusive(t)
}
