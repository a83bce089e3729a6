package nodeplan

import (
	"errors"
	"fmt"

	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/emulation/datapath/verbs"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/topologies"
)

// ErrNoBackEnd is returned by Endpoint for a node without a
// back-end NIC: it runs no endpoint process.
var ErrNoBackEnd = errors.New("no back-end NIC")

// Endpoint builds the node.Config of the endpoint node of host n:
// one port and one NIC per back-end port cabled to a switch (gpu0, gpu1,
// …), with the plan's interface name, MAC, address, the link's rate and
// one-way delay (the node applies it to the frames it receives), and an RDMA MTU that
// fits the link's IP MTU — what the simulator (simlab) gives the same NIC.
// The FE NIC is the kernel's and is left out. A node with no BE port
// gives ErrNoBackEnd.
func Endpoint(n *topologies.Node, scale int, seed uint64, socket string) (node.Config, error) {
	if n.Kind == topologies.KindSwitch {
		return node.Config{}, fmt.Errorf("node %s is a switch, not an endpoint", n.Name)
	}
	c := node.Config{Kind: nodeapi.KindEndpoint, Name: n.Name, Scale: scale, Seed: seed, Socket: socket}
	for _, p := range n.Ports {
		if p.Plane != topologies.BE {
			continue
		}
		if p.Peer == nil {
			return node.Config{}, fmt.Errorf("node %s: port %s is not cabled", n.Name, p.Name)
		}
		if !p.Addr.IsValid() {
			return node.Config{}, fmt.Errorf("node %s: port %s has no address", n.Name, p.Name)
		}
		c.Ports = append(c.Ports, node.PortConfig{IfName: p.IfName, MAC: p.MAC.String(), PeerMAC: p.Peer.MAC.String(), Rate: p.Rate, Delay: p.Delay, PeerLoop: runsLoop(p.Peer)})
		c.NICs = append(c.NICs, node.NICConfig{Name: n.Name + ":" + p.Name, IP: p.Addr.Addr().String(), MTU: endpoint.PayloadMTU(p.MTU)})
	}
	if len(c.Ports) == 0 {
		return node.Config{}, fmt.Errorf("node %s: %w", n.Name, ErrNoBackEnd)
	}
	if err := c.Validate(); err != nil {
		return node.Config{}, fmt.Errorf("node %s: %w", n.Name, err)
	}
	return c, nil
}

// runsLoop reports whether port p is served by a node's loop: every
// switch port, and a host's back-end ports (its endpoint's NICs); a
// host's front-end port is the kernel's.
func runsLoop(p *topologies.Port) bool {
	return p.Node.Kind == topologies.KindSwitch || p.Plane == topologies.BE
}

// Hosts lists the hosts and storage nodes of t with their RDMA NICs'
// addresses (BE ports) and their other addresses (FE ports), for rdma_cm's
// address resolution in every endpoint node (node.Config.Hosts).
func Hosts(t *topologies.Topology) []verbs.Host {
	var hs []verbs.Host
	for _, n := range t.Nodes {
		if n.Kind == topologies.KindSwitch {
			continue
		}
		h := verbs.Host{Name: n.Name}
		for _, p := range n.Ports {
			if !p.Addr.IsValid() {
				continue
			}
			if p.Plane == topologies.BE {
				h.NICs = append(h.NICs, verbs.HostNIC{Port: p.Name, IP: p.Addr.Addr()})
				continue
			}
			h.Addrs = append(h.Addrs, p.Addr.Addr())
			if p.Addr6.IsValid() {
				h.Addrs = append(h.Addrs, p.Addr6.Addr())
			}
		}
		if len(h.NICs) > 0 {
			hs = append(hs, h)
		}
	}
	return hs
}
