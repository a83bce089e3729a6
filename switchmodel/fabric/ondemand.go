package fabric

import (
	"errors"
	"net/netip"
	"slices"

	"github.com/rocelab/rocelab/topologies"
)

// onDemand routes without forwarding tables (SimOptions.RoutesOnDemand):
// the route a switch's table would hold for a destination — the same
// equal-cost ports, in the same order, as eachRoute computes them — found
// when Path first needs it, and handed to the switch's own ECMP choice
// (switchmodel.Switch.NextHopsAmong).
type onDemand struct {
	g     *switchGraph
	index map[*topologies.Node]int32
	// owner is the switch owning each destination prefix (ownedPrefixes);
	// lens4 and lens6 the lengths of those prefixes, longest first.
	owner        map[netip.Prefix]int32
	lens4, lens6 []int
	// sets[d][s]: switch s's ports toward switch d (nil: not computed yet),
	// from dist[d], the hop counts to d.
	sets [][][]int
	dist [][]int32
	// The last destination looked up (a path asks every hop about one).
	lastDst netip.Addr
	lastPfx netip.Prefix
	lastD   int32
}

var errNoRoute = errors.New("no route")

func newOnDemand(t *topologies.Topology) *onDemand {
	o := &onDemand{g: newSwitchGraph(t), index: map[*topologies.Node]int32{}, owner: map[netip.Prefix]int32{}, lastD: -1}
	o.sets = make([][][]int, len(o.g.switches))
	o.dist = make([][]int32, len(o.g.switches))
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

// owning returns the prefix dst is in and the switch that owns it (-1:
// none).
func (o *onDemand) owning(dst netip.Addr) (netip.Prefix, int32) {
	dst = dst.Unmap()
	if dst == o.lastDst {
		return o.lastPfx, o.lastD
	}
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
	o.lastDst, o.lastPfx, o.lastD = dst, pfx, d
	return pfx, d
}

// ports returns switch n's route toward dst: its equal-cost egress ports,
// as its full table would list them; errNoRoute when it has none (or dst
// is one of its own addresses, which its table does not route).
func (o *onDemand) ports(n *topologies.Node, dst netip.Addr) ([]int, error) {
	pfx, d := o.owning(dst)
	si, ok := o.index[n]
	if d < 0 || !ok {
		return nil, errNoRoute
	}
	if si == d {
		// A connected route (eachRoute's last loop); the switch's own
		// addresses are local, not routes.
		for i, pt := range n.Ports {
			if pt.Peer != nil && pt.Peer.Node.Kind != topologies.KindSwitch &&
				(pt.Peer.Addr.IsValid() && pt.Peer.Addr.Masked() == pfx || pt.Peer.Addr6.IsValid() && pt.Peer.Addr6.Masked() == pfx) {
				return []int{i}, nil
			}
		}
		return nil, errNoRoute
	}
	sets := o.sets[d]
	if sets == nil {
		sets = make([][]int, len(o.g.switches))
		o.sets[d] = sets
	}
	if sets[si] == nil {
		dist := o.dist[d]
		if dist == nil {
			dist = make([]int32, len(o.g.switches))
			o.g.distancesTo(d, dist, nil)
			o.dist[d] = dist
		}
		set := []int{}
		if ds := dist[si]; ds > 0 {
			for _, l := range o.g.links[si] {
				if dist[l.peer] == ds-1 {
					set = append(set, int(l.port))
				}
			}
		}
		sets[si] = set
	}
	if len(sets[si]) == 0 {
		return nil, errNoRoute
	}
	return sets[si], nil
}
