// Package ctlplane is a switch's control plane, as far as a fabric's hosts
// reach it: it answers ARP requests and IPv6 neighbour solicitations for a
// port's addresses, and ICMP and ICMPv6 echo requests to any of the
// switch's addresses (loopbacks and ports). It implements
// switchmodel.ControlPlane: the switch model punts the packets addressed to
// it (switchmodel.Switch.AddLocal) and queues the reply Answer returns.
//
// Like the model it is pure: no goroutine, no clock. Replies are built
// from the request's bytes (frames.go: a few fixed layouts, written by hand
// so that the node binary does not link gopacket, whose initialisation
// cost every node process 22 ms), so a descriptor without bytes (the
// simulator's) gets no answer, and the switch drops it (reason
// "to_switch").
package ctlplane

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/rocelab/rocelab/wire"
)

// Port is one switch port as its control plane knows it.
type Port struct {
	// MAC is the port's address: what its ARP replies and neighbour
	// advertisements give.
	MAC [6]byte
	// Addrs are the port's own addresses (IPv4 and IPv6).
	Addrs []netip.Addr
}

// Plane answers the packets addressed to one switch.
type Plane struct {
	ports []Port
	own   map[netip.Addr]bool
	addrs []netip.Addr
}

// ttl is the TTL (hop limit) of the echo replies, Linux's default.
const ttl = 64

// New returns the control plane of a switch with ports (port i of the
// switch model is ports[i]) and loopbacks.
func New(ports []Port, loopbacks ...netip.Addr) (*Plane, error) {
	c := &Plane{ports: ports, own: map[netip.Addr]bool{}}
	add := func(a netip.Addr) error {
		if !a.IsValid() {
			return fmt.Errorf("control plane: invalid address")
		}
		a = a.Unmap()
		if !c.own[a] {
			c.own[a] = true
			c.addrs = append(c.addrs, a)
		}
		return nil
	}
	for _, a := range loopbacks {
		if err := add(a); err != nil {
			return nil, err
		}
	}
	for i, p := range ports {
		for _, a := range p.Addrs {
			if err := add(a); err != nil {
				return nil, fmt.Errorf("port %d: %w", i, err)
			}
		}
	}
	return c, nil
}

// Addrs returns every address of the switch, loopbacks first: what the
// switch model must treat as its own (switchmodel.Switch.AddLocal).
func (c *Plane) Addrs() []netip.Addr { return slices.Clone(c.addrs) }

// Answer returns the reply to p, which arrived on port, or nil when p asks
// nothing the control plane answers (switchmodel.ControlPlane).
func (c *Plane) Answer(port int, p *wire.Packet) *wire.Packet {
	if p.Raw == nil || port < 0 || port >= len(c.ports) || p.Len > len(p.Raw) {
		return nil
	}
	f, ok := parseFrame(p.Raw[:p.Len])
	if !ok {
		return nil
	}
	var body []byte
	ok = false
	switch f.etherType {
	case etherARP:
		body, ok = c.arp(port, f.payload)
	case etherIPv4:
		body, ok = c.echo4(f.payload)
	case etherIPv6:
		body, ok = c.icmp6(port, f.payload)
	}
	if !ok {
		return nil
	}
	r := &wire.Packet{}
	if err := r.Decode(f.reply(c.ports[port].MAC, body)); err != nil {
		return nil
	}
	return r
}

// portHas reports whether a is one of port's own addresses.
func (c *Plane) portHas(port int, a netip.Addr) bool {
	return slices.Contains(c.ports[port].Addrs, a.Unmap())
}

// arp answers an ARP request for one of port's IPv4 addresses.
func (c *Plane) arp(port int, req []byte) ([]byte, bool) {
	if len(req) < arpLen || be16(req[0:]) != 1 || be16(req[2:]) != etherIPv4 || req[4] != 6 || req[5] != 4 || be16(req[6:]) != arpRequest {
		return nil, false
	}
	if !c.portHas(port, netip.AddrFrom4([4]byte(req[24:28]))) {
		return nil, false
	}
	r := make([]byte, arpLen)
	copy(r, req[:6])
	put16(r[6:], arpReply)
	mac := c.ports[port].MAC
	copy(r[8:14], mac[:])      // sender: the port
	copy(r[14:18], req[24:28]) // the address asked for
	copy(r[18:24], req[8:14])  // target: the asker
	copy(r[24:28], req[14:18])
	return r, true
}

