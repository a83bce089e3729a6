package wire

import (
	"encoding/binary"
	"net/netip"
)

// EtherTypes the codecs know.
const (
	EtherTypeIPv4       = 0x0800
	EtherTypeARP        = 0x0806
	EtherTypeIPv6       = 0x86DD
	EtherTypeVLAN       = 0x8100
	EtherTypeMACControl = 0x8808
)

// MAC control opcodes.
const (
	MACControlPause = 0x0001 // 802.3x PAUSE
	MACControlPFC   = 0x0101 // 802.1Qbb priority-based flow control
)

// IP protocol numbers the decoder looks into.
const (
	ProtoTCP = 6
	ProtoUDP = 17
)

// Header sizes.
const (
	EthernetLen = 14
	VLANTagLen  = 4
	IPv4MinLen  = 20
	IPv6Len     = 40
	UDPLen      = 8
	// MinFrameLen is the minimum Ethernet frame without its FCS; builders
	// pad shorter frames with zeros up to it.
	MinFrameLen = 60
)

// Decode parses frame into p, replacing all of p's fields; p.Raw keeps
// frame (not a copy). It does not allocate when the frame is well formed.
//
// Frames it does not interpret (other EtherTypes, IP protocols other than
// UDP and TCP, UDP not to port 4791, IP fragments, unknown MAC control
// opcodes) decode without error as far as it went, with Kind KindOther or
// KindIP. A header that is cut short or contradicts itself returns a
// *DecodeError wrapping ErrTruncated or ErrMalformed; p then holds what was
// parsed before it. Decode does not verify checksums or the ICRC (see
// [Packet.VerifyICRC]).
func (p *Packet) Decode(frame []byte) error {
	*p = Packet{Raw: frame, Len: len(frame)}
	if len(frame) < EthernetLen {
		return truncated("Ethernet", 0, EthernetLen, len(frame))
	}
	copy(p.DstMAC[:], frame[0:6])
	copy(p.SrcMAC[:], frame[6:12])
	et := binary.BigEndian.Uint16(frame[12:])
	off := EthernetLen
	if et == EtherTypeVLAN {
		if len(frame) < EthernetLen+VLANTagLen {
			return truncated("802.1Q", 12, EthernetLen+VLANTagLen, len(frame))
		}
		tci := binary.BigEndian.Uint16(frame[14:])
		p.HasVLAN = true
		p.PCP = uint8(tci >> 13)
		p.VLANID = tci & 0x0FFF
		et = binary.BigEndian.Uint16(frame[16:])
		off += VLANTagLen
	}
	p.EtherType = et
	switch et {
	case EtherTypeIPv4:
		return p.decodeIPv4(frame, off)
	case EtherTypeIPv6:
		return p.decodeIPv6(frame, off)
	case EtherTypeMACControl:
		return p.decodeMACControl(frame, off)
	}
	return nil
}

func (p *Packet) decodeIPv4(frame []byte, off int) error {
	b := frame[off:]
	if len(b) < IPv4MinLen {
		return truncated("IPv4", off, IPv4MinLen, len(b))
	}
	if b[0]>>4 != 4 {
		return malformed("IPv4", off, "version is not 4")
	}
	ihl := int(b[0]&0x0F) * 4
	if ihl < IPv4MinLen {
		return malformed("IPv4", off, "header length below 20")
	}
	if len(b) < ihl {
		return truncated("IPv4", off, ihl, len(b))
	}
	total := int(binary.BigEndian.Uint16(b[2:]))
	if total < ihl {
		return malformed("IPv4", off, "total length below header length")
	}
	if total > len(b) {
		return truncated("IPv4", off, total, len(b))
	}
	p.Kind = KindIP
	p.IPVersion = 4
	p.L3Offset = uint16(off)
	p.DSCP = b[1] >> 2
	p.ECN = b[1] & 3
	p.IPID = binary.BigEndian.Uint16(b[4:])
	p.TTL = b[8]
	p.Protocol = b[9]
	p.SrcIP = netip.AddrFrom4([4]byte(b[12:16]))
	p.DstIP = netip.AddrFrom4([4]byte(b[16:20]))
	if binary.BigEndian.Uint16(b[6:])&0x3FFF != 0 {
		return nil // a fragment: no transport header to read
	}
	return p.decodeL4(frame, off+ihl, off+total)
}

func (p *Packet) decodeIPv6(frame []byte, off int) error {
	b := frame[off:]
	if len(b) < IPv6Len {
		return truncated("IPv6", off, IPv6Len, len(b))
	}
	w := binary.BigEndian.Uint32(b)
	if w>>28 != 6 {
		return malformed("IPv6", off, "version is not 6")
	}
	plen := int(binary.BigEndian.Uint16(b[4:]))
	if IPv6Len+plen > len(b) {
		return truncated("IPv6", off, IPv6Len+plen, len(b))
	}
	p.Kind = KindIP
	p.IPVersion = 6
	p.L3Offset = uint16(off)
	tc := uint8(w >> 20)
	p.DSCP = tc >> 2
	p.ECN = tc & 3
	p.FlowLabel = w & 0xFFFFF
	p.Protocol = b[6]
	p.TTL = b[7]
	p.SrcIP = netip.AddrFrom16([16]byte(b[8:24]))
	p.DstIP = netip.AddrFrom16([16]byte(b[24:40]))
	return p.decodeL4(frame, off+IPv6Len, off+IPv6Len+plen)
}

