package links

import (
	"fmt"
	"net/netip"
	"time"
)

// DefaultVXLANPort is the UDP port of the lab's cross-machine links:
// 14789, as containerlab's VXLAN tools use, since the IANA port 4789 is
// often taken by an overlay network already running on the machine.
const DefaultVXLANPort = 14789

// DefaultTunnelWait bounds how long a tunnel's creation waits for its VNI
// to be released by a VXLAN device in a namespace that the kernel is
// still tearing down (Maker.TunnelWait). The kernel frees a deleted
// namespace's devices in a work queue of its own, after RCU grace
// periods: well under a second on an idle machine, seconds on a busy one.
const DefaultTunnelWait = 30 * time.Second

// VXLANOverhead is what VXLAN adds to every frame on the underlay: outer
// Ethernet 14, IPv4 20, UDP 8, VXLAN 8 bytes. The underlay's MTU must be
// at least the link's MTU plus VXLANOverhead − 14 (the inner frame's
// Ethernet header is carried, the outer one is not counted in an MTU):
// a 4,200-byte RoCE MTU with LinkOverhead needs 4,300 bytes; jumbo
// underlays (9,000) carry any lab link.
const VXLANOverhead = 50

// Tunnel is one end of a link that crosses machines: a VXLAN device whose
// UDP socket lives in the machine's underlay namespace and whose device
// is the node's port, born directly in the node's namespace with the
// port's name, MAC and alias. Frames the node writes on it leave the
// machine as UDP datagrams to Remote; datagrams from Remote with the
// link's VNI come out of it. It carries every frame as is — PFC and PAUSE
// frames too, which a Linux bridge (and so any bridge-based overlay)
// would drop — and learns nothing: the far end is fixed.
type Tunnel struct {
	// End is the port: the node's namespace, interface name, MAC, alias.
	End End
	// Underlay is the namespace whose routes reach Remote ("" = the
	// caller's): the machine's own network.
	Underlay string
	// Device, if set, is the underlay interface the datagrams leave by;
	// else the underlay namespace's route to Remote picks it. Either
	// way its MTU bounds the link's (the route's own MTU too, if lower).
	Device string
	// VNI is the link's VXLAN network identifier (1 … 2^24−1): one per
	// link, the same at both ends.
	VNI uint32
	// Local and Remote are the two machines' underlay addresses.
	Local, Remote netip.Addr
	// Port is the UDP port at both ends (0 = DefaultVXLANPort).
	Port uint16
	// MTU of the port (0 = DefaultMTU).
	MTU int
	// KeepOffloads leaves the kernel's offloads on (tests only).
	KeepOffloads bool
}

func (t Tunnel) String() string {
	return fmt.Sprintf("vxlan %s/%s vni %d %v -> %v", nsLabel(t.End.NetNS), t.End.Name, t.VNI, t.Local, t.Remote)
}

func (t Tunnel) port() uint16 {
	if t.Port == 0 {
		return DefaultVXLANPort
	}
	return t.Port
}

func (t Tunnel) mtu() int {
	if t.MTU == 0 {
		return DefaultMTU
	}
	return t.MTU
}

func (t Tunnel) check() error {
	e := t.End
	switch {
	case e.Name == "" || len(e.Name) > 15:
		return fmt.Errorf("%v: bad interface name %q", t, e.Name)
	case e.MAC != nil && len(e.MAC) != 6:
		return fmt.Errorf("%v: bad MAC %v", t, e.MAC)
	case t.VNI == 0 || t.VNI >= 1<<24:
		return fmt.Errorf("%v: VNI %d out of 1…16777215", t, t.VNI)
	case !t.Local.IsValid() || !t.Remote.IsValid():
		return fmt.Errorf("%v: local and remote underlay addresses are both needed", t)
	case t.Local.Is4() != t.Remote.Is4():
		return fmt.Errorf("%v: local and remote are of different IP versions", t)
	case t.MTU < 0 || t.MTU > 65535:
		return fmt.Errorf("%v: bad MTU %d", t, t.MTU)
	}
	return nil
}

// UnderlayMTU is the smallest underlay MTU that carries a link of MTU mtu
// over VXLAN without fragmenting: mtu plus the inner Ethernet header and
// the outer IP, UDP and VXLAN headers (IPv6 underlays need 20 more).
func UnderlayMTU(mtu int, ipv6 bool) int {
	n := mtu + VXLANOverhead
	if ipv6 {
		n += 20
	}
	return n
}
