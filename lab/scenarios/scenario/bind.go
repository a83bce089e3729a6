package scenario

import (
	"strings"

	"github.com/rocelab/rocelab/core/clock"
	"github.com/rocelab/rocelab/lab/scenarios/scenario/expect"
	"github.com/rocelab/rocelab/topologies"
)

// Env is what an expectation is checked against: the topology (node, port
// and class selectors, line_rate), the workloads (job selectors) and the
// run's duration (the duration constant).
type Env struct {
	Topology  *topologies.Topology
	Workloads []*Workload
	Duration  clock.Duration
}

// binding is an Env as the expression compiler's Binder.
type binding struct{ env Env }

// Constant implements Binder.
func (b binding) Constant(name string, off int, sels []expect.Selector) (expect.Quantity, error) {
	switch name {
	case "line_rate":
		return b.lineRate(off, sels)
	case "duration":
		if b.env.Duration <= 0 {
			return expect.Quantity{}, expect.Errorf(off, "duration: the scenario sets no duration")
		}
		return expect.Quantity{Value: b.env.Duration.Seconds(), Unit: expect.Time}, nil
	}
	return expect.Quantity{}, expect.Errorf(off, "unknown constant %s", name)
}

// lineRate is the slowest NIC link of the selection, or of every host's
// back-end NICs.
func (b binding) lineRate(off int, sels []expect.Selector) (expect.Quantity, error) {
	t := b.env.Topology
	if t == nil {
		return expect.Quantity{}, expect.Errorf(off, "line_rate: no topology")
	}
	var ports []*topologies.Port
	if len(sels) == 0 {
		for _, n := range t.Nodes {
			if n.Kind == topologies.KindHost {
				ports = append(ports, planePorts(n, topologies.BE)...)
			}
		}
	}
	for _, s := range sels {
		ps, err := b.selectPorts(s)
		if err != nil {
			return expect.Quantity{}, err
		}
		ports = append(ports, ps...)
	}
	var rate clock.Rate
	for _, p := range ports {
		if p.Link != nil && (rate == 0 || p.Rate < rate) {
			rate = p.Rate
		}
	}
	if rate == 0 {
		return expect.Quantity{}, expect.Errorf(off, "line_rate: no linked NIC port in the selection")
	}
	return expect.Quantity{Value: float64(rate), Unit: expect.Rate}, nil
}

// selectPorts resolves a line_rate selector to NIC ports.
func (b binding) selectPorts(s expect.Selector) ([]*topologies.Port, error) {
	switch s.Name {
	case expect.LabelJob:
		w, err := b.workload(s)
		if err != nil {
			return nil, err
		}
		return w.Ports(), nil
	case expect.LabelNode:
		n, err := b.node(s)
		if err != nil {
			return nil, err
		}
		if n.Kind == topologies.KindSwitch {
			return n.Ports, nil
		}
		return planePorts(n, topologies.BE), nil
	case expect.LabelNIC:
		p, err := b.nic(s)
		if err != nil {
			return nil, err
		}
		return []*topologies.Port{p}, nil
	}
	return nil, expect.Errorf(s.NameOff, "label %s: line_rate takes job, node or nic%s", s.Name, expect.DidYouMean(s.Name, []string{"job", "node", "nic"}))
}

func (b binding) workload(s expect.Selector) (*Workload, error) {
	var names []string
	for _, w := range b.env.Workloads {
		if w.Name == s.Value {
			return w, nil
		}
		names = append(names, w.Name)
	}
	if len(names) == 0 {
		return nil, expect.Errorf(s.ValueOff, "label job: no workload %q (the scenario has no workloads)", s.Value)
	}
	return nil, expect.Errorf(s.ValueOff, "label job: no workload %q%s", s.Value, suggest(s.Value, names))
}

func (b binding) node(s expect.Selector) (*topologies.Node, error) {
	if n := b.env.Topology.Node(s.Value); n != nil {
		return n, nil
	}
	return nil, expect.Errorf(s.ValueOff, "label %s: no node %q in topology %s%s", s.Name, s.Value, b.env.Topology.Name, suggestNode(b.env.Topology, s.Value))
}

// nic resolves host:port (a NIC of a host or storage node).
func (b binding) nic(s expect.Selector) (*topologies.Port, error) {
	nodeName, portName, ok := strings.Cut(s.Value, ":")
	if !ok {
		return nil, expect.Errorf(s.ValueOff, "label %s: want node:port, e.g. host1:gpu0, got %q", s.Name, s.Value)
	}
	n, err := b.node(expect.Selector{Name: s.Name, Value: nodeName, ValueOff: s.ValueOff})
	if err != nil {
		return nil, err
	}
	p, perr := port(n, portName)
	if perr != nil {
		return nil, expect.Errorf(s.ValueOff+len(nodeName)+1, "label %s: %v", s.Name, perr)
	}
	return p, nil
}
