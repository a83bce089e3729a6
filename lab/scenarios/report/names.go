package report

import (
	"slices"
	"strconv"

	"github.com/rocelab/rocelab/core/telemetry"
	"github.com/rocelab/rocelab/lab/simulation/simlab"
)

// The switch model labels a port by its position on the switch
// (port="0" is the switch's first port in the topology, which on sw2 of
// example 01 is p5); expectations, stats, faults and /metrics name it as
// the topology does. A report names it the same way in every file:
// namePorts rewrites the port label of every switch sample and series
// to the topology's port name before anything is written.

// portNamer maps (switch, port position) to the topology's port name.
type portNamer map[string][]string

// newPortNamer returns the namer of d's topology (empty without one).
func newPortNamer(d Data) portNamer {
	out := portNamer{}
	if d.Scenario == nil || d.Scenario.Topology == nil {
		return out
	}
	for _, n := range d.Scenario.Topology.Nodes {
		names := make([]string, len(n.Ports))
		for _, p := range n.Ports {
			if i := p.Index - 1; i >= 0 && i < len(names) {
				names[i] = p.Name
			}
		}
		out[n.Name] = names
	}
	return out
}

// name returns labels with port's position replaced by its name, or nil
// when there is nothing to rename (no port label, a label that is not a
// position of a port of node, or a node the topology does not have).
func (pn portNamer) name(labels []telemetry.Label) []telemetry.Label {
	node, port, at := "", "", -1
	for i, l := range labels {
		switch l.Name {
		case "node":
			node = l.Value
		case "port":
			port, at = l.Value, i
		}
	}
	if at < 0 {
		return nil
	}
	names := pn[node]
	i, err := strconv.Atoi(port)
	if err != nil || i < 0 || i >= len(names) || names[i] == "" {
		return nil
	}
	out := slices.Clone(labels)
	out[at].Value = names[i]
	return out
}

// namePorts returns d with every switch port labelled by its topology
// name, in Series and Final; d's own slices are not changed.
func namePorts(d Data) Data {
	pn := newPortNamer(d)
	if len(pn) == 0 {
		return d
	}
	series := make([]simlab.Series, len(d.Series))
	for i, s := range d.Series {
		if l := pn.name(s.Labels); l != nil {
			s.Labels = l
		}
		series[i] = s
	}
	final := make([]telemetry.Sample, len(d.Final))
	for i, s := range d.Final {
		if l := pn.name(s.Labels); l != nil {
			s.Labels = l
		}
		final[i] = s
	}
	d.Series, d.Final = series, final
	return d
}

// portName names a switch port (already named by namePorts) with its
// node and the node at the other end: "sw1:p5→sw2".
func (d Data) portName(node, port string) string {
	if d.Scenario != nil && d.Scenario.Topology != nil {
		if n := d.Scenario.Topology.Node(node); n != nil {
			if p := n.Port(port); p != nil && p.Peer != nil {
				return node + ":" + p.Name + "→" + p.Peer.Node.Name
			}
		}
	}
	return node + ":" + port
}
