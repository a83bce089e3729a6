package wire

import "encoding/binary"

// ECN codepoints (the two low bits of the IPv4 TOS / IPv6 traffic class).
const (
	ECNNotECT = 0 // not ECN-capable
	ECNECT1   = 1 // ECN-capable, ECT(1)
	ECNECT0   = 2 // ECN-capable, ECT(0)
	ECNCE     = 3 // congestion experienced
)

// MarkCE marks an ECN-capable IP packet Congestion Experienced: it sets
// p.ECN and, when p.Raw holds the frame, rewrites the ECN bits there and
// updates the IPv4 header checksum incrementally (IPv6 has none; the ICRC
// masks the TOS byte and the IPv6 UDP checksum does not cover it, so both
// stay valid). It reports whether the packet now carries CE: false for a
// packet that is not IP or not ECN-capable (Not-ECT must not be marked),
// which is left untouched.
func (p *Packet) MarkCE() bool {
	if p.IPVersion == 0 || p.ECN == ECNNotECT {
		return false
	}
	if p.ECN == ECNCE {
		return true
	}
	p.ECN = ECNCE
	if p.Raw == nil || p.L3Offset+IPv4MinLen > len(p.Raw) {
		return true
	}
	h := p.Raw[p.L3Offset:]
	switch p.IPVersion {
	case 4:
		old := binary.BigEndian.Uint16(h[0:])
		h[1] |= ECNCE
		sum := updateChecksum(binary.BigEndian.Uint16(h[10:]), old, binary.BigEndian.Uint16(h[0:]))
		binary.BigEndian.PutUint16(h[10:], sum)
	case 6:
		h[1] |= ECNCE << 4
	}
	return true
}
