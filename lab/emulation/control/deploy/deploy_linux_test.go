package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox"
	"github.com/rocelab/rocelab/lab/emulation/base/sandbox/netns"
	"github.com/rocelab/rocelab/lab/emulation/base/state"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/topologies"
	"github.com/vishvananda/netlink"
)

// checkDeployed verifies every node's namespace, interfaces (name, MAC,
// alias) and FE addresses, and that Inspect sees every process healthy.
func checkDeployed(t *testing.T, root string, l *deploy.Lab, tp *topologies.Topology) {
	t.Helper()
	if len(l.Nodes) != len(tp.Nodes) {
		t.Fatalf("%d nodes, want %d", len(l.Nodes), len(tp.Nodes))
	}
	for i, n := range tp.Nodes {
		ln := l.Nodes[i]
		if ln.NetNS != state.NetnsName(l.Name, n.Name) || !netns.Exists(ln.NetNS) {
			t.Errorf("node %s: namespace %q missing", n.Name, ln.NetNS)
			continue
		}
		// Switches run the switch node; hosts and storage with back-end
		// NICs the endpoint node.
		hasBE := false
		for _, p := range n.Ports {
			hasBE = hasBE || p.Plane == topologies.BE
		}
		if (n.Kind == topologies.KindSwitch || hasBE) != (ln.PID != 0) {
			t.Errorf("node %s (%s): PID %d", n.Name, n.Kind, ln.PID)
		}
		// The node process is the slim rocelab-node the tests build beside
		// rocelab, not `rocelab node` (which starts 3× slower).
		if ln.PID != 0 {
			exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", ln.PID))
			if want := filepath.Join(filepath.Dir(binary(t)), state.NodeBinary); err != nil || exe != want {
				t.Errorf("node %s runs %q (%v), want %s", n.Name, exe, err, want)
			}
		}
		h, err := netns.Handle(ln.NetNS)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range n.Ports {
			link, err := h.LinkByName(p.IfName)
			if err != nil {
				t.Errorf("%s:%s: %v", n.Name, p.Name, err)
				continue
			}
			a := link.Attrs()
			if a.HardwareAddr.String() != p.MAC.String() || a.Alias != state.IfAlias(l.Name, n.Name, p.Name) {
				t.Errorf("%s:%s: MAC %v alias %q, want %v %q", n.Name, p.Name, a.HardwareAddr, a.Alias, p.MAC, state.IfAlias(l.Name, n.Name, p.Name))
			}
			addrs, _ := h.AddrList(link, netlink.FAMILY_V4)
			wantAddr := n.Kind != topologies.KindSwitch && p.Plane == topologies.FE
			if wantAddr != (len(addrs) == 1) || wantAddr && addrs[0].IPNet.String() != p.Addr.String() {
				t.Errorf("%s:%s (%s): addresses %v", n.Name, p.Name, p.Plane, addrs)
			}
		}
		h.Close()
	}
	st, err := deploy.Inspect(t.Context(), root, l.Name)
	if err != nil || len(st) != 1 || st[0].Status != "running" {
		t.Errorf("Inspect: %+v, %v", st, err)
	}
}

// simulatorOnly are the built-in topologies too large to deploy on one
// machine: seed-24k's 4,280 nodes are the simulator's (issue 54).
var simulatorOnly = map[string]bool{"seed-24k": true}

func TestDeployBuiltins(t *testing.T) {
	requireRoot(t)
	for _, topo := range topologies.BuiltinNames() {
		if simulatorOnly[topo] {
			continue
		}
		t.Run(topo, func(t *testing.T) {
			root := runRoot(t)
			before := snap(t)
			tp, err := topologies.Builtin(topo)
			if err != nil {
				t.Fatal(err)
			}
			lab := labName(t, topo)
			start := time.Now()
			l, err := deploy.Deploy(t.Context(), deploy.Options{Topology: tp, LabName: lab, Root: root, Binary: binary(t)})
			if err != nil {
				deploy.Destroy(context.Background(), root, lab)
				t.Fatal(err)
			}
			dt := time.Since(start)
			checkDeployed(t, root, l, tp)
			start = time.Now()
			if _, err := deploy.Destroy(t.Context(), root, lab); err != nil {
				t.Fatal(err)
			}
			s := tp.Summary()
			t.Logf("%s: %d nodes, %d links, scale %d: deploy %v %v, destroy %v", topo, s.Nodes, s.Links, l.Scale, dt.Round(time.Millisecond), l.Timings, time.Since(start).Round(time.Millisecond))
			sameSnapshot(t, before)
			if _, err := os.Stat(l.Dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("run dir %s still there: %v", l.Dir, err)
			}
			// Destroy is idempotent.
			if _, err := deploy.Destroy(t.Context(), root, lab); err != nil {
				t.Errorf("second destroy: %v", err)
			}
		})
	}
}

// ping runs ping inside node and fails t unless every echo comes back.
// ping pings addr from node: a test that pings skips (fails under CI)
// where the ping command is missing.
func ping(t *testing.T, root, lab, node, addr string) {
	t.Helper()
	testenv.RequireTool(t, "ping")
	var out bytes.Buffer
	code, err := deploy.Exec(t.Context(), root, lab, node, []string{"ping", "-n", "-c", "3", "-W", "2", "-i", "0.2", addr}, sandbox.Stdio{Out: &out, Err: &out})
	if err != nil || code != 0 {
		t.Errorf("%s: ping %s: exit %d, %v\n%s", node, addr, code, err, out.String())
	}
}

