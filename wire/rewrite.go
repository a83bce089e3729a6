package wire

import "encoding/binary"

// The raw-byte rewriters: after a model changed a descriptor that carries
// Raw (set ECN to CE, decremented TTL, cut Len and re-marked DSCP), they
// bring the bytes in line with the descriptor and keep the IPv4 header
// checksum valid, updated incrementally (RFC 1624). The ICRC masks TOS and
// TTL, so CE marking and TTL decrement leave it valid; a trimmed packet's
// ICRC and IPv6 UDP checksum are not recomputed — receivers recognise a
// trimmed packet by its DSCP, as in UEC. Each is a no-op when Raw does not
// hold the whole IP header (the simulator's payload-free descriptors).

// WriteTOS writes the descriptor's DSCP and ECN into Raw (IPv4 TOS, IPv6
// traffic class).
func (p *Packet) WriteTOS() {
	h, ok := p.rawIPHeader()
	if !ok {
		return
	}
	tos := p.DSCP<<2 | p.ECN&3
	switch p.IPVersion {
	case 4:
		setIPv4Word(h, 0, uint16(h[0])<<8|uint16(tos))
	case 6:
		h[0] = h[0]&0xF0 | tos>>4
		h[1] = h[1]&0x0F | tos<<4
	}
}

// WriteTTL writes the descriptor's TTL (IPv6: hop limit) into Raw.
func (p *Packet) WriteTTL() {
	h, ok := p.rawIPHeader()
	if !ok {
		return
	}
	switch p.IPVersion {
	case 4:
		setIPv4Word(h, 8, uint16(p.TTL)<<8|uint16(h[9]))
	case 6:
		h[7] = p.TTL
	}
}

// WriteTrim cuts Raw to the descriptor's Len, writes its DSCP and ECN, and
// fixes the IP and UDP length fields.
func (p *Packet) WriteTrim() {
	if p.Len < len(p.Raw) {
		p.Raw = p.Raw[:p.Len]
	}
	p.WriteTOS()
	h, ok := p.rawIPHeader()
	if !ok {
		return
	}
	switch p.IPVersion {
	case 4:
		setIPv4Word(h, 2, uint16(p.Len-int(p.L3Offset)))
	case 6:
		binary.BigEndian.PutUint16(h[4:], uint16(max(0, p.Len-int(p.L3Offset)-IPv6Len)))
	}
	if l4 := int(p.L4Offset); p.Protocol == ProtoUDP && l4 > 0 && l4+UDPLen <= len(p.Raw) {
		binary.BigEndian.PutUint16(p.Raw[l4+4:], uint16(p.Len-l4))
	}
}

// rawIPHeader returns the IP header in Raw, if it is all there.
func (p *Packet) rawIPHeader() ([]byte, bool) {
	n := IPv4MinLen
	if p.IPVersion == 6 {
		n = IPv6Len
	}
	if p.IPVersion == 0 || p.L3Offset == 0 || int(p.L3Offset)+n > len(p.Raw) {
		return nil, false
	}
	return p.Raw[p.L3Offset:], true
}

// setIPv4Word writes v at off of IP header h and, for IPv4, updates the
// header checksum incrementally.
func setIPv4Word(h []byte, off int, v uint16) {
	old := binary.BigEndian.Uint16(h[off:])
	if old == v {
		return
	}
	binary.BigEndian.PutUint16(h[off:], v)
	if h[0]>>4 == 4 {
		binary.BigEndian.PutUint16(h[10:], updateChecksum(binary.BigEndian.Uint16(h[10:]), old, v))
	}
}
