package links

import (
	"fmt"
	"net"
)

// DefaultMTU is the MTU of a lab link unless the topology says otherwise:
// room for 9000-byte jumbo payloads and their headers.
const DefaultMTU = 9216

// End is one end of a veth pair.
type End struct {
	// NetNS is the named namespace the end lives in ("" = the caller's).
	NetNS string
	// Name is the interface name (at most 15 bytes; the addressing plan's
	// topologies.IfName).
	Name string
	// MAC is the end's address (the plan's topologies.MAC); nil lets the
	// kernel pick a random one.
	MAC net.HardwareAddr
	// Alias tags the end (state.IfAlias); "" sets none.
	Alias string
	// NoIPv6 disables IPv6 on the end, so the kernel sends no neighbour
	// discovery or MLD frames of its own on it (a switch port wants none).
	NoIPv6 bool
}

// Veth is a veth pair to create.
type Veth struct {
	A, B End
	// MTU of both ends; 0 means DefaultMTU.
	MTU int
	// KeepOffloads leaves the kernel's offloads on (only for tests that
	// show why they must be off).
	KeepOffloads bool
}

func (v Veth) String() string {
	return fmt.Sprintf("veth %s/%s <-> %s/%s", nsLabel(v.A.NetNS), v.A.Name, nsLabel(v.B.NetNS), v.B.Name)
}

func nsLabel(ns string) string {
	if ns == "" {
		return "(root)"
	}
	return ns
}

func (v Veth) check() error {
	for _, e := range []End{v.A, v.B} {
		if e.Name == "" || len(e.Name) > 15 {
			return fmt.Errorf("%v: bad interface name %q", v, e.Name)
		}
		if e.MAC != nil && len(e.MAC) != 6 {
			return fmt.Errorf("%v: bad MAC %v", v, e.MAC)
		}
	}
	if v.A.NetNS == v.B.NetNS && v.A.Name == v.B.Name {
		return fmt.Errorf("%v: both ends have the same name", v)
	}
	if v.MTU < 0 || v.MTU > 65535 {
		return fmt.Errorf("%v: bad MTU %d", v, v.MTU)
	}
	return nil
}
