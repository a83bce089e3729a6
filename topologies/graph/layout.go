package graph

import (
	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/topologies"
)

// Layout is the geometry of Write's SVG drawing, for live views
// that draw the same picture and colour it: boxes in SVG user units (the
// box's centre and size) and every topology link between the boxes that
// hold its ends.
type Layout struct {
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Boxes  []Box   `json:"boxes"`
	Links  []Link  `json:"links"`
	// Ports names every node's ports in index order (telemetry numbers
	// ports from 0 in this order).
	Ports map[string][]string `json:"ports"`
}

// Box is one drawn box: one node, or (compact drawings) a group.
type Box struct {
	ID    string           `json:"id"`
	Label string           `json:"label"`
	Kind  topologies.Kind  `json:"kind"`
	Role  topologies.Role  `json:"role,omitempty"`
	Plane topologies.Plane `json:"plane,omitempty"`
	Nodes []string         `json:"nodes"`
	X     float64          `json:"x"`
	Y     float64          `json:"y"`
	W     float64          `json:"w"`
	H     float64          `json:"h"`
}

// Link is one cable: node A's port to node B's port, A in the lower
// tier as drawn, with the boxes they are drawn in ("" for an elided box).
type Link struct {
	A     string           `json:"a"`
	APort string           `json:"a_port"`
	B     string           `json:"b"`
	BPort string           `json:"b_port"`
	ABox  string           `json:"a_box"`
	BBox  string           `json:"b_box"`
	Plane topologies.Plane `json:"plane"`
	Rate  clock.Rate       `json:"rate_bps"`
}

// NewLayout returns the drawing's geometry (opts as for Write; Full draws
// one box per node).
func NewLayout(t *topologies.Topology, opts Options) Layout {
	g := buildGraph(t, opts)
	L := g.layout()
	out := Layout{Width: L.width, Height: L.height, Ports: map[string][]string{}}
	for _, n := range t.Nodes {
		for _, p := range n.Ports {
			out.Ports[n.Name] = append(out.Ports[n.Name], p.Name)
		}
	}
	boxOf := map[string]*gbox{}
	for _, b := range g.boxes {
		lb := Box{ID: b.id, Label: b.label(), Kind: b.kind, Role: b.role, Plane: b.plane,
			X: b.x, Y: b.y, W: b.w, H: b.h}
		for _, m := range b.members {
			lb.Nodes = append(lb.Nodes, m.Name)
			boxOf[m.Name] = b
		}
		out.Boxes = append(out.Boxes, lb)
	}
	for _, l := range t.Links {
		a, b := l.A, l.B
		ba, bb := boxOf[a.Node.Name], boxOf[b.Node.Name]
		if ba != nil && bb != nil && ba.tier > bb.tier {
			a, b, ba, bb = b, a, bb, ba
		}
		ll := Link{A: a.Node.Name, APort: a.Name, B: b.Node.Name, BPort: b.Name, Plane: l.Plane, Rate: l.Rate}
		if ba != nil {
			ll.ABox = ba.id
		}
		if bb != nil {
			ll.BBox = bb.id
		}
		out.Links = append(out.Links, ll)
	}
	return out
}
