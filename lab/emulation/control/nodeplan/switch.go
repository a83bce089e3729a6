package nodeplan

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/lab/emulation/node/nodeapi"
	"github.com/rocelab/rocelab/switchmodel"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/topologies"
)

// Switch builds the node.Config of switch n of a resolved topology:
// ports from n.Ports (ifname, MAC, peer's MAC, rate, delay), the switch
// config from its profile (fabric.NodeConfig), routes (from
// fabric.Routes(t)[n.Name]), and its own addresses (its ports' and
// loopbacks), which its control plane answers for. lag is the wall-clock stall of a node loop
// its PFC headroom absorbs at scale: LagBudget for a switch whose links
// cross between loops through sockets, 0 in a lab on one loop.
func Switch(n *topologies.Node, routes []switchmodel.Route, scale int, seed uint64, socket string, lag time.Duration) (node.Config, error) {
	sc, err := fabric.NodeConfig(n)
	if err != nil {
		return node.Config{}, fmt.Errorf("node %s: %w", n.Name, err)
	}
	if h := lagHeadroom(&sc, n.Ports, n.Profile.PFC.HeadroomAuto, scale, lag); h > 0 {
		sc.PFC.Headroom = h
	}
	c := node.Config{Kind: nodeapi.KindSwitch, Name: n.Name, Scale: scale, Seed: seed, Socket: socket, Switch: &sc, Routes: routes}
	for _, p := range n.Ports {
		pc := node.PortConfig{IfName: p.IfName, MAC: p.MAC.String(), Rate: p.Rate, Delay: p.Delay}
		if p.Peer == nil {
			return node.Config{}, fmt.Errorf("node %s: port %s is not cabled", n.Name, p.Name)
		}
		pc.PeerMAC, pc.PeerLoop = p.Peer.MAC.String(), runsLoop(p.Peer)
		for _, a := range []netip.Prefix{p.Addr, p.Addr6} {
			if a.IsValid() {
				pc.Addrs = append(pc.Addrs, a.Addr())
			}
		}
		c.Ports = append(c.Ports, pc)
	}
	for _, a := range []netip.Addr{n.Loopback, n.Loopback6} {
		if a.IsValid() {
			c.Loopbacks = append(c.Loopbacks, a)
		}
	}
	if err := c.Validate(); err != nil {
		return node.Config{}, fmt.Errorf("node %s: %w", n.Name, err)
	}
	return c, nil
}
