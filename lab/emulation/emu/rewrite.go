package emu

import (
	"encoding/binary"

	"github.com/rocelab/rocelab/wire"
)

// The raw-byte rewriters a switch model calls (switchmodel.Options MarkCE,
// DecTTL, Trim) after it changed a descriptor that carries Raw. They
// bring the bytes in line with the descriptor and keep the IPv4 header
// checksum valid (updated incrementally, RFC 1624). The ICRC masks TOS
// and TTL, so CE marking and TTL decrement leave it valid; a trimmed
// packet's ICRC and IPv6 UDP checksum are not recomputed — receivers
// recognise a trimmed packet by its DSCP, as in UEC.

// MarkCE writes the descriptor's ECN codepoint (CE) into Raw.
func MarkCE(p *wire.Packet) { writeTOS(p) }

// DecTTL writes the descriptor's TTL (IPv6: hop limit) into Raw.
func DecTTL(p *wire.Packet) {
	h, ok := ipHeader(p)
	if !ok {
		return
	}
	switch p.IPVersion {
	case 4:
		set16(h, 8, uint16(p.TTL)<<8|uint16(h[9]))
	case 6:
		h[7] = p.TTL
	}
}

// Trim cuts Raw to the descriptor's Len, writes its DSCP, and fixes the
// IP and UDP length fields.
func Trim(p *wire.Packet) {
	if p.Len < len(p.Raw) {
		p.Raw = p.Raw[:p.Len]
	}
	writeTOS(p)
	h, ok := ipHeader(p)
	if !ok {
		return
	}
	switch p.IPVersion {
	case 4:
		set16(h, 2, uint16(p.Len-p.L3Offset))
	case 6:
		set16(h, 4, uint16(max(0, p.Len-p.L3Offset-wire.IPv6Len)))
	}
	if p.Protocol == wire.ProtoUDP && p.L4Offset > 0 && p.L4Offset+wire.UDPLen <= len(p.Raw) {
		binary.BigEndian.PutUint16(p.Raw[p.L4Offset+4:], uint16(p.Len-p.L4Offset))
	}
}

// ipHeader returns the IP header in Raw, if it is all there.
func ipHeader(p *wire.Packet) ([]byte, bool) {
	n := wire.IPv4MinLen
	if p.IPVersion == 6 {
		n = wire.IPv6Len
	}
	if p.IPVersion == 0 || p.L3Offset <= 0 || p.L3Offset+n > len(p.Raw) {
		return nil, false
	}
	return p.Raw[p.L3Offset:], true
}

// writeTOS writes the descriptor's DSCP and ECN into Raw.
func writeTOS(p *wire.Packet) {
	h, ok := ipHeader(p)
	if !ok {
		return
	}
	tos := p.DSCP<<2 | p.ECN&3
	switch p.IPVersion {
	case 4:
		set16(h, 0, uint16(h[0])<<8|uint16(tos))
	case 6:
		h[0] = h[0]&0xF0 | tos>>4
		h[1] = h[1]&0x0F | tos<<4
	}
}

// set16 writes v at off of IPv4 header h and updates its checksum.
func set16(h []byte, off int, v uint16) {
	old := binary.BigEndian.Uint16(h[off:])
	if old == v {
		return
	}
	binary.BigEndian.PutUint16(h[off:], v)
	if h[0]>>4 == 4 {
		binary.BigEndian.PutUint16(h[10:], csumUpdate(binary.BigEndian.Uint16(h[10:]), old, v))
	}
}

// csumUpdate is RFC 1624's HC' = ~(~HC + ~m + m').
func csumUpdate(hc, old, v uint16) uint16 {
	s := uint32(^hc) + uint32(^old) + uint32(v)
	s = s&0xFFFF + s>>16
	s = s&0xFFFF + s>>16
	return ^uint16(s)
}
