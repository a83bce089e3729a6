package live_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/compliance"
	"github.com/rocelab/rocelab/lab/compliance/live"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
)

// labCases are the cases run against a lab's NIC: wire format, the
// requester's and responder's reactions, MetaRoCE negotiation, CNPs and
// PFC — a cross-section that takes seconds at the lab's k, not the whole
// suite (TestReferencePasses runs that against the same node process).
var labCases = []string{"wire/", "rc/nak-seq-goback", "rc/rnr-wait", "rc/read-response", "neg/hello", "meta/selective-repeat", "ecn/", "nic/pfc"}

// TestLabNIC: the suite runs against host1:gpu1 of a deployed laptop lab,
// as the lab runs it (its process, its k, its addresses), with the tester
// at rtsw1's end of the link; afterwards the switch port's down fault is
// gone, the lab is healthy and an all-reduce through that NIC still runs.
// A node that is not an endpoint, a NIC it does not have and a NIC in the
// middle of a perf are refused.
func TestLabNIC(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.Exclusive(t)
	bin := testenv.BuildRocelab(t)
	root := testenv.RunRoot(t, "rltest-clab-")
	name := fmt.Sprintf("cl%d", os.Getpid())
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	lab, err := deploy.Deploy(t.Context(), deploy.Options{Topology: topo, LabName: name, Root: root, Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := deploy.Destroy(context.Background(), root, name); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})

	for _, bad := range []live.LabOptions{{Node: "rtsw1"}, {Node: "host1", NIC: "gpu7"}, {Node: "nosuch"}} {
		bad.Root, bad.Lab = root, name
		if u, err := live.Attach(t.Context(), bad); err == nil {
			u.Close()
			t.Errorf("Attach(%+v) succeeded", bad)
		} else {
			t.Logf("Attach(%s %s): %v", bad.Node, bad.NIC, err)
		}
	}

	client := func(node string) *nodeapi.Client {
		for _, n := range lab.Nodes {
			if n.Name == node {
				c := nodeapi.NewClient(n.Socket)
				t.Cleanup(c.Close)
				return c
			}
		}
		t.Fatalf("no node %s", node)
		return nil
	}
	from := jobs.NICRef{Node: "host1", NIC: "host1:gpu1", Client: client("host1")}
	to := jobs.NICRef{Node: "host4", NIC: "host4:gpu0", Client: client("host4")}

	// A NIC that is sending (a perf through it) is refused, and nothing
	// is changed: the perf completes.
	busy := make(chan error, 1)
	go func() {
		rp, err := jobs.RunPerf(t.Context(), from, to, jobs.PerfSpec{Op: "write", Size: 64 << 10, Duration: 3 * clock.Millisecond}, nil)
		if err == nil && (rp.Client.Messages == 0 || rp.WrongBytes != 0) {
			err = fmt.Errorf("perf %+v", rp)
		}
		busy <- err
	}()
	time.Sleep(time.Second) // the perf is under way
	if u, err := live.Attach(t.Context(), live.LabOptions{Root: root, Lab: name, Node: "host1", NIC: "gpu1"}); err == nil {
		u.Close()
		t.Error("Attach to a NIC in the middle of a perf succeeded")
	} else if !strings.Contains(err.Error(), "busy") {
		t.Errorf("Attach to a busy NIC: %v", err)
	} else {
		t.Logf("Attach to a busy NIC: %v", err)
	}
	if err := <-busy; err != nil {
		t.Errorf("the perf beside the refused Attach: %v", err)
	}

	u, err := live.Attach(t.Context(), live.LabOptions{Root: root, Lab: name, Node: "host1", NIC: "gpu1"})
	if err != nil {
		t.Fatal(err)
	}
	if u.Scale() != lab.Scale || !strings.Contains(u.Describe(), "host1:gpu1") || !strings.Contains(u.Describe(), "rtsw1") {
		t.Errorf("IUT %q at k=%d, want host1:gpu1 of the lab at k=%d, tester on rtsw1", u.Describe(), u.Scale(), lab.Scale)
	}
	rep, err := compliance.Run(t.Context(), compliance.Options{Mode: endpoint.ModeMetaRoCE, Include: labCases, IUT: u.Describe()}, u.NewEnv())
	if cerr := u.Close(); cerr != nil {
		t.Error(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cases against %s", len(rep.Results), u.Describe())
	if !rep.OK() || len(rep.Failed()) > 0 || len(rep.Results) != 13 {
		logReport(t, rep)
		t.Errorf("%d of %d cases failed", len(rep.Failed()), len(rep.Results))
	}

	// The lab is as it was: no fault left on rtsw1, every node healthy, and
	// traffic through host1:gpu1 flows.
	for _, n := range lab.Nodes {
		if n.Name != "rtsw1" {
			continue
		}
		c := nodeapi.NewClient(n.Socket)
		fs, err := c.Faults(t.Context())
		c.Close()
		if err != nil || len(fs) != 0 {
			t.Errorf("faults left on rtsw1: %+v, %v", fs, err)
		}
	}
	st, err := deploy.Inspect(t.Context(), root, name)
	if err != nil || len(st) != 1 || st[0].Status != "running" {
		t.Errorf("lab after the run: %+v, %v", st, err)
	}
	rp, err := jobs.RunPerf(t.Context(), from, to, jobs.PerfSpec{Op: "write", Size: 64 << 10, Iterations: 20}, nil)
	if err != nil || rp.Client.Messages != 20 || rp.WrongBytes != 0 {
		t.Errorf("perf through host1:gpu1 after the run: %+v, %v", rp, err)
	}
}
