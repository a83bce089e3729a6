package graph

import (
	"testing"

	"github.com/rocelab/rocelab/topologies"
)

// TestLayout: a full layout of the laptop topology has one box per node,
// inside the drawing, and every link between two placed boxes, lower tier
// first.
func TestLayout(t *testing.T) {
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	g := NewLayout(topo, Options{Full: true})
	if len(g.Boxes) != len(topo.Nodes) {
		t.Fatalf("%d boxes for %d nodes", len(g.Boxes), len(topo.Nodes))
	}
	byID := map[string]Box{}
	for _, b := range g.Boxes {
		if len(b.Nodes) != 1 || b.Label != b.Nodes[0] {
			t.Errorf("box %s holds %v, label %q", b.ID, b.Nodes, b.Label)
		}
		if b.X-b.W/2 < 0 || b.X+b.W/2 > g.Width || b.Y-b.H/2 < 0 || b.Y+b.H/2 > g.Height {
			t.Errorf("box %s at (%g,%g) outside %gx%g", b.ID, b.X, b.Y, g.Width, g.Height)
		}
		byID[b.ID] = b
	}
	if len(g.Links) != len(topo.Links) {
		t.Fatalf("%d links, want %d", len(g.Links), len(topo.Links))
	}
	for _, l := range g.Links {
		a, okA := byID[l.ABox]
		b, okB := byID[l.BBox]
		if !okA || !okB {
			t.Errorf("link %s:%s-%s:%s has no boxes (%q, %q)", l.A, l.APort, l.B, l.BPort, l.ABox, l.BBox)
			continue
		}
		if a.Y < b.Y && a.Kind == topologies.KindSwitch && b.Kind == topologies.KindHost {
			t.Errorf("link %s-%s: lower end drawn above the upper", l.A, l.B)
		}
	}
	// Compact drawings of big zones group hosts but still place every link's
	// switch end.
	big, err := topologies.Builtin("ai-zone-64")
	if err != nil {
		t.Fatal(err)
	}
	c := NewLayout(big, Options{})
	if len(c.Boxes) >= len(big.Nodes) {
		t.Errorf("compact layout of %d nodes has %d boxes", len(big.Nodes), len(c.Boxes))
	}
}
