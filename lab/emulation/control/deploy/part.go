package deploy

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/lab/emulation/datapath/links"
	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/topologies/placement"
)

// Part is one machine's share of a lab that spans machines (see
// docs/multi-machine.md): the deploy on that machine creates only the
// nodes the placement puts there, the links between them as veth pairs,
// and its end of every link to another machine as a VXLAN tunnel
// (links.Tunnel) toward that machine's underlay address. The nodes'
// configs come from the whole topology, so that every switch routes about
// the whole lab.
type Part struct {
	// Machine is this machine's name in Placement.
	Machine   string               `json:"machine"`
	Placement *placement.Placement `json:"placement"`
	// Underlay is each machine's address on the network between them.
	Underlay map[string]netip.Addr `json:"underlay"`
	// UnderlayNS is the namespace whose routes reach the other machines
	// ("" = the deploy's own); Device the interface there ("" = by route).
	UnderlayNS string `json:"underlay_netns,omitempty"`
	Device     string `json:"device,omitempty"`
	// Port is the VXLAN UDP port (0 = links.DefaultVXLANPort).
	Port uint16 `json:"port,omitempty"`
}

// check validates p against t.
func (p *Part) check(t *topologies.Topology) error {
	if p.Placement == nil {
		return errors.New("part: no placement")
	}
	known := false
	for _, m := range p.Placement.Machines {
		known = known || m == p.Machine
	}
	if !known {
		return fmt.Errorf("part: machine %q is not one of the placement's %v", p.Machine, p.Placement.Machines)
	}
	for _, n := range t.Nodes {
		if _, ok := p.Placement.Of[n.Name]; !ok {
			return fmt.Errorf("part: node %s is not placed (a placement of another topology?)", n.Name)
		}
	}
	for _, c := range p.Placement.Crossings {
		if c.A != p.Machine && c.B != p.Machine {
			continue
		}
		for _, m := range []string{c.A, c.B} {
			if !p.Underlay[m].IsValid() {
				return fmt.Errorf("part: link %s crosses to machine %s, which has no underlay address", c.Name, m)
			}
		}
	}
	return nil
}

// here reports whether this deploy creates node n.
func (d *deployer) here(n *topologies.Node) bool {
	return d.part == nil || d.part.Placement.Of[n.Name] == d.part.Machine
}

// localNodes and localLinks are the nodes this deploy creates and the
// links with at least one end among them, in topology order.
func (d *deployer) localNodes() []*topologies.Node {
	var out []*topologies.Node
	for _, n := range d.t.Nodes {
		if d.here(n) {
			out = append(out, n)
		}
	}
	return out
}

func (d *deployer) localLinks() []*topologies.Link {
	var out []*topologies.Link
	for _, l := range d.t.Links {
		if d.here(l.A.Node) || d.here(l.B.Node) {
			out = append(out, l)
		}
	}
	return out
}

// tunnel returns this machine's end of link l when l crosses machines.
func (d *deployer) tunnel(l *topologies.Link) (links.Tunnel, bool) {
	if d.part == nil {
		return links.Tunnel{}, false
	}
	c, ok := d.part.Placement.Crossing(l.Index)
	if !ok {
		return links.Tunnel{}, false
	}
	p, remote := l.A, c.B
	if !d.here(l.A.Node) {
		p, remote = l.B, c.A
	}
	return links.Tunnel{
		End: d.end(p), Underlay: d.part.UnderlayNS, Device: d.part.Device, VNI: c.VNI,
		Local: d.part.Underlay[d.part.Machine], Remote: d.part.Underlay[remote], Port: d.part.Port,
		MTU: l.MTU + LinkOverhead,
	}, true
}
