package dashboards

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/dashboards/grafana"
	"github.com/rocelab/rocelab/faults"
	"github.com/rocelab/rocelab/internal/testenv"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/jobs"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
)

// TestGrafanaQueriesEveryShape deploys the laptop lab in each shape a lab
// runs in — a process per node (deploy's default) and every node in one
// group (the shape `run` and `demo` use, one process for several nodes) —
// drives every kind of traffic a panel shows, has a real Prometheus scrape
// `rocelab dashboard`'s /metrics, and asks every query of every generated
// Grafana panel: each must return at least one series (and
// rocelab_build_info is there). No query is excused; the traffic is
//   - a collective (all_reduce, data checked) before the rest: busbw,
//     iteration time, wrong elements;
//   - a fault that delays every frame rtsw1 sends: active faults, fault
//     hits;
//   - pfc-off on rtsw2's port to host3, so host3 ignores rtsw2's pauses
//     and rtsw2 drops for want of headroom: drops by reason;
//   - a PFC storm from rtsw1 into host1:gpu1, a NIC the incast does not
//     use: NIC paused by PFC (a NIC reports pauses once it has received
//     one, and which senders of the incast are paused, if any, depends
//     on the scale the machine allows);
//   - an incast of three NICs into host4:gpu1: everything else (link
//     utilisation, queues, PFC, ECN, CNPs, QP rates).
//
// Every rate panel divides by its node's rate of fabric time, so a node
// whose telemetry lacks emu_fabric_seconds_total (a group member that is
// not the first) drops out of every one of them.
func TestGrafanaQueriesEveryShape(t *testing.T) {
	testenv.RequireRoot(t)
	promBin := testenv.RequireTool(t, "prometheus")
	testenv.Exclusive(t)
	bin := testenv.BuildRocelab(t)
	for _, tc := range []struct {
		name   string
		groups int
	}{
		{"process per node", 0},
		{"one group", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := checkEveryQuery(t, bin, promBin, deploy.Options{NodeGroups: tc.groups}); !t.Failed() {
				t.Logf("%s: %d queries, each with series", tc.name, n)
			}
		})
	}
}

// checkEveryQuery deploys the laptop lab with o (topology, name, root and
// binary filled in), drives it and checks every panel query; it returns
// how many queries it asked.
func checkEveryQuery(t *testing.T, bin, promBin string, o deploy.Options) int {
	root := testenv.RunRoot(t, "rltest-dshape-")
	name := fmt.Sprintf("dq%d%d", os.Getpid()%100000, o.NodeGroups)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	o.Topology, o.LabName, o.Root, o.Binary = topo, name, root, bin
	lab, err := deploy.Deploy(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := deploy.Destroy(context.Background(), root, name); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	t.Logf("lab %s: %d node records, scale %d, node groups %d", name, len(lab.Nodes), lab.Scale, o.NodeGroups)

	h, _, closeLab, err := Live(ctx, LiveOptions{Root: root, Name: name, Interval: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer closeLab()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- Serve(sctx, ln, h) }()
	defer func() {
		stopServe()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	prom := startPrometheus(t, promBin, ln.Addr().String())

	clients := map[string]*nodeapi.Client{}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	client := func(node string) *nodeapi.Client {
		for _, n := range lab.Nodes {
			if n.Name == node && n.Socket != "" {
				if clients[node] == nil {
					clients[node] = nodeapi.NewClient(n.Socket)
				}
				return clients[node]
			}
		}
		t.Fatalf("no node %s with an API in lab %s", node, name)
		return nil
	}
	nic := func(host, port string) jobs.NICRef {
		return jobs.NICRef{Node: host, NIC: host + ":" + port, Client: client(host)}
	}

	// A collective first: its jobs stay on the nodes once finished.
	if _, err := jobs.RunCollective(ctx, jobs.CollectiveSpec{Op: "all_reduce",
		Ranks: []jobs.NICRef{nic("host1", "gpu1"), nic("host3", "gpu1")},
		Sizes: []int64{256 << 10}, Iters: 2, Check: true, Seed: 7}, nil); err != nil {
		t.Fatalf("collective: %v", err)
	}
	for _, f := range []struct{ node, target, spec string }{
		{"rtsw1", "all", "delay 1us"},
		{"rtsw2", "p1", "pfc-off prio 3"},
		{"rtsw1", "p2", "storm prio 3 quanta 65535 interval 100us"},
	} {
		spec, err := faults.ParseSpec(f.spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client(f.node).AddFault(ctx, f.target, spec); err != nil {
			t.Fatalf("add fault %q on %s:%s: %v", f.spec, f.node, f.target, err)
		}
	}
	// About 20 s of wall clock, whatever scale the lab picked.
	d := max(clock.Millisecond, clock.Duration(20*int64(clock.Second)/int64(lab.Scale)))
	incastDone := startIncast(t, ctx, lab, []string{"host1:gpu0", "host2:gpu0", "host3:gpu0"}, "host4:gpu1", d)
	defer func() {
		if err := <-incastDone; err != nil {
			t.Errorf("incast: %v", err)
		}
	}()
	traffic := fmt.Sprintf(`sum(rate(rocelab_nic_tx_bytes_total{lab=%q,node="host3"}[4s])) > 0`, name)
	for start := time.Now(); len(prom.query(t, traffic).values()) == 0; time.Sleep(500 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatalf("no incast traffic in Prometheus within a minute; targets: %s", prom.targets(t))
		}
	}
	time.Sleep(5 * time.Second) // a few scrapes of the incast, drops among them

	// A scrape that misses its 1 s timeout on a busy machine (a group's
	// one process answers every node's API) leaves every series stale
	// until the next, so a query that found none is asked again, up to
	// six times 1.5 s apart (the incast runs about 20 s): each query must
	// find series at least once while the traffic runs.
	type query struct{ where, expr string }
	var pending []query
	for _, d := range grafana.Dashboards() {
		for _, p := range d.Panels {
			for _, q := range p.Exprs {
				pending = append(pending, query{d.Title + " / " + p.Title, grafana.Substitute(q.Expr, name, "4s")})
			}
		}
	}
	asked := len(pending)
	for try := 1; len(pending) > 0; try++ {
		var still []query
		for _, q := range pending {
			r := prom.query(t, q.expr)
			switch {
			case r.Status != "success":
				t.Errorf("%s: %s: %s (%s)", q.where, q.expr, r.Error, r.ErrorType)
			case len(r.Data.Result) == 0:
				still = append(still, q)
			}
		}
		pending = still
		if len(pending) == 0 || try == 6 {
			break
		}
		t.Logf("try %d: %d of %d queries without series yet, asking them again", try, len(pending), asked)
		time.Sleep(1500 * time.Millisecond)
	}
	for _, q := range pending {
		t.Errorf("%s: no series: %s", q.where, q.expr)
	}
	if len(pending) > 0 {
		t.Logf("targets: %s", prom.targets(t))
	}
	// The dashboard's own build, beside the lab's families.
	bi := fmt.Sprintf(`rocelab_build_info{goversion=%q, version!="", revision!=""} == 1`, runtime.Version())
	for try := 1; len(prom.query(t, bi).Data.Result) != 1; try++ {
		if try == 6 {
			t.Errorf("%s: not one series", bi)
			break
		}
		time.Sleep(1500 * time.Millisecond)
	}
	return asked
}
