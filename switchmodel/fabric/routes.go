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
// addresses (the model has no local delivery). Routes are sorted by
// prefix.
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
	var switches []*topologies.Node
	for _, n := range t.Nodes {
		if n.Kind == topologies.KindSwitch {
			switches = append(switches, n)
		}
	}
	for _, d := range switches {
		dist := distancesTo(d)
		dst := ownedPrefixes(d)
		for _, s := range switches {
			if s == d {
				continue
			}
			ds, ok := dist[s]
			if !ok {
				continue // another plane, or unreachable
			}
			var ports []int
			for i, pt := range s.Ports {
				if pt.Peer != nil && pt.Peer.Node.Kind == topologies.KindSwitch {
					if dn, ok := dist[pt.Peer.Node]; ok && dn == ds-1 {
						ports = append(ports, i)
					}
				}
			}
			if len(dst) > 0 {
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

// distancesTo returns the hop count from every switch that can reach d
// (d's plane) to d, over switch-to-switch links.
func distancesTo(d *topologies.Node) map[*topologies.Node]int {
	dist := map[*topologies.Node]int{d: 0}
	queue := []*topologies.Node{d}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, pt := range n.Ports {
			if pt.Peer == nil || pt.Plane != d.Plane {
				continue
			}
			m := pt.Peer.Node
			if m.Kind != topologies.KindSwitch {
				continue
			}
			if _, seen := dist[m]; !seen {
				dist[m] = dist[n] + 1
				queue = append(queue, m)
			}
		}
	}
	return dist
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
