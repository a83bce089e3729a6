package placement_test

import (
	"strings"
	"testing"

	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/topologies/placement"
)

func load(t *testing.T, name string) *topologies.Topology {
	t.Helper()
	top, err := topologies.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

func machines(names ...string) []placement.Machine {
	var ms []placement.Machine
	for _, n := range names {
		ms = append(ms, placement.Machine{Name: n})
	}
	return ms
}

// checkRacks fails if a rack's nodes run on different machines.
func checkRacks(t *testing.T, top *topologies.Topology, p *placement.Placement) {
	t.Helper()
	rackOn := map[[2]int]string{}
	for _, n := range top.Nodes {
		m, ok := p.Of[n.Name]
		if !ok {
			t.Fatalf("node %s not placed", n.Name)
		}
		if n.Rack == 0 {
			continue
		}
		k := [2]int{n.Zone, n.Rack}
		if prev, ok := rackOn[k]; ok && prev != m {
			t.Errorf("zone %d rack %d on %s and %s", n.Zone, n.Rack, prev, m)
		}
		rackOn[k] = m
	}
}

func TestLaptopOnTwo(t *testing.T) {
	top := load(t, "laptop")
	p, err := placement.Place(top, "lab1", machines("m1", "m2"))
	if err != nil {
		t.Fatal(err)
	}
	checkRacks(t, top, p)
	if p.Of["host1"] == p.Of["host3"] {
		t.Errorf("both racks on %s", p.Of["host1"])
	}
	var be, fe int
	vnis := map[uint32]bool{}
	for _, c := range p.Crossings {
		l := top.Links[c.Link-1]
		if c.A != p.Of[l.A.Node.Name] || c.B != p.Of[l.B.Node.Name] || c.A == c.B {
			t.Errorf("crossing %+v: ends on %s and %s", c, p.Of[l.A.Node.Name], p.Of[l.B.Node.Name])
		}
		if l.A.Plane == topologies.BE {
			be++
			// Only leaf–spine links cross on the back end.
			if l.A.Node.Kind != topologies.KindSwitch || l.B.Node.Kind != topologies.KindSwitch {
				t.Errorf("back-end crossing %s is not between switches", c.Name)
			}
		} else {
			fe++
		}
		if vnis[c.VNI] || c.VNI < 1<<12 || c.VNI >= 1<<24 {
			t.Errorf("VNI %d repeated or out of range", c.VNI)
		}
		vnis[c.VNI] = true
	}
	// Each rack keeps one spine: rtsw1's two links to the far spine cross,
	// and rtsw2's to the near one; the FE switch sits with one rack.
	if be != 4 || fe != 2 {
		t.Errorf("crossings: %d back-end, %d front-end, want 4 and 2: %+v", be, fe, p.Crossings)
	}
	if p.Of["st1"] != p.Of["rsw1"] {
		t.Errorf("storage on %s, its only switch on %s", p.Of["st1"], p.Of["rsw1"])
	}
	if lo, hi := p.Load["m1"], p.Load["m2"]; lo > 1.3*hi || hi > 1.3*lo {
		t.Errorf("loads %v not balanced", p.Load)
	}
}

func TestAIZoneBalanced(t *testing.T) {
	top := load(t, "ai-zone-64")
	for _, n := range []int{1, 2, 3} {
		names := []string{"a", "b", "c"}[:n]
		p, err := placement.Place(top, "z", machines(names...))
		if err != nil {
			t.Fatal(err)
		}
		checkRacks(t, top, p)
		var total float64
		for _, m := range names {
			total += p.Load[m]
		}
		for _, m := range names {
			if share := total / float64(n); p.Load[m] > share*(1+placement.Slack) {
				t.Errorf("%d machines: %s carries %.0f, share %.0f", n, m, p.Load[m], share)
			}
		}
		if n == 1 && len(p.Crossings) != 0 {
			t.Errorf("one machine: %d crossings", len(p.Crossings))
		}
		if n > 1 {
			for _, c := range p.Crossings {
				l := top.Links[c.Link-1]
				if l.A.Node.Kind != topologies.KindSwitch && l.A.Plane == topologies.BE {
					t.Errorf("%d machines: a host's back-end link crosses: %s", n, c.Name)
				}
			}
			t.Logf("%d machines: %d crossings of %d links, %.0f of %.0f Gb/s", n, len(p.Crossings), len(top.Links), p.CutRate(top)/1e9, total/2e9)
		}
	}
}

func TestPins(t *testing.T) {
	top := load(t, "laptop")
	top.Node("host3").Machine = "m1" // pulls rack 2 to m1
	top.Node("ctsw2").Machine = "m2"
	p, err := placement.Place(top, "lab1", machines("m1", "m2"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Of["host4"] != "m1" || p.Of["rtsw2"] != "m1" || p.Of["ctsw2"] != "m2" {
		t.Errorf("pins not kept: %v", p.Of)
	}
	bad := []struct {
		name string
		edit func(*topologies.Topology)
		want string
	}{
		{"unknown machine", func(t *topologies.Topology) { t.Node("host1").Machine = "m9" }, "not one of the lab's (m1, m2)"},
		{"rack split", func(t *topologies.Topology) { t.Node("host1").Machine = "m1"; t.Node("rtsw1").Machine = "m2" }, "pinned to two machines"},
	}
	for _, c := range bad {
		top := load(t, "laptop")
		c.edit(top)
		if _, err := placement.Place(top, "lab1", machines("m1", "m2")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Place = %v, want %q", c.name, err, c.want)
		}
	}
	for _, ms := range [][]placement.Machine{nil, machines("a", "a"), {{Name: ""}}, {{Name: "a", Weight: -1}}} {
		if _, err := placement.Place(top, "lab1", ms); err == nil {
			t.Errorf("Place(%v) accepted", ms)
		}
	}
}

func TestVNIBase(t *testing.T) {
	a, b := placement.VNIBase("lab1"), placement.VNIBase("lab2")
	if a == b || a%(1<<12) != 0 || a < 1<<12 || a+placement.MaxLinks >= 1<<24 {
		t.Errorf("VNIBase = %d, %d", a, b)
	}
}
