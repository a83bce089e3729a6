package nodeplan_test

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/endpoint"
	"github.com/rocelab/rocelab/lab/emulation/control/nodeplan"
	"github.com/rocelab/rocelab/lab/emulation/node"
	"github.com/rocelab/rocelab/switchmodel/fabric"
	"github.com/rocelab/rocelab/topologies"
)

// TestSwitch plans every switch of the laptop topology: its ports as the
// plan cables them, and its routes.
func TestSwitch(t *testing.T) {
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	routes := fabric.Routes(topo)
	n := 0
	for _, nd := range topo.Nodes {
		if nd.Kind != topologies.KindSwitch {
			continue
		}
		n++
		c, err := nodeplan.Switch(nd, routes[nd.Name], 500, 1, "/run/rocelab/t/"+nd.Name+".sock", nodeplan.LagBudget)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]netip.Addr{nd.Loopback}, c.Loopbacks, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
			t.Errorf("%s loopbacks (-want +got):\n%s", nd.Name, diff)
		}
		if len(c.Ports) != len(nd.Ports) || len(c.Routes) != len(routes[nd.Name]) {
			t.Errorf("%s: %d ports, %d routes; want %d, %d", nd.Name, len(c.Ports), len(c.Routes), len(nd.Ports), len(routes[nd.Name]))
		}
		for i, p := range nd.Ports {
			want := node.PortConfig{IfName: p.IfName, MAC: p.MAC.String(), PeerMAC: p.Peer.MAC.String(), Rate: p.Rate, Delay: p.Delay, PeerLoop: p.Peer.Node.Kind == topologies.KindSwitch || p.Peer.Plane == topologies.BE,
				Addrs: []netip.Addr{p.Addr.Addr()}}
			if diff := cmp.Diff(want, c.Ports[i], cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("%s port %d (-want +got):\n%s", nd.Name, i, diff)
			}
		}
	}
	if n == 0 {
		t.Fatal("laptop topology has no switch")
	}
}

// TestEndpoint plans every host's endpoint config of the
// laptop topology: its BE ports and NICs, the FE NIC left to the kernel.
func TestEndpoint(t *testing.T) {
	topo, err := topologies.Builtin("laptop")
	if err != nil {
		t.Fatal(err)
	}
	hosts := 0
	for _, nd := range topo.Nodes {
		c, err := nodeplan.Endpoint(nd, 100, 1, "/run/rocelab/t/"+nd.Name+".sock")
		if nd.Kind != topologies.KindHost || nd.GPUs == 0 {
			if err == nil {
				t.Errorf("%s (%s): endpoint config without BE NICs", nd.Name, nd.Kind)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		hosts++
		if len(c.Ports) != nd.GPUs || len(c.NICs) != nd.GPUs {
			t.Errorf("%s: %d ports, %d NICs for %d GPUs", nd.Name, len(c.Ports), len(c.NICs), nd.GPUs)
		}
		for i, nc := range c.NICs {
			p := nd.Port(fmt.Sprintf("gpu%d", i))
			if nc.Name != nd.Name+":"+p.Name || nc.IP != p.Addr.Addr().String() || c.Ports[i].IfName != p.IfName ||
				c.Ports[i].PeerMAC != p.Peer.MAC.String() || c.Ports[i].Rate != p.Rate || c.Ports[i].Delay != p.Delay || nc.MTU != endpoint.PayloadMTU(p.MTU) {
				t.Errorf("%s NIC %d: %+v port %+v", nd.Name, i, nc, c.Ports[i])
			}
		}
	}
	if hosts == 0 {
		t.Fatal("laptop topology has no host with GPUs")
	}
}