func feAddr(t *testing.T, l *deploy.Lab, node string) string {
	t.Helper()
	for _, n := range l.Nodes {
		if n.Name == node && len(n.Addresses) > 0 {
			return strings.Split(n.Addresses[0], "/")[0]
		}
	}
	t.Fatalf("node %s has no FE address", node)
	return ""
}

// TestTwoLabsPing deploys laptop twice side by side, pings across the FE
// (host to host, host to storage: through the rsw1 switch process) in
// both, destroys one and checks the other still works.
func TestTwoLabsPing(t *testing.T) {
	requireRoot(t)
	testenv.RequireTool(t, "ping")
	root := runRoot(t)
	before := snap(t)
	a := deployLab(t, "laptop", labName(t, "ping-a"), root, deploy.Options{})
	b := deployLab(t, "laptop", labName(t, "ping-b"), root, deploy.Options{})
	for _, l := range []*deploy.Lab{a, b} {
		ping(t, root, l.Name, "host1", feAddr(t, l, "host2"))
		ping(t, root, l.Name, "host3", feAddr(t, l, "st1"))
	}
	if _, err := deploy.Destroy(t.Context(), root, a.Name); err != nil {
		t.Fatal(err)
	}
	ping(t, root, b.Name, "st1", feAddr(t, b, "host4"))
	st, err := deploy.Inspect(t.Context(), root, "")
	if err != nil || len(st) != 1 || st[0].Name != b.Name || st[0].Status != "running" {
		t.Errorf("Inspect after destroying %s: %+v, %v", a.Name, st, err)
	}
	if _, err := deploy.Destroy(t.Context(), root, b.Name); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, before)
}

// TestDeployExists refuses a second deploy of a lab.
func TestDeployExists(t *testing.T) {
	requireRoot(t)
	root := runRoot(t)
	lab := labName(t, "exists")
	deployLab(t, "incast", lab, root, deploy.Options{})
	tp, _ := topologies.Builtin("incast")
	_, err := deploy.Deploy(t.Context(), deploy.Options{Topology: tp, LabName: lab, Root: root, Binary: binary(t)})
	if !errors.Is(err, deploy.ErrExists) {
		t.Fatalf("second deploy: %v, want ErrExists", err)
	}
	if st, _ := deploy.Inspect(t.Context(), root, lab); len(st) != 1 || st[0].Status != "running" {
		t.Errorf("the first lab suffered: %+v", st)
	}
}

// TestDeployRollback fails deploys at each step and checks that nothing
// is left.
func TestDeployRollback(t *testing.T) {
	requireRoot(t)
	bad := t.TempDir() + "/bad-node"
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho 'bad node: cannot start' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		hook    func(deploy.Step, string) error
		binary  string
		wantErr []string
	}{
		{"node", failNamed(deploy.StepNode, "ctsw1"), "", []string{"node ctsw1", "injected"}},
		{"link", failAt(deploy.StepLink, 15), "", []string{"link ", "injected"}},
		{"address", failAt(deploy.StepAddress, 3), "", []string{"address ", "injected"}},
		{"start", failAt(deploy.StepStart, 4), "", []string{"start ", "injected"}},
		{"binary", nil, bad, []string{"healthy ", "exited", "bad node: cannot start"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := runRoot(t)
			before := snap(t)
			tp, _ := topologies.Builtin("laptop")
			bin := tc.binary
			if bin == "" {
				bin = binary(t)
			}
			lab := labName(t, "rb-"+tc.name)
			_, err := deploy.Deploy(t.Context(), deploy.Options{Topology: tp, LabName: lab, Root: root, Binary: bin, Hook: tc.hook, Workers: 2})
			if err == nil {
				deploy.Destroy(context.Background(), root, lab)
				t.Fatal("deploy succeeded")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			sameSnapshot(t, before)
			if labs, _ := state.List(root); len(labs) != 0 {
				t.Errorf("run dirs left: %v", labs)
			}
		})
	}
}

// failAt fails the n-th unit (1-based) of step.
func failAt(step deploy.Step, n int) func(deploy.Step, string) error {
	var (
		mu    sync.Mutex
		count int
	)
	return func(s deploy.Step, name string) error {
		if s != step {
			return nil
		}
		// Units of one step run in parallel (Workers 2): which unit is the
		// n-th is loose, only the step is certain.
		mu.Lock()
		defer mu.Unlock()
		count++
		if count >= n {
			return errors.New("injected failure")
		}
		return nil
	}
}

// failNamed fails step at the unit called name.
func failNamed(step deploy.Step, name string) func(deploy.Step, string) error {
	return func(s deploy.Step, n string) error {
		if s == step && n == name {
			return errors.New("injected failure")
		}
		return nil
	}
}

func TestDeployBadOptions(t *testing.T) {
	requireRoot(t)
	root := runRoot(t)
	tp, _ := topologies.Builtin("laptop")
	for _, o := range []deploy.Options{
		{},
		{Topology: tp, LabName: "bad/name"},
		{Topology: tp, LabName: labName(t, "nobin"), Binary: "/nonexistent/rocelab"},
		{Topology: tp, LabName: labName(t, "scale"), Scale: -1},
	} {
		if o.Topology != nil {
			o.Root = root
		}
		if _, err := deploy.Deploy(t.Context(), o); err == nil {
			t.Errorf("Deploy(%+v) succeeded", o)
		}
	}
	if labs, _ := state.List(root); len(labs) != 0 {
		t.Errorf("run dirs left: %v", labs)
	}
}
