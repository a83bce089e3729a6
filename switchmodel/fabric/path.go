package fabric

import (
	"fmt"

	"github.com/rocelab/rocelab/topologies"
	"github.com/rocelab/rocelab/wire"
)

// Hop is one link direction of a flow's path: the port the flow leaves
// by (toward From.Peer), and the share of the flow's bytes that cross it
// (1 unless a switch on the way sprays the flow's class per packet).
type Hop struct {
	From  *topologies.Port
	Share float64
}

// maxHops bounds a path (a routing loop is a bug, not a path).
const maxHops = 64

// Path returns the link directions a flow from the NIC port src, whose
// packets carry p's headers (addresses, UDP ports, DSCP, destination QP),
// crosses to its destination, in order from src's own link, without
// sending a packet: each switch on the way answers with
// switchmodel.Switch.NextHops — the same FIB lookup and ECMP hash as
// forwarding. Where a switch sprays the class per packet the flow splits
// evenly over the equal-cost ports, and the shares of the hops after it
// say how much of it each carries; a link reached along several branches
// appears once, with the shares summed. The path ends at the ports of
// non-switch nodes (the destination NIC).
func (f *SimFabric) Path(src *topologies.Port, p *wire.Packet) ([]Hop, error) {
	if src == nil || src.Peer == nil {
		return nil, fmt.Errorf("path: the source port is not cabled")
	}
	if src.Node.Kind == topologies.KindSwitch || src.Peer.Node.Kind != topologies.KindSwitch {
		return nil, fmt.Errorf("path: %s:%s is not a NIC cabled to a switch", src.Node.Name, src.Name)
	}
	hops := []Hop{{From: src, Share: 1}}
	var at map[*topologies.Port]int // hops by port, once there are many
	// frontier: switches reached and the share of the flow entering each.
	type entry struct {
		n     *topologies.Node
		share float64
	}
	frontier := []entry{{src.Peer.Node, 1}}
	for depth := 0; len(frontier) > 0; depth++ {
		if depth >= maxHops {
			return nil, fmt.Errorf("path %s:%s → %v: longer than %d hops (a routing loop?)", src.Node.Name, src.Name, p.DstIP, maxHops)
		}
		var next []entry
		var idx map[*topologies.Node]int // next by node, once it is long
		for _, e := range frontier {
			ports, err := f.nextHops(e.n, p)
			if err != nil {
				return nil, fmt.Errorf("path %s:%s → %v: at %s: %w", src.Node.Name, src.Name, p.DstIP, e.n.Name, err)
			}
			share := e.share / float64(len(ports))
			for _, i := range ports {
				out := e.n.Ports[i]
				if k := find(hops, &at, out, func(h Hop) *topologies.Port { return h.From }); k >= 0 {
					hops[k].Share += share
				} else {
					if at != nil {
						at[out] = len(hops)
					}
					hops = append(hops, Hop{From: out, Share: share})
				}
				peer := out.Peer
				if peer == nil {
					return nil, fmt.Errorf("path %s:%s → %v: %s:%s is not cabled", src.Node.Name, src.Name, p.DstIP, e.n.Name, out.Name)
				}
				if peer.Node.Kind != topologies.KindSwitch {
					continue // delivered
				}
				if k := find(next, &idx, peer.Node, func(e entry) *topologies.Node { return e.n }); k >= 0 {
					next[k].share += share
				} else {
					if idx != nil {
						idx[peer.Node] = len(next)
					}
					next = append(next, entry{peer.Node, share})
				}
			}
		}
		frontier = next
	}
	return hops, nil
}

// findScan is how long a list find searches in turn before it indexes it
// in a map: a hashed path has a handful of hops, a sprayed one may have
// hundreds.
const findScan = 16

// find returns the index of the element of list whose key is k, -1 if
// none: by a scan while the list is short, then by *index, which it
// builds the first time the list is longer (the caller adds later
// elements to it once it exists).
func find[E any, K comparable](list []E, index *map[K]int, k K, key func(E) K) int {
	if *index == nil && len(list) <= findScan {
		for i, e := range list {
			if key(e) == k {
				return i
			}
		}
		return -1
	}
	if *index == nil {
		*index = make(map[K]int, 2*len(list))
		for i, e := range list {
			(*index)[key(e)] = i
		}
	}
	if i, ok := (*index)[k]; ok {
		return i
	}
	return -1
}

// nextHops is the ports switch n sends p's flow on: its NextHops, or
// with RoutesOnDemand its choice among the route's ports found on demand.
func (f *SimFabric) nextHops(n *topologies.Node, p *wire.Packet) ([]int, error) {
	sw := f.byName[n.Name]
	if f.onDemand == nil {
		ports, _, err := sw.NextHops(p)
		return ports, err
	}
	set, err := f.onDemand.ports(n, p.DstIP)
	if err != nil {
		return nil, err
	}
	ports, _ := sw.NextHopsAmong(p, set)
	return ports, nil
}

// FlowPacket is the header of the data packets a RoCEv2 queue pair sends
// from the NIC port src to dst: what Path needs of a flow (sport is the
// UDP source port the NIC gives the QP's path, dstQP the peer's QP number,
// dscp the data class).
func FlowPacket(src, dst *topologies.Port, sport uint16, dstQP uint32, dscp uint8) *wire.Packet {
	return &wire.Packet{
		Kind: wire.KindRoCE, EtherType: wire.EtherTypeIPv4, IPVersion: 4,
		SrcIP: src.Addr.Addr(), DstIP: dst.Addr.Addr(), DSCP: dscp, TTL: wire.DefaultTTL,
		Protocol: wire.ProtoUDP, SrcPort: sport, DstPort: wire.RoCEPort, DestQP: dstQP,
	}
}
