package wire

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
	p.WriteTOS()
	return true
}
