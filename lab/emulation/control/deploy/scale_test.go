package deploy

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/control/nodeplan"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/topologies"
)

func TestAutoScale(t *testing.T) {
	for _, tc := range []struct {
		topo     string
		capacity float64
		want     int
	}{
		// laptop: 16 BE links × 2 × 400G = 12.8 Tb/s in 4214 + 24 B frames
		// = 377.5 Mpps; at 100 kpps k = 3776.
		{"laptop", 100_000, 3776},
		// incast: 9 × 2 × 100G = 1.8 Tb/s = 53.09 Mpps: k = 531 at
		// 100 kpps and 54 at 1 Mpps, both raised to MinAutoScale; 27 kpps
		// gives 1967.
		{"incast", 100_000, MinAutoScale},
		{"incast", 1e6, MinAutoScale},
		{"incast", 27_000, 1967},
	} {
		topo, err := topologies.Builtin(tc.topo)
		if err != nil {
			t.Fatal(err)
		}
		if got := AutoScale(topo, tc.capacity); got != tc.want {
			t.Errorf("AutoScale(%s, %v) = %d, want %d", tc.topo, tc.capacity, got, tc.want)
		}
	}
}

// TestAutoScaleOneGroup: a lab in one node group is scaled from
// DefaultGroupCapacityPPS and floored at MinGroupAutoScale, not
// MinAutoScale (no link of it crosses between loops).
func TestAutoScaleOneGroup(t *testing.T) {
	for _, tc := range []struct {
		topo     string
		capacity float64
		want     int
	}{
		// laptop: 377.5 Mpps ÷ 1.9 Mpps = 198.7.
		{"laptop", DefaultGroupCapacityPPS, 199},
		// incast: 53.09 Mpps ÷ 1.9 Mpps = 27.9, raised to the floor.
		{"incast", DefaultGroupCapacityPPS, MinGroupAutoScale},
		{"incast", 100_000, 531},
	} {
		topo, err := topologies.Builtin(tc.topo)
		if err != nil {
			t.Fatal(err)
		}
		if got := AutoScaleOneGroup(topo, tc.capacity); got != tc.want {
			t.Errorf("AutoScaleOneGroup(%s, %v) = %d, want %d", tc.topo, tc.capacity, got, tc.want)
		}
	}
}

// TestGroupNodes: node groups keep each rack's hosts and rack switch
// together and balance port counts; the laptop in two groups cuts only
// rack uplinks and front-end links.
func TestGroupNodes(t *testing.T) {
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	var procs []*nodeProc
	for _, n := range topo.Nodes {
		p := &nodeProc{node: n}
		p.cfg.Ports = make([]node.PortConfig, len(n.Ports))
		procs = append(procs, p)
	}
	groups := groupNodes(procs, 2)
	if len(groups) != 2 {
		t.Fatalf("%d groups, want 2", len(groups))
	}
	in := map[string]int{}
	load := []int{0, 0}
	for g, members := range groups {
		for _, p := range members {
			in[p.node.Name] = g
			load[g] += len(p.cfg.Ports)
		}
	}
	if len(in) != len(procs) {
		t.Errorf("%d of %d nodes grouped", len(in), len(procs))
	}
	for _, rack := range [][]string{{"host1", "host2", "rtsw1"}, {"host3", "host4", "rtsw2"}} {
		for _, name := range rack[1:] {
			if in[name] != in[rack[0]] {
				t.Errorf("%s and %s of one rack are in groups %d and %d", rack[0], name, in[rack[0]], in[name])
			}
		}
	}
	if in["rtsw1"] == in["rtsw2"] {
		t.Error("both racks in one group")
	}
	if d := load[0] - load[1]; d > 4 || d < -4 {
		t.Errorf("ports per group %v: unbalanced", load)
	}
	if got := groupNodes(procs, 20); len(got) > len(procs) {
		t.Errorf("20 groups asked of %d nodes: %d groups", len(procs), len(got))
	}
}

// TestLabShape: a lab on one loop (one group, links in memory) is scaled
// from the group's capacity and its switches keep the profile's PFC
// headroom (no stall allowance: LagBudget 0); every other shape is scaled
// per CPU and its switches size their headroom for nodeplan.LagBudget.
func TestLabShape(t *testing.T) {
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	rtsw := topo.Node("rtsw1")
	profile, err := fabric.NodeConfig(rtsw)
	if err != nil {
		t.Fatal(err)
	}
	perCPU := AutoScale(topo, DefaultCapacityPPSPerCPU*float64(runtime.NumCPU()))
	for _, tc := range []struct {
		name      string
		o         Options
		oneLoop   bool
		lag       time.Duration
		scale     int
		basisHint string
	}{
		{"a process per node", Options{}, false, nodeplan.LagBudget, perCPU, "DefaultCapacityPPSPerCPU"},
		{"one group", Options{NodeGroups: 1}, true, 0, 199, "DefaultGroupCapacityPPS"},
		{"one group, socket links", Options{NodeGroups: 1, SocketLinks: true}, false, nodeplan.LagBudget, perCPU, "DefaultCapacityPPSPerCPU"},
		{"two groups", Options{NodeGroups: 2}, false, nodeplan.LagBudget, perCPU, "DefaultCapacityPPSPerCPU"},
		{"capacity given", Options{CapacityPPS: 1e6}, false, nodeplan.LagBudget, AutoScale(topo, 1e6), "the capacity given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Topology = topo
			if got := tc.o.OneLoop(); got != tc.oneLoop {
				t.Errorf("OneLoop = %v, want %v", got, tc.oneLoop)
			}
			if got := tc.o.LagBudget(); got != tc.lag {
				t.Errorf("LagBudget = %v, want %v", got, tc.lag)
			}
			k, basis := tc.o.PickScale()
			if k != tc.scale || !strings.Contains(basis, tc.basisHint) {
				t.Errorf("PickScale = %d (%s), want %d (%s)", k, basis, tc.scale, tc.basisHint)
			}
			d := &deployer{opts: tc.o, t: topo, scale: k, seed: 1, root: "/run/rocelab", name: "shape"}
			cfg, _, err := d.processFor(rtsw, nil)
			if err != nil {
				t.Fatal(err)
			}
			if h := cfg.Switch.PFC.Headroom; tc.oneLoop != (h == profile.PFC.Headroom) {
				t.Errorf("rtsw1's headroom %d (the profile's %d): want the profile's exactly when the lab is on one loop", h, profile.PFC.Headroom)
			}
		})
	}
}
