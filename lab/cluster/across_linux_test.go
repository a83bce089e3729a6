package cluster_test

import (
	"context"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/jobs"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/cluster/agent/agenttest"
	"github.com/rocelab/rocelab/lab/emulation/control/deploy"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/topologies/placement"
)

// deployAcross deploys topology topo as lab over machines: each
// machine's part by its own Deploy, in parallel, all sharing one origin.
func deployAcross(t *testing.T, topo, lab string, ms []agenttest.Machine) (map[string]*deploy.Lab, *placement.Placement) {
	bin := binary(t)
	t.Helper()
	tp, err := topologies.Builtin(topo)
	if err != nil {
		t.Fatal(err)
	}
	var specs []placement.Machine
	under := map[string]netip.Addr{}
	for _, m := range ms {
		specs = append(specs, placement.Machine{Name: m.Name})
		under[m.Name] = m.Addr
	}
	pl, err := placement.Place(tp, lab, specs)
	if err != nil {
		t.Fatal(err)
	}
	origin := time.Now()
	labs := map[string]*deploy.Lab{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range ms {
		t.Cleanup(func() {
			if _, err := deploy.Destroy(context.Background(), m.Root, lab); err != nil {
				t.Errorf("cleanup %s: %v", m.Name, err)
			}
		})
		wg.Go(func() {
			tp, _ := topologies.Builtin(topo) // a topology per deploy: Deploy addresses it
			l, err := deploy.Deploy(t.Context(), deploy.Options{
				Topology: tp, LabName: lab, Root: m.Root, Binary: bin, Origin: origin,
				Part: &deploy.Part{Machine: m.Name, Placement: pl, Underlay: under, UnderlayNS: m.NetNS, Device: m.Dev},
			})
			if err != nil {
				t.Errorf("deploy %s on %s: %v", lab, m.Name, err)
				return
			}
			mu.Lock()
			labs[m.Name] = l
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return labs, pl
}

// nodeClient is the API client of node in whichever part runs it.
func nodeClient(t *testing.T, labs map[string]*deploy.Lab, node string) *nodeapi.Client {
	t.Helper()
	for _, l := range labs {
		for _, n := range l.Nodes {
			if n.Name == node {
				return nodeapi.NewClient(n.Socket)
			}
		}
	}
	t.Fatalf("no part runs %s", node)
	return nil
}

// counter sums the samples called name of node whose port label is port
// ("" = any).
func counter(t *testing.T, c *nodeapi.Client, name, port string) float64 {
	t.Helper()
	ss, err := c.Telemetry(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if port == "" {
		return telemetry.Sum(ss, name)
	}
	return telemetry.Sum(ss, name, telemetry.Label{Name: "port", Value: port})
}

// TestAcrossMachines deploys laptop over two machines — each rack on its
// own, so leaf–spine links and front-end links cross between them as
// VXLAN tunnels — and runs RDMA between hosts on different machines
// through the switch models of both.
func TestAcrossMachines(t *testing.T) {
	requireRoot(t)
	ms := agenttest.New(t, 2).Machines
	lab := labName(t, "mm")
	labs, pl := deployAcross(t, "laptop", lab, ms)
	if pl.Of["host1"] == pl.Of["host3"] {
		t.Fatalf("host1 and host3 on one machine: %v", pl.Of)
	}
	for _, m := range ms {
		l := labs[m.Name]
		if l.Machine != m.Name || len(l.Nodes) == 0 || len(l.Nodes) == 10 {
			t.Errorf("%s's part: machine %q, %d nodes", m.Name, l.Machine, len(l.Nodes))
		}
	}
	// Verified data from a host on one machine to one on the other.
	from := jobs.NICRef{Node: "host1", NIC: "host1:gpu0", Client: nodeClient(t, labs, "host1")}
	to := jobs.NICRef{Node: "host3", NIC: "host3:gpu0", Client: nodeClient(t, labs, "host3")}
	rep, err := jobs.RunPerf(t.Context(), from, to, jobs.PerfSpec{Op: "write", Size: 65536, Iterations: 100, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Client; r.Messages != 100 || !rep.Checked || rep.WrongBytes != 0 {
		t.Errorf("perf across machines: %d messages, checked %v, %d wrong bytes", r.Messages, rep.Checked, rep.WrongBytes)
	}
	t.Logf("perf host1 -> host3 across machines: %.1f Gb/s", rep.Client.BWAvg)
	var crossed float64
	for _, sw := range []string{"ctsw1", "ctsw2"} {
		crossed += counter(t, nodeClient(t, labs, sw), "switch_port_rx_packets_total", "")
	}
	if crossed < 100 {
		t.Errorf("the spines forwarded %v packets, want the perf's", crossed)
	}
	incastAcross(t, labs, pl, from.Client)
	// A ring all-reduce over the four hosts of both machines.
	var ranks []jobs.NICRef
	for _, h := range []string{"host1", "host2", "host3", "host4"} {
		ranks = append(ranks, jobs.NICRef{Node: h, NIC: h + ":gpu0", Client: nodeClient(t, labs, h)})
	}
	res, err := jobs.RunCollective(t.Context(), jobs.CollectiveSpec{Op: "all_reduce", Ranks: ranks, Sizes: []int64{1 << 20}, Iters: 2, Check: true, Seed: 5}, nil)
	if err != nil {
		t.Fatalf("all-reduce across machines: %v", err)
	}
	for _, r := range res {
		if r.Wrong != 0 || !r.Checked {
			t.Errorf("all-reduce %d B: %d wrong (checked %v)", r.Size, r.Wrong, r.Checked)
		}
		t.Logf("all-reduce %d B across machines: busbw %.1f GB/s", r.Size, r.BusBW)
	}
	for _, m := range ms {
		if _, err := deploy.Destroy(t.Context(), m.Root, lab); err != nil {
			t.Fatal(err)
		}
	}
	noNamespacesOf(t, lab)
}

// incastAcross runs a 3:1 incast into host3:gpu0 from the hosts of the
// other rack (so the other machine) and checks that host3's leaf paused
// the spines across the machines: the PFC frames it sent on a crossing
// link arrived at the spine on the far end.
func incastAcross(t *testing.T, labs map[string]*deploy.Lab, pl *placement.Placement, _ *nodeapi.Client) {
	t.Helper()
	tp, _ := topologies.Builtin("laptop")
	// The crossing links of host3's leaf: rtsw2's end, and the far end.
	type far struct{ node, port string }
	var fars []far
	for _, c := range pl.Crossings {
		l := tp.Links[c.Link-1]
		for _, e := range [][2]*topologies.Port{{l.A, l.B}, {l.B, l.A}} {
			if e[0].Node.Name == "rtsw2" {
				fars = append(fars, far{e[1].Node.Name, strconv.Itoa(e[1].Index - 1)})
			}
		}
	}
	if len(fars) == 0 {
		t.Fatalf("no link of rtsw2 crosses machines: %+v", pl.Crossings)
	}
	pfcAt := func() (v float64) {
		for _, f := range fars {
			v += counter(t, nodeClient(t, labs, f.node), "switch_port_pfc_rx_frames_total", f.port)
		}
		return v
	}
	pausedBefore := pfcAt()
	recv := jobs.NICRef{Node: "host3", NIC: "host3:gpu0", Client: nodeClient(t, labs, "host3")}
	var wg sync.WaitGroup
	for _, s := range []string{"host1:gpu0", "host1:gpu1", "host2:gpu0"} {
		node := s[:5]
		from := jobs.NICRef{Node: node, NIC: s, Client: nodeClient(t, labs, node)}
		wg.Go(func() {
			rep, err := jobs.RunPerf(t.Context(), from, recv, jobs.PerfSpec{Op: "write", Size: 64 << 10, Duration: 200 * clock.Microsecond, Seed: 7}, nil)
			if err != nil {
				t.Errorf("incast %s -> host3:gpu0: %v", s, err)
				return
			}
			if rep.WrongBytes != 0 {
				t.Errorf("incast %s: %d wrong bytes", s, rep.WrongBytes)
			}
		})
	}
	wg.Wait()
	paused := pfcAt() - pausedBefore
	if paused == 0 {
		t.Errorf("the 3:1 incast into host3 sent no PFC frame across the machines (spine ports %v)", fars)
	}
	t.Logf("incast into host3: %v PFC frames crossed to the spines %v", paused, fars)
}