// echo4 answers an ICMP echo request to one of the switch's addresses.
func (c *Plane) echo4(ip []byte) ([]byte, bool) {
	if len(ip) < 20 || ip[0]>>4 != 4 || ip[9] != protoICMP {
		return nil, false
	}
	ihl, total := int(ip[0]&15)*4, int(be16(ip[2:]))
	if ihl < 20 || total < ihl+8 || total > len(ip) {
		return nil, false
	}
	icmp := ip[ihl:total]
	if icmp[0] != icmpEchoRequest || icmp[1] != 0 || !c.own[netip.AddrFrom4([4]byte(ip[16:20]))] {
		return nil, false
	}
	r := make([]byte, 20+len(icmp))
	r[0], r[1] = 0x45, ip[1]&^3 // TOS without ECN
	put16(r[2:], uint16(len(r)))
	copy(r[4:6], ip[4:6]) // the request's ID
	r[8], r[9] = ttl, protoICMP
	copy(r[12:16], ip[16:20])
	copy(r[16:20], ip[12:16])
	put16(r[10:], checksum(0, r[:20]))
	m := r[20:]
	copy(m, icmp)
	m[0] = icmpEchoReply
	put16(m[2:], 0)
	put16(m[2:], checksum(0, m))
	return r, true
}

// icmp6 answers an ICMPv6 echo request to one of the switch's addresses,
// and a neighbour solicitation for one of port's addresses.
func (c *Plane) icmp6(port int, ip []byte) ([]byte, bool) {
	if len(ip) < 40 || ip[0]>>4 != 6 || ip[6] != protoICMPv6 {
		return nil, false
	}
	n := int(be16(ip[4:]))
	if n < 8 || 40+n > len(ip) {
		return nil, false
	}
	icmp := ip[40 : 40+n]
	src, dst := netip.AddrFrom16([16]byte(ip[8:24])), netip.AddrFrom16([16]byte(ip[24:40]))
	var m []byte
	var from, to netip.Addr
	hop := uint8(ttl)
	switch icmp[0] {
	case icmp6EchoRequest:
		if icmp[1] != 0 || !c.own[dst] {
			return nil, false
		}
		m = slices.Clone(icmp)
		m[0] = icmp6EchoReply
		from, to = dst, src
	case icmp6NeighborSolicitation:
		if ip[7] != 255 || len(icmp) < 24 {
			return nil, false
		}
		target := netip.AddrFrom16([16]byte(icmp[8:24]))
		if !c.portHas(port, target) {
			return nil, false
		}
		// RFC 4861 §7.2.4: solicited, to the solicitor; from the
		// unspecified address (duplicate address detection), unsolicited
		// to all nodes.
		flags := uint8(0x80 | 0x20) // router, override
		from, to, hop = target, src, 255
		if src.IsUnspecified() {
			to = netip.IPv6LinkLocalAllNodes()
		} else {
			flags |= 0x40 // solicited
		}
		m = make([]byte, 32)
		m[0], m[4] = icmp6NeighborAdvertisement, flags
		copy(m[8:24], icmp[8:24])
		m[24], m[25] = 2, 1 // option: target link-layer address, 8 bytes
		mac := c.ports[port].MAC
		copy(m[26:32], mac[:])
	default:
		return nil, false
	}
	r := make([]byte, 40+len(m))
	tc := (ip[0]&15)<<4 | ip[1]>>4
	tc &^= 3 // without ECN
	r[0], r[1] = 0x60|tc>>4, tc<<4
	put16(r[4:], uint16(len(m)))
	r[6], r[7] = protoICMPv6, hop
	f16, t16 := from.As16(), to.As16()
	copy(r[8:24], f16[:])
	copy(r[24:40], t16[:])
	copy(r[40:], m)
	body := r[40:]
	put16(body[2:], 0)
	// The checksum covers the pseudo-header: addresses, length, next header.
	pseudo := append(append(append([]byte{}, r[8:40]...), 0, 0, byte(len(m)>>8), byte(len(m))), 0, 0, 0, protoICMPv6)
	put16(body[2:], checksum(sum(0, pseudo), body))
	return r, true
}
