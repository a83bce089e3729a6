package fabric

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/rocelab/rocelab/topologies"
)

// onDemand installs a switch's route to a destination prefix the first
// time Path asks the switch about it (SimOptions.RoutesOnDemand): the
// route eachRoute would install — the same equal-cost ports, in the same
// order — for the one prefix, so the switch's lookup and hash pick what
// they pick in a fully routed fabric.
type onDemand struct {
	g     *switchGraph
	index map[*topologies.Node]int32
	// owner is the switch owning each destination prefix (ownedPrefixes);
	// lens4 and lens6 the lengths of those prefixes, longest first.
	owner        map[netip.Prefix]int32
	lens4, lens6 []int
	dist         map[int32][]int32 // hop counts to a destination switch, by its index
	have         []map[netip.Prefix]bool
}

func newOnDemand(t *topologies.Topology) *onDemand {
	o := &onDemand{g: newSwitchGraph(t), index: map[*topologies.Node]int32{}, owner: map[netip.Prefix]int32{},
		dist: map[int32][]int32{}}
	o.have = make([]map[netip.Prefix]bool, len(o.g.switches))
	for i, n := range o.g.switches {
		o.index[n] = int32(i)
		for _, p := range ownedPrefixes(n) {
			o.owner[p] = int32(i)
			lens := &o.lens6
			if p.Addr().Is4() {
				lens = &o.lens4
			}
			if !slices.Contains(*lens, p.Bits()) {
				*lens = append(*lens, p.Bits())
				slices.Sort(*lens)
				slices.Reverse(*lens)
			}
		}
	}
	return o
}

// install gives switch node n its route toward dst, if dst is in a prefix
// some switch owns and n has none to it yet; install(n, dst) leaves n as
// it is when dst has no route there (NextHops then says so).
func (o *onDemand) install(f *SimFabric, n *topologies.Node, dst netip.Addr) error {
	dst = dst.Unmap()
	lens := o.lens6
	if dst.Is4() {
		lens = o.lens4
	}
	var pfx netip.Prefix
	d := int32(-1)
	for _, bits := range lens {
		p := netip.PrefixFrom(dst, bits).Masked()
		if i, ok := o.owner[p]; ok {
			pfx, d = p, i
			break
		}
	}
	si, ok := o.index[n]
	if d < 0 || !ok || o.have[si][pfx] {
		return nil
	}
	var ports []int
	if si == d {
		// A connected route (eachRoute's last loop); the switch's own
		// addresses are local (AddLocal), not routes.
		for i, pt := range n.Ports {
			if pt.Peer != nil && pt.Peer.Node.Kind != topologies.KindSwitch &&
				(pt.Peer.Addr.IsValid() && pt.Peer.Addr.Masked() == pfx || pt.Peer.Addr6.IsValid() && pt.Peer.Addr6.Masked() == pfx) {
				ports = append(ports, i)
			}
		}
	} else {
		dist := o.dist[d]
		if dist == nil {
			dist = make([]int32, len(o.g.switches))
			o.g.distancesTo(d, dist, nil)
			o.dist[d] = dist
		}
		if ds := dist[si]; ds > 0 {
			for _, l := range o.g.links[si] {
				if dist[l.peer] == ds-1 {
					ports = append(ports, int(l.port))
				}
			}
		}
	}
	if o.have[si] == nil {
		o.have[si] = map[netip.Prefix]bool{}
	}
	o.have[si][pfx] = true
	if len(ports) == 0 {
		return nil
	}
	if err := f.byName[n.Name].AddRoutes([]netip.Prefix{pfx}, ports...); err != nil {
		return fmt.Errorf("switch %s: install route %v: %w", n.Name, pfx, err)
	}
	return nil
}
