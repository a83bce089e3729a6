// Package placement splits a lab over machines: which machine runs each
// node, and which links cross between machines (and so become VXLAN
// tunnels, each with its own VNI).
//
// A rack — a leaf and the hosts cabled to it, the nodes of one (zone,
// rack) — always stays on one machine: its links carry the most frames
// and are the shortest. Racks go to machines largest first, each to the
// machine with the most room left against its share (machines weigh by
// capacity); then every node outside a rack (spines, front-end switches,
// storage) goes, largest first, where most of its link rate already is,
// as long as that machine stays within Slack of its share. A last pass
// moves such nodes while a move lowers the rate that crosses machines.
// What crosses is then mostly leaf–spine links: a small cut weighted by
// link rate (every link is dilated by the same k, so rate ÷ k orders
// links as rate does). A node's machine key pins it, and its rack.
package placement

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/rocelab/rocelab/topologies"
)

// Slack is how far above its share of the load a machine may get when a
// node outside a rack follows its links there.
const Slack = 0.25

// Machine is one machine a lab may use.
type Machine struct {
	Name string `json:"name"`
	// Weight is the machine's capacity relative to the others (0 = 1).
	Weight float64 `json:"weight,omitempty"`
}

// Placement is where a lab's nodes run.
type Placement struct {
	// Machines in the order given.
	Machines []string `json:"machines"`
	// Of maps a node to its machine.
	Of map[string]string `json:"of"`
	// Crossings are the links whose ends run on different machines, in
	// topology order.
	Crossings []Crossing `json:"crossings,omitempty"`
	// Load is each machine's share of the lab's link rate, bits/s (a
	// node's load: the rates of its links).
	Load map[string]float64 `json:"load"`
}

// Crossing is a link between machines.
type Crossing struct {
	// Link is the topology's link index (1-based, topologies.Link.Index).
	Link int `json:"link"`
	// Name is "a:p -- b:q".
	Name string `json:"name"`
	// A and B are the machines of the link's A and B ends.
	A string `json:"a"`
	B string `json:"b"`
	// VNI is the link's VXLAN network identifier.
	VNI uint32 `json:"vni"`
}

// unit is what moves as one: a rack, or a node outside any rack.
type unit struct {
	key   string
	nodes []*topologies.Node
	load  float64
	pin   string
	rack  bool
}

// Place places t, whose nodes a lab named lab runs, on machines. One
// machine takes everything. VNIs are lab-specific (VNIBase) so that two
// labs can share machines.
func Place(t *topologies.Topology, lab string, machines []Machine) (*Placement, error) {
	if len(machines) == 0 {
		return nil, errors.New("place: no machines")
	}
	share := map[string]float64{}
	var weights float64
	p := &Placement{Of: map[string]string{}, Load: map[string]float64{}}
	for _, m := range machines {
		if m.Name == "" {
			return nil, errors.New("place: a machine without a name")
		}
		if _, dup := share[m.Name]; dup {
			return nil, fmt.Errorf("place: machine %s given twice", m.Name)
		}
		if m.Weight < 0 {
			return nil, fmt.Errorf("place: machine %s: negative weight %g", m.Name, m.Weight)
		}
		w := m.Weight
		if w == 0 {
			w = 1
		}
		share[m.Name] = w
		weights += w
		p.Machines = append(p.Machines, m.Name)
		p.Load[m.Name] = 0
	}
	if len(machines) > 1 && len(t.Links) > MaxLinks {
		return nil, fmt.Errorf("place: %d links: a lab spanning machines has at most %d (its VNI block)", len(t.Links), MaxLinks)
	}
	units, err := unitsOf(t, share)
	if err != nil {
		return nil, err
	}
	var total float64
	for _, u := range units {
		total += u.load
	}
	for m := range share {
		share[m] = total * share[m] / weights
	}
	put := func(u *unit, m string) {
		for _, n := range u.nodes {
			p.Of[n.Name] = m
		}
		p.Load[m] += u.load
	}
	// Pinned units first, then racks by size, then the rest by size.
	slices.SortStableFunc(units, func(a, b *unit) int {
		if c := cmp.Compare(rank(a), rank(b)); c != 0 {
			return c
		}
		return cmp.Compare(b.load, a.load)
	})
	for _, u := range units {
		switch {
		case u.pin != "":
			put(u, u.pin)
		case u.rack:
			put(u, p.roomiest(share))
		default:
			put(u, p.nearest(u, share))
		}
	}
	p.improve(units, share)
	p.crossings(t, lab)
	return p, nil
}

// rank orders units for placing: pinned, racks, the rest.
func rank(u *unit) int {
	switch {
	case u.pin != "":
		return 0
	case u.rack:
		return 1
	}
	return 2
}

