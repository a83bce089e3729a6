package deploy_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/telemetry"

	"github.com/rocelab/rocelab/lab/emulation/base/proc"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
)

// TestNodeGroups deploys laptop with its nine node processes (four hosts,
// five switches) in two (node groups: each group's models on one loop),
// runs checked RDMA through them, restarts a node (its whole group comes
// back), kills a group and repairs it, and destroys the lab leaving
// nothing.
func TestNodeGroups(t *testing.T) {
	requireRoot(t)
	before := snap(t)
	root := runRoot(t)
	lab := labName(t, "sg")
	l := deployLab(t, "laptop", lab, root, deploy.Options{NodeGroups: 2})

	groups := map[string][]string{} // group → members
	pids := map[string]int{}        // group → PID
	for _, n := range l.Nodes {
		switch {
		case n.PID != 0 && n.Group == "":
			t.Errorf("%s %s runs in no group", n.Kind, n.Name)
		case n.PID == 0 && n.Group != "":
			t.Errorf("%s %s, which runs no process, is in group %s", n.Kind, n.Name, n.Group)
		case n.Group != "":
			groups[n.Group] = append(groups[n.Group], n.Name)
			if p, ok := pids[n.Group]; ok && p != n.PID {
				t.Errorf("group %s runs in pids %d and %d", n.Group, p, n.PID)
			}
			pids[n.Group] = n.PID
		}
	}
	if len(groups) != 2 || len(pids) != 2 || pids["group1"] == pids["group2"] || len(groups["group1"])+len(groups["group2"]) != 9 {
		t.Fatalf("groups %v in pids %v, want the nine nodes in two groups, two processes", groups, pids)
	}

	perf := func(what string) {
		t.Helper()
		from := jobs.NICRef{Node: "host1", NIC: "host1:gpu0", Client: apiOf(t, root, lab, "host1")}
		to := jobs.NICRef{Node: "host3", NIC: "host3:gpu0", Client: apiOf(t, root, lab, "host3")}
		rep, err := jobs.RunPerf(t.Context(), from, to, jobs.PerfSpec{Op: "write", Size: 65536, Iterations: 100, Seed: 5}, nil)
		if err != nil {
			t.Fatalf("perf %s: %v", what, err)
		}
		if r := rep.Client; r.Messages != 100 || !rep.Checked || rep.WrongBytes != 0 {
			t.Errorf("perf %s: %d messages, checked %v, %d wrong bytes", what, r.Messages, rep.Checked, rep.WrongBytes)
		}
	}
	perf("through the groups")
	var crossed float64
	for _, sw := range []string{"ctsw1", "ctsw2"} {
		ss, err := apiOf(t, root, lab, sw).Telemetry(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		crossed += telemetry.Sum(ss, "switch_port_rx_packets_total")
	}
	if crossed < 100 {
		t.Errorf("the spines forwarded %v packets, want the perf's", crossed)
	}

	// Restarting one switch brings its whole group back in one new process.
	g := groups["group1"]
	n, err := deploy.Restart(t.Context(), root, lab, g[0], deploy.RestartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.PID == pids["group1"] {
		t.Errorf("restart of %s kept pid %d", g[0], n.PID)
	}
	for _, name := range g {
		if _, m, err := deploy.FindNode(root, lab, name); err != nil || m.PID != n.PID || m.Group != "group1" {
			t.Errorf("after the restart %s runs in pid %d (group %q), want %d: %v", name, m.PID, m.Group, n.PID, err)
		}
	}
	if (proc.Process{PID: pids["group1"]}).Alive() {
		t.Errorf("the group's old process %d still runs", pids["group1"])
	}

	// The other group dies whole; repair brings every member back.
	other := groups["group2"]
	kill9(t, root, lab, other[0])
	fixed, err := deploy.Repair(t.Context(), root, lab, deploy.RestartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(fixed)
	want := slices.Sorted(slices.Values(other))
	if !slices.Equal(fixed, want) {
		t.Errorf("repair fixed %v, want the group's %v", fixed, want)
	}
	perf("after the restart and the repair")

	if _, err := deploy.Destroy(t.Context(), root, lab); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, before)
}

// TestNodeGroupsRefused: groups are for the netns runtime on one machine.
func TestNodeGroupsRefused(t *testing.T) {
	tp, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    deploy.Options
		want string
	}{
		{"negative", deploy.Options{NodeGroups: -1}, "want a count of processes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Topology = tp
			_, err := deploy.Deploy(t.Context(), tc.o)
			if !errors.Is(err, deploy.ErrOptions) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Deploy: %v, want ErrOptions saying %q", err, tc.want)
			}
		})
	}
}

// apiOf is a client of node's API in lab, closed at cleanup.
func apiOf(t *testing.T, root, lab, node string) *nodeapi.Client {
	t.Helper()
	_, n, err := deploy.FindNode(root, lab, node)
	if err != nil {
		t.Fatal(err)
	}
	c := nodeapi.NewClient(n.Socket)
	t.Cleanup(func() { c.Close() })
	return c
}
