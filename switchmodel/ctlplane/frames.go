package ctlplane

import "encoding/binary"

// The few layouts the control plane reads and writes.
const (
	etherIPv4  = 0x0800
	etherARP   = 0x0806
	etherIPv6  = 0x86DD
	ether8021Q = 0x8100

	arpLen     = 28
	arpRequest = 1
	arpReply   = 2

	protoICMP   = 1
	protoICMPv6 = 58

	icmpEchoReply   = 0
	icmpEchoRequest = 8

	icmp6EchoRequest           = 128
	icmp6EchoReply             = 129
	icmp6NeighborSolicitation  = 135
	icmp6NeighborAdvertisement = 136
)

// frame is a request's Ethernet header: where its reply goes, its VLAN
// tag if it has one, and what it carries.
type frame struct {
	src       [6]byte
	tag       []byte // the 802.1Q TCI, or nil
	etherType uint16
	payload   []byte
}

func parseFrame(b []byte) (frame, bool) {
	if len(b) < 14 {
		return frame{}, false
	}
	f := frame{src: [6]byte(b[6:12]), etherType: be16(b[12:]), payload: b[14:]}
	if f.etherType == ether8021Q {
		if len(b) < 18 {
			return frame{}, false
		}
		f.tag, f.etherType, f.payload = b[14:16], be16(b[16:]), b[18:]
	}
	return f, true
}

// reply is the frame that carries body back to the request's sender from
// mac, tagged as the request was.
func (f frame) reply(mac [6]byte, body []byte) []byte {
	r := make([]byte, 0, 18+len(body))
	r = append(r, f.src[:]...)
	r = append(r, mac[:]...)
	if f.tag != nil {
		r = binary.BigEndian.AppendUint16(r, ether8021Q)
		r = append(r, f.tag...)
	}
	r = binary.BigEndian.AppendUint16(r, f.etherType)
	return append(r, body...)
}

func be16(b []byte) uint16     { return binary.BigEndian.Uint16(b) }
func put16(b []byte, v uint16) { binary.BigEndian.PutUint16(b, v) }

// sum adds b to the one's-complement sum s (RFC 1071).
func sum(s uint32, b []byte) uint32 {
	for len(b) >= 2 {
		s += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

// checksum is the Internet checksum of b after the partial sum s.
func checksum(s uint32, b []byte) uint16 {
	s = sum(s, b)
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}
