package switchmodel

import (
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/wire"
)

// A switch's own addresses (its loopbacks and port addresses) are routes
// of its FIB whose next hop is localPort: a packet to one of them is not
// forwarded (toward the other end of the port's link, whose /31 covers it,
// and back, until its TTL ran out) but punted to the switch's control
// plane, as an ASIC traps it to its CPU. The model stays pure: the control
// plane (Options.Control) answers synchronously with a packet to send, or
// nothing, and the reply leaves through an egress queue like any packet.

// localPort is the next hop of the switch's own addresses in its FIB: no
// port has this number (MaxPorts is a count).
const localPort = MaxPorts

// ControlPlane answers the packets addressed to a switch: ARP and IPv6
// neighbour solicitations, ICMP echo requests. Answer is given p, which
// arrived on port (and is the control plane's to keep), and returns the
// reply to send, or nil when it has none (the packet is then dropped,
// reason "to_switch"). The reply is routed like a forwarded packet, or
// leaves by port when the switch has no route for it (ARP, link-local
// addresses). Answer runs on the switch's scheduler, synchronously: it
// must not block.
type ControlPlane interface {
	Answer(port int, p *wire.Packet) *wire.Packet
}

// AddLocal makes addrs the switch's own: a packet to one of them is
// punted to its control plane instead of forwarded (dropped, reason
// "to_switch", when there is none or it does not answer).
func (s *Switch) AddLocal(addrs ...netip.Addr) error {
	for _, a := range addrs {
		if !a.IsValid() {
			return fmt.Errorf("switch %q: add local address: invalid address", s.name)
		}
		a = a.Unmap()
		s.fib.add(netip.PrefixFrom(a, a.BitLen()), []int{localPort})
	}
	return nil
}

// forControl reports whether p, which has no route, is still the control
// plane's business: ARP, and IPv6 to link-local or multicast addresses
// (neighbour discovery), when the switch has a control plane.
func (s *Switch) forControl(p *wire.Packet) bool {
	if s.ctl == nil {
		return false
	}
	if p.EtherType == wire.EtherTypeARP {
		return true
	}
	return p.IPVersion == 6 && (p.DstIP.IsLinkLocalUnicast() || p.DstIP.IsMulticast())
}

// punt hands p, which came in on pt with class tc and is addressed to the
// switch, to the control plane, and queues its reply.
func (pt *Port) punt(tc uint8, p *wire.Packet) {
	s := pt.swRx
	var r *wire.Packet
	if s.ctl != nil {
		r = s.ctl.Answer(pt.idx, p)
	}
	if r == nil {
		pt.drop(tc, dropToSwitch, p)
		return
	}
	pt.replies++
	out := pt.idx
	if r.DstIP.IsValid() {
		if o, ok := s.route(r); ok && o != localPort {
			out = o
		}
	}
	s.ports[out].enqueue(r, pt, s.classify(r))
}
