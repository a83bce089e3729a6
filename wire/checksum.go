package wire

import "encoding/binary"

// sum16 adds b as big-endian 16-bit words to s (ones' complement, unfolded).
func sum16(s uint32, b []byte) uint32 {
	for len(b) >= 2 {
		s += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

// fold folds s to 16 bits and complements it.
func fold(s uint32) uint16 {
	for s > 0xFFFF {
		s = s>>16 + s&0xFFFF
	}
	return ^uint16(s)
}

// IPv4ChecksumOK reports whether the IPv4 header at the start of h (its
// IHL words) carries a valid header checksum.
func IPv4ChecksumOK(h []byte) bool {
	if len(h) < IPv4MinLen || int(h[0]&0x0F)*4 > len(h) {
		return false
	}
	return fold(sum16(0, h[:int(h[0]&0x0F)*4])) == 0
}

// setIPv4Checksum computes and writes the checksum of the IPv4 header h.
func setIPv4Checksum(h []byte) {
	h[10], h[11] = 0, 0
	binary.BigEndian.PutUint16(h[10:], fold(sum16(0, h)))
}

// setUDPChecksum computes and writes the UDP checksum of a packet whose
// IP header is at l3 and UDP datagram spans l4..end.
func setUDPChecksum(frame []byte, ipVersion uint8, l3, l4, end int) {
	frame[l4+6], frame[l4+7] = 0, 0
	var s uint32
	if ipVersion == 4 {
		s = sum16(0, frame[l3+12:l3+20]) // source and destination addresses
	} else {
		s = sum16(0, frame[l3+8:l3+40])
	}
	s += uint32(end - l4)
	s += ProtoUDP
	c := fold(sum16(s, frame[l4:end]))
	if c == 0 {
		c = 0xFFFF // 0 means "no checksum"
	}
	binary.BigEndian.PutUint16(frame[l4+6:], c)
}

// updateChecksum returns checksum hc updated for a 16-bit word changing
// from old to new (RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m')).
func updateChecksum(hc, old, new uint16) uint16 {
	s := uint32(^hc) + uint32(^old) + uint32(new)
	return fold(s)
}
