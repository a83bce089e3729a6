package topologies_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rocelab/rocelab/topologies"
)

// TestResolveTarget: every form of the one fault-target grammar, on the
// laptop topology (rtsw1 has two parallel links to ctsw1: p5, p6).
func TestResolveTarget(t *testing.T) {
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		target string
		want   []string // directions, in order
		node   string   // a whole-node target's node
		link   bool
	}{
		{"host1:gpu0", []string{"host1:gpu0->rtsw1:p1"}, "", false},
		{"rtsw1:p5", []string{"rtsw1:p5->ctsw1:p1"}, "", false},
		{"host2", []string{"host2:gpu0->rtsw1:p3", "host2:gpu1->rtsw1:p4", "host2:fe0->rsw1:p2"}, "host2", false},
		{"rtsw1 to ctsw1", []string{"rtsw1:p5->ctsw1:p1", "rtsw1:p6->ctsw1:p2"}, "", true},
		{"rtsw1->ctsw1", []string{"rtsw1:p5->ctsw1:p1", "rtsw1:p6->ctsw1:p2"}, "", true},
		{" rtsw1 -> ctsw1 ", []string{"rtsw1:p5->ctsw1:p1", "rtsw1:p6->ctsw1:p2"}, "", true},
		{"rtsw1:p6 to ctsw1", []string{"rtsw1:p6->ctsw1:p2"}, "", true},
		{"rtsw1 to ctsw1:p1", []string{"rtsw1:p5->ctsw1:p1"}, "", true},
		{"host1:gpu0 and rtsw1", []string{"host1:gpu0->rtsw1:p1", "rtsw1:p1->host1:gpu0"}, "", true},
		{"host1:gpu0<->rtsw1", []string{"host1:gpu0->rtsw1:p1", "rtsw1:p1->host1:gpu0"}, "", true},
		{"host1:gpu0--rtsw1", []string{"host1:gpu0->rtsw1:p1", "rtsw1:p1->host1:gpu0"}, "", true},
	} {
		t.Run(c.target, func(t *testing.T) {
			tg, err := topo.ResolveTarget(c.target)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range tg.Directions {
				got = append(got, d.String())
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("directions %v, want %v", got, c.want)
			}
			if tg.Link != c.link || (tg.Node == nil) != (c.node == "") || (tg.Node != nil && tg.Node.Name != c.node) {
				t.Errorf("link %v node %v, want %v %q", tg.Link, tg.Node, c.link, c.node)
			}
		})
	}
}

func TestResolveTargetErrors(t *testing.T) {
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		target, want string
		offset       int
	}{
		{"ctsw3", `no node "ctsw3" in topology laptop (did you mean "ctsw1"?)`, 0},
		{"host1:gpu7", `host1 has no port "gpu7" (ports: gpu0, gpu1, fe0)`, 6},
		{"rtsw1 to rtsw2", "no link between rtsw1 and rtsw2", 0},
		{"rtsw1->ctsw9", `no node "ctsw9"`, 7},
		{"rtsw1 to  ctsw9", `no node "ctsw9"`, 10},
		{"host1:gpu0 to ctsw1", "no link between host1:gpu0 and ctsw1", 0},
		{" to ctsw1", "empty target end", 0},
		{"", "empty target end", 0},
	} {
		_, err := topo.ResolveTarget(c.target)
		var te *topologies.TargetError
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &te) || te.Offset != c.offset {
			t.Errorf("%q: error %v (offset %v), want %q at %d", c.target, err, te, c.want, c.offset)
		}
	}
}