// unitsOf groups t's nodes into racks and single nodes, with their loads
// and pins (a rack's pins must agree, and name machines given).
func unitsOf(t *topologies.Topology, machines map[string]float64) ([]*unit, error) {
	byKey := map[string]*unit{}
	var units []*unit
	for _, n := range t.Nodes {
		key, rack := "node "+n.Name, n.Rack > 0
		if rack {
			key = fmt.Sprintf("zone %d rack %d", n.Zone, n.Rack)
		}
		u := byKey[key]
		if u == nil {
			u = &unit{key: key, rack: rack}
			byKey[key] = u
			units = append(units, u)
		}
		u.nodes = append(u.nodes, n)
		for _, pt := range n.Ports {
			if pt.Link != nil {
				u.load += float64(pt.Link.Rate)
			}
		}
		if n.Machine == "" {
			continue
		}
		if _, ok := machines[n.Machine]; !ok {
			return nil, fmt.Errorf("place: node %s is pinned to machine %s, which is not one of the lab's (%s)", n.Name, n.Machine, strings.Join(slices.Sorted(mapKeys(machines)), ", "))
		}
		if u.pin != "" && u.pin != n.Machine {
			return nil, fmt.Errorf("place: %s is pinned to two machines, %s and %s (node %s): a rack runs on one machine", u.key, u.pin, n.Machine, n.Name)
		}
		u.pin = n.Machine
	}
	return units, nil
}

func mapKeys(m map[string]float64) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// roomiest is the machine with the most room left against its share (the
// first such, in the order given).
func (p *Placement) roomiest(share map[string]float64) string {
	best, room := "", 0.0
	for _, m := range p.Machines {
		if r := share[m] - p.Load[m]; best == "" || r > room {
			best, room = m, r
		}
	}
	return best
}

// nearest is the machine where most of u's link rate already runs, among
// those that stay within Slack of their share with u (of equals, the
// roomiest); else the roomiest.
func (p *Placement) nearest(u *unit, share map[string]float64) string {
	near := p.rateTo(u)
	best, most := "", -1.0
	for _, m := range p.Machines {
		if p.Load[m]+u.load > share[m]*(1+Slack) {
			continue
		}
		// Equal rates go to the machine with more room.
		if near[m] > most || near[m] == most && share[m]-p.Load[m] > share[best]-p.Load[best] {
			best, most = m, near[m]
		}
	}
	if best == "" || most == 0 {
		return p.roomiest(share)
	}
	return best
}

// rateTo sums the rate of u's links to each machine's placed nodes.
func (p *Placement) rateTo(u *unit) map[string]float64 {
	near := map[string]float64{}
	for _, n := range u.nodes {
		for _, pt := range n.Ports {
			if pt.Peer == nil || pt.Link == nil {
				continue
			}
			if m, ok := p.Of[pt.Peer.Node.Name]; ok {
				near[m] += float64(pt.Link.Rate)
			}
		}
	}
	return near
}

// improve moves unpinned nodes outside racks, one at a time, while a move
// lowers the rate crossing machines and keeps the target within Slack.
func (p *Placement) improve(units []*unit, share map[string]float64) {
	for pass := 0; pass < 8; pass++ {
		moved := false
		for _, u := range units {
			if u.rack || u.pin != "" {
				continue
			}
			from := p.Of[u.nodes[0].Name]
			near := p.rateTo(u)
			for _, m := range p.Machines {
				if m == from || near[m] <= near[from] || p.Load[m]+u.load > share[m]*(1+Slack) {
					continue
				}
				p.Load[from] -= u.load
				p.Load[m] += u.load
				for _, n := range u.nodes {
					p.Of[n.Name] = m
				}
				from, moved = m, true
			}
		}
		if !moved {
			return
		}
	}
}

// crossings lists the links between machines, with their VNIs.
func (p *Placement) crossings(t *topologies.Topology, lab string) {
	base := VNIBase(lab)
	for _, l := range t.Links {
		a, b := p.Of[l.A.Node.Name], p.Of[l.B.Node.Name]
		if a == b {
			continue
		}
		p.Crossings = append(p.Crossings, Crossing{Link: l.Index, Name: l.AName + " -- " + l.BName, A: a, B: b, VNI: base + uint32(l.Index)})
	}
}

// MaxLinks is how many links a lab may have for its VNIs to stay its own:
// a lab's VNIs are VNIBase(lab) + the link's index.
const MaxLinks = 1<<12 - 1

// VNIBase is the first VNI of lab's block of MaxLinks+1: one of 4,095
// blocks chosen by a hash of the name (two labs on the same machines
// collide with probability 1/4,095; the kernel then refuses the second
// lab's tunnel, and its deploy fails and rolls back).
func VNIBase(lab string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(lab))
	return (h.Sum32()%(1<<12-1) + 1) << 12
}

// Crossing returns the crossing of link index i, if the link crosses.
func (p *Placement) Crossing(i int) (Crossing, bool) {
	for _, c := range p.Crossings {
		if c.Link == i {
			return c, true
		}
	}
	return Crossing{}, false
}

// Nodes returns the nodes of t that machine m runs, in topology order.
func (p *Placement) Nodes(t *topologies.Topology, m string) []*topologies.Node {
	var out []*topologies.Node
	for _, n := range t.Nodes {
		if p.Of[n.Name] == m {
			out = append(out, n)
		}
	}
	return out
}

// CutRate is the total rate of the links that cross machines, bits/s.
func (p *Placement) CutRate(t *topologies.Topology) float64 {
	var r float64
	for _, c := range p.Crossings {
		r += float64(t.Links[c.Link-1].Rate)
	}
	return r
}
