// Package ctlplane is a switch's control plane, as far as a fabric's hosts
// reach it: it answers ARP requests and IPv6 neighbour solicitations for a
// port's addresses, and ICMP and ICMPv6 echo requests to any of the
// switch's addresses (loopbacks and ports). It implements
// switchmodel.ControlPlane: the switch model punts the packets addressed to
// it (switchmodel.Switch.AddLocal) and queues the reply Answer returns.
//
// Like the model it is pure: no goroutine, no clock. Replies are built with
// gopacket's layers from the request's bytes, so a descriptor without bytes
// (the simulator's) gets no answer, and the switch drops it (reason
// "to_switch").
package ctlplane

import (
	"fmt"
	"net"
	"net/netip"
	"slices"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
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
	pkt := gopacket.NewPacket(p.Raw[:p.Len], layers.LayerTypeEthernet, gopacket.DecodeOptions{Lazy: true, NoCopy: true})
	eth, _ := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	if eth == nil {
		return nil
	}
	out := []gopacket.SerializableLayer{&layers.Ethernet{
		SrcMAC: net.HardwareAddr(c.ports[port].MAC[:]), DstMAC: eth.SrcMAC, EthernetType: eth.EthernetType,
	}}
	if tag, ok := pkt.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q); ok {
		out = append(out, &layers.Dot1Q{Priority: tag.Priority, VLANIdentifier: tag.VLANIdentifier, Type: tag.Type})
	}
	var ok bool
	switch {
	case pkt.Layer(layers.LayerTypeARP) != nil:
		out, ok = c.arp(port, pkt.Layer(layers.LayerTypeARP).(*layers.ARP), out)
	case pkt.Layer(layers.LayerTypeIPv4) != nil:
		out, ok = c.echo4(pkt, out)
	case pkt.Layer(layers.LayerTypeIPv6) != nil:
		out, ok = c.icmp6(port, pkt, out)
	}
	if !ok {
		return nil
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, out...); err != nil {
		return nil
	}
	r := &wire.Packet{}
	if err := r.Decode(buf.Bytes()); err != nil {
		return nil
	}
	return r
}

// portHas reports whether a is one of port's own addresses.
func (c *Plane) portHas(port int, a netip.Addr) bool {
	return slices.Contains(c.ports[port].Addrs, a.Unmap())
}

// arp answers an ARP request for one of port's IPv4 addresses.
func (c *Plane) arp(port int, req *layers.ARP, out []gopacket.SerializableLayer) ([]gopacket.SerializableLayer, bool) {
	if req.Operation != layers.ARPRequest || req.AddrType != layers.LinkTypeEthernet ||
		req.Protocol != layers.EthernetTypeIPv4 || len(req.DstProtAddress) != 4 || len(req.SourceHwAddress) != 6 {
		return nil, false
	}
	target := netip.AddrFrom4([4]byte(req.DstProtAddress))
	if !c.portHas(port, target) {
		return nil, false
	}
	return append(out, &layers.ARP{
		AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
		HwAddressSize: 6, ProtAddressSize: 4, Operation: layers.ARPReply,
		SourceHwAddress: c.ports[port].MAC[:], SourceProtAddress: req.DstProtAddress,
		DstHwAddress: req.SourceHwAddress, DstProtAddress: req.SourceProtAddress,
	}), true
}

// echo4 answers an ICMP echo request to one of the switch's addresses.
func (c *Plane) echo4(pkt gopacket.Packet, out []gopacket.SerializableLayer) ([]gopacket.SerializableLayer, bool) {
	ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	icmp, _ := pkt.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4)
	dst, _ := netip.AddrFromSlice(ip.DstIP)
	if icmp == nil || icmp.TypeCode.Type() != layers.ICMPv4TypeEchoRequest || !c.own[dst.Unmap()] {
		return nil, false
	}
	return append(out,
		&layers.IPv4{Version: 4, IHL: 5, TOS: ip.TOS &^ 3, Id: ip.Id, TTL: ttl, Protocol: layers.IPProtocolICMPv4, SrcIP: ip.DstIP, DstIP: ip.SrcIP},
		&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeEchoReply, 0), Id: icmp.Id, Seq: icmp.Seq},
		gopacket.Payload(icmp.Payload),
	), true
}

// icmp6 answers an ICMPv6 echo request to one of the switch's addresses,
// and a neighbour solicitation for one of port's addresses.
func (c *Plane) icmp6(port int, pkt gopacket.Packet, out []gopacket.SerializableLayer) ([]gopacket.SerializableLayer, bool) {
	ip := pkt.Layer(layers.LayerTypeIPv6).(*layers.IPv6)
	icmp, _ := pkt.Layer(layers.LayerTypeICMPv6).(*layers.ICMPv6)
	if icmp == nil {
		return nil, false
	}
	dst, _ := netip.AddrFromSlice(ip.DstIP)
	reply := &layers.IPv6{Version: 6, TrafficClass: ip.TrafficClass &^ 3, HopLimit: ttl, NextHeader: layers.IPProtocolICMPv6, SrcIP: ip.DstIP, DstIP: ip.SrcIP}
	switch icmp.TypeCode.Type() {
	case layers.ICMPv6TypeEchoRequest:
		echo, _ := pkt.Layer(layers.LayerTypeICMPv6Echo).(*layers.ICMPv6Echo)
		if echo == nil || len(icmp.Payload) < 4 || !c.own[dst] {
			return nil, false
		}
		// gopacket's ICMPv6Echo keeps no payload: the data follows its
		// four bytes in the ICMPv6 layer's.
		data := icmp.Payload[4:]
		r := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeEchoReply, 0)}
		if err := r.SetNetworkLayerForChecksum(reply); err != nil {
			return nil, false
		}
		return append(out, reply, r, &layers.ICMPv6Echo{Identifier: echo.Identifier, SeqNumber: echo.SeqNumber}, gopacket.Payload(data)), true
	case layers.ICMPv6TypeNeighborSolicitation:
		ns, _ := pkt.Layer(layers.LayerTypeICMPv6NeighborSolicitation).(*layers.ICMPv6NeighborSolicitation)
		if ns == nil || ip.HopLimit != 255 {
			return nil, false
		}
		target, _ := netip.AddrFromSlice(ns.TargetAddress)
		if !c.portHas(port, target) {
			return nil, false
		}
		// RFC 4861 §7.2.4: solicited, to the solicitor; from the
		// unspecified address (duplicate address detection), unsolicited
		// to all nodes.
		flags := uint8(0x80 | 0x20) // router, override
		reply.SrcIP, reply.HopLimit = ns.TargetAddress, 255
		if src, _ := netip.AddrFromSlice(ip.SrcIP); src.IsUnspecified() {
			reply.DstIP = net.IP(netip.IPv6LinkLocalAllNodes().AsSlice())
		} else {
			flags |= 0x40 // solicited
		}
		r := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeNeighborAdvertisement, 0)}
		if err := r.SetNetworkLayerForChecksum(reply); err != nil {
			return nil, false
		}
		na := &layers.ICMPv6NeighborAdvertisement{Flags: flags, TargetAddress: ns.TargetAddress, Options: layers.ICMPv6Options{
			{Type: layers.ICMPv6OptTargetAddress, Data: c.ports[port].MAC[:]},
		}}
		return append(out, reply, r, na), true
	}
	return nil, false
}