// decodeL4 reads the transport header at off; end is the end of the IP datagram.
func (p *Packet) decodeL4(frame []byte, off, end int) error {
	switch p.Protocol {
	case ProtoUDP:
		if end-off < UDPLen {
			return truncated("UDP", off, UDPLen, end-off)
		}
		b := frame[off:end]
		p.L4Offset = uint16(off)
		p.SrcPort = binary.BigEndian.Uint16(b)
		p.DstPort = binary.BigEndian.Uint16(b[2:])
		ulen := int(binary.BigEndian.Uint16(b[4:]))
		if ulen < UDPLen {
			return malformed("UDP", off, "length below 8")
		}
		if ulen > len(b) {
			return truncated("UDP", off, ulen, len(b))
		}
		if p.DstPort == RoCEPort {
			return p.decodeBTH(frame, off+UDPLen, off+ulen)
		}
	case ProtoTCP:
		if end-off < 20 {
			return truncated("TCP", off, 20, end-off)
		}
		p.L4Offset = uint16(off)
		p.SrcPort = binary.BigEndian.Uint16(frame[off:])
		p.DstPort = binary.BigEndian.Uint16(frame[off+2:])
	}
	return nil
}

// DecodeBTH reads the fixed fields of the 12-byte BTH at the start of b
// (which must hold 12 bytes) into p: the one place that knows its bit
// layout on decode (wire/capture's gopacket layer uses it too).
func (p *Packet) DecodeBTH(b []byte) {
	_ = b[11]
	p.Opcode = b[0]
	p.SE = b[1]&0x80 != 0
	p.MigReq = b[1]&0x40 != 0
	p.PadCnt = (b[1] >> 4) & 3
	p.TVer = b[1] & 0x0F
	p.PKey = binary.BigEndian.Uint16(b[2:])
	p.FECN = b[4]&0x80 != 0
	p.BECN = b[4]&0x40 != 0
	p.DestQP = binary.BigEndian.Uint32(b[4:]) & 0xFFFFFF
	p.AckReq = b[8]&0x80 != 0
	p.PSN = binary.BigEndian.Uint32(b[8:]) & 0xFFFFFF
}

// decodeBTH reads the BTH at off and the extension headers its opcode
// carries; end is the end of the UDP datagram (ICRC included).
func (p *Packet) decodeBTH(frame []byte, off, end int) error {
	if end-off < BTHLen+ICRCLen {
		return truncated("BTH", off, BTHLen+ICRCLen, end-off)
	}
	b := frame[off:end]
	p.DecodeBTH(b)
	op := Opcode(p.Opcode)
	if op == OpCNP {
		p.Kind = KindCNP
	} else {
		p.Kind = KindRoCE
	}
	ext := op.Ext()
	h := BTHLen
	if need := BTHLen + ext.Len() + ICRCLen; len(b) < need {
		return truncated("BTH extension headers", off+BTHLen, need, len(b))
	}
	if ext&ExtDETH != 0 {
		p.SetDETH(binary.BigEndian.Uint32(b[h:]), binary.BigEndian.Uint32(b[h+4:])&0xFFFFFF)
		h += DETHLen
	}
	if ext&ExtRETH != 0 {
		p.HasRETH = true
		p.VA = binary.BigEndian.Uint64(b[h:])
		p.RKey = binary.BigEndian.Uint32(b[h+8:])
		p.DMALen = binary.BigEndian.Uint32(b[h+12:])
		h += RETHLen
	}
	if ext&ExtAtomicETH != 0 {
		p.VA = binary.BigEndian.Uint64(b[h:])
		p.RKey = binary.BigEndian.Uint32(b[h+8:])
		p.DMALen = 8
		p.SetAtomicETH(binary.BigEndian.Uint64(b[h+12:]), binary.BigEndian.Uint64(b[h+20:]))
		h += AtomicETHLen
	}
	if ext&ExtAETH != 0 {
		p.HasAETH = true
		w := binary.BigEndian.Uint32(b[h:])
		p.Syndrome = uint8(w >> 24)
		p.MSN = w & 0xFFFFFF
		h += AETHLen
	}
	if ext&ExtAtomicAckETH != 0 {
		p.SetAtomicAck(binary.BigEndian.Uint64(b[h:]))
		h += AtomicAckETHLen
	}
	if ext&ExtImmDt != 0 {
		p.HasImm = true
		p.Imm = binary.BigEndian.Uint32(b[h:])
		h += ImmDtLen
	}
	payloadEnd := len(b) - ICRCLen - int(p.PadCnt)
	if payloadEnd < h {
		return malformed("BTH", off, "pad count exceeds the payload")
	}
	p.PayloadOffset = uint16(off + h)
	p.PayloadLen = uint16(payloadEnd - h)
	return nil
}

func (p *Packet) decodeMACControl(frame []byte, off int) error {
	b := frame[off:]
	if len(b) < 2 {
		return truncated("MAC control", off, 2, len(b))
	}
	switch binary.BigEndian.Uint16(b) {
	case MACControlPFC:
		if len(b) < 20 {
			return truncated("PFC", off, 20, len(b))
		}
		p.Kind = KindPFC
		p.ClassEnable = b[3]
		for i := range p.Quanta {
			p.Quanta[i] = binary.BigEndian.Uint16(b[4+2*i:])
		}
	case MACControlPause:
		if len(b) < 4 {
			return truncated("PAUSE", off, 4, len(b))
		}
		p.Kind = KindPause
		p.Quanta[0] = binary.BigEndian.Uint16(b[2:])
	}
	return nil
}

// Payload returns the RDMA payload of a decoded RoCEv2 packet (nil when
// Raw is nil).
func (p *Packet) Payload() []byte {
	off, end := int(p.PayloadOffset), int(p.PayloadOffset)+int(p.PayloadLen)
	if p.Raw == nil || end > len(p.Raw) {
		return nil
	}
	return p.Raw[off:end]
}
