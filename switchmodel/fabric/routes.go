package fabric

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/topologies"
)

// Routes computes every switch's forwarding table from the addressing
// plan, by switch name. Each plane (BE, FE) is routed on its own: a switch
// gets routes to the destinations of its own plane only.
//
// Destinations: the link subnet (/31, and /127 with IPv6) of every host or
// storage NIC, which the switch it is cabled to owns as a connected route;
// each switch's loopback (/32, /128); and each switch's addresses on
// switch-to-switch links (/32, /128). Next hops are every port toward a
// neighbour switch one hop closer to the switch owning the destination:
// all equal-cost shortest paths, parallel links included, from a
// breadth-first search over the plane's switch graph from each switch.
// Traffic never transits a host. A switch has no route to its own
// addresses: they are local (Switch.AddLocal with ControlPlane's Addrs).
// Routes are sorted by prefix.
func Routes(t *topologies.Topology) map[string][]switchmodel.Route {
	out := map[string][]switchmodel.Route{}
	for _, n := range t.Nodes {
		if n.Kind == topologies.KindSwitch {
			out[n.Name] = nil
		}
	}
	eachRoute(t, func(s *topologies.Node, prefixes []netip.Prefix, ports []int) {
		for _, pfx := range prefixes {
			out[s.Name] = append(out[s.Name], switchmodel.Route{Prefix: pfx, Ports: ports})
		}
	})
	for name, rs := range out {
		slices.SortFunc(rs, func(a, b switchmodel.Route) int {
			return cmp.Or(a.Prefix.Addr().Compare(b.Prefix.Addr()), cmp.Compare(a.Prefix.Bits(), b.Prefix.Bits()))
		})
		out[name] = rs
	}
	return out
}

// eachRoute calls emit with every route of every switch (see Routes), in
// no particular order, without holding them all: a fabric of a thousand
// switches has millions. One call carries every prefix a destination owns,
// all over the same ports (which later calls may share).
func eachRoute(t *topologies.Topology, emit func(s *topologies.Node, prefixes []netip.Prefix, ports []int)) {
	g := newSwitchGraph(t)
	dist := make([]int32, len(g.switches))
	var queue []int32
	for di, d := range g.switches {
		g.distancesTo(int32(di), dist, queue[:0])
		dst := ownedPrefixes(d)
		if len(dst) > 0 {
			for si, s := range g.switches {
				ds := dist[si]
				if si == di || ds < 0 {
					continue // d itself, another plane, or unreachable
				}
				var ports []int
				for _, l := range g.links[si] {
					if dist[l.peer] == ds-1 {
						ports = append(ports, int(l.port))
					}
				}
				emit(s, dst, ports)
			}
		}
		// Connected routes of d's host and storage NICs.
		for i, pt := range d.Ports {
			if pt.Peer == nil || pt.Peer.Node.Kind == topologies.KindSwitch {
				continue
			}
			for _, a := range []netip.Prefix{pt.Peer.Addr, pt.Peer.Addr6} {
				if a.IsValid() {
					emit(d, []netip.Prefix{a.Masked()}, []int{i})
				}
			}
		}
	}
}

// switchGraph is the switch-to-switch cabling of a topology, switches by
// index: routing a fabric of hundreds of switches asks each pair which of
// its links lead closer, and maps keyed by node made that the build's
// longest step.
type switchGraph struct {
	switches []*topologies.Node
	plane    []uint8 // of each switch, numbered
	// links[i]: switch i's ports cabled to a switch, in port order.
	links [][]switchLink
}

type switchLink struct {
	port  int32 // index in the switch's Ports
	peer  int32 // the switch at the other end
	plane uint8 // the port's, numbered as switchGraph.plane
}

func newSwitchGraph(t *topologies.Topology) *switchGraph {
	g := &switchGraph{}
	index := map[*topologies.Node]int32{}
	for _, n := range t.Nodes {
		if n.Kind == topologies.KindSwitch {
			index[n] = int32(len(g.switches))
			g.switches = append(g.switches, n)
		}
	}
	planes := map[topologies.Plane]uint8{}
	number := func(p topologies.Plane) uint8 {
		n, ok := planes[p]
		if !ok {
			n = uint8(len(planes))
			planes[p] = n
		}
		return n
	}
	g.links = make([][]switchLink, len(g.switches))
	for i, n := range g.switches {
		g.plane = append(g.plane, number(n.Plane))
		for p, pt := range n.Ports {
			if pt.Peer == nil || pt.Peer.Node.Kind != topologies.KindSwitch {
				continue
			}
			g.links[i] = append(g.links[i], switchLink{port: int32(p), peer: index[pt.Peer.Node], plane: number(pt.Plane)})
		}
	}
	return g
}

// distancesTo sets dist[i] to the hop count from switch i to switch d over
// switch-to-switch links of d's plane, -1 where d cannot be reached
// (another plane). queue is scratch space.
func (g *switchGraph) distancesTo(d int32, dist []int32, queue []int32) {
	for i := range dist {
		dist[i] = -1
	}
	dist[d] = 0
	queue = append(queue, d)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, l := range g.links[n] {
			if l.plane == g.plane[d] && dist[l.peer] < 0 {
				dist[l.peer] = dist[n] + 1
				queue = append(queue, l.peer)
			}
		}
	}
}

// ownedPrefixes returns what other switches route to switch d: the link
// subnets of its host and storage NICs, its loopbacks, and its addresses
// on switch-to-switch links.
func ownedPrefixes(d *topologies.Node) []netip.Prefix {
	var out []netip.Prefix
	add := func(p netip.Prefix) {
		if p.IsValid() {
			out = append(out, p)
		}
	}
	for _, a := range []netip.Addr{d.Loopback, d.Loopback6} {
		if a.IsValid() {
			add(netip.PrefixFrom(a, a.BitLen()))
		}
	}
	for _, pt := range d.Ports {
		if pt.Peer == nil {
			continue
		}
		if pt.Peer.Node.Kind == topologies.KindSwitch {
			for _, a := range []netip.Prefix{pt.Addr, pt.Addr6} {
				if a.IsValid() {
					add(netip.PrefixFrom(a.Addr(), a.Addr().BitLen()))
				}
			}
			continue
		}
		add(pt.Peer.Addr.Masked())
		if pt.Peer.Addr6.IsValid() {
			add(pt.Peer.Addr6.Masked())
		}
	}
	return out
}

// countOwned counts the IPv4 and IPv6 prefixes the switches of t own:
// about the routes each switch's table ends up with.
func countOwned(t *topologies.Topology) (n4, n6 int) {
	for _, n := range t.Nodes {
		if n.Kind != topologies.KindSwitch {
			continue
		}
		for _, p := range ownedPrefixes(n) {
			if p.Addr().Is4() {
				n4++
			} else {
				n6++
			}
		}
	}
	return n4, n6
}
