package fabric

import (
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/switchmodel/ctlplane"
	"github.com/rocelab/rocelab/topologies"
)

// ControlPlane returns the control plane of switch n: each port's MAC and
// addresses (IPv4, and IPv6 when the plan has it), and its loopbacks. Its
// Addrs are what the switch must take as its own (Switch.AddLocal).
func ControlPlane(n *topologies.Node) (*ctlplane.Plane, error) {
	ports := make([]ctlplane.Port, len(n.Ports))
	for i, p := range n.Ports {
		if len(p.MAC) == 6 {
			ports[i].MAC = [6]byte(p.MAC)
		}
		for _, a := range []netip.Prefix{p.Addr, p.Addr6} {
			if a.IsValid() {
				ports[i].Addrs = append(ports[i].Addrs, a.Addr())
			}
		}
	}
	var loopbacks []netip.Addr
	for _, a := range []netip.Addr{n.Loopback, n.Loopback6} {
		if a.IsValid() {
			loopbacks = append(loopbacks, a)
		}
	}
	c, err := ctlplane.New(ports, loopbacks...)
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", n.Name, err)
	}
	return c, nil
}
