package wire

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// PFCDstMAC is the destination of MAC control frames (PFC and PAUSE).
var PFCDstMAC = [6]byte{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01}

// DefaultTTL is written when a spec leaves TTL (hop limit) at 0.
const DefaultTTL = 64

// AppendFrame appends the frame that p describes to dst and returns the
// extended slice. It allocates only when dst lacks the capacity.
//
// p is the spec: the same descriptor [Packet.Decode] fills, read by Kind.
//
//   - KindRoCE and KindCNP: Ethernet [+ 802.1Q tag when HasVLAN, with PCP
//     and VLANID] + IPv4 or IPv6 (per SrcIP/DstIP; DSCP, ECN, TTL (0 means
//     DefaultTTL), IPID and DF for IPv4, FlowLabel for IPv6) + UDP (SrcPort,
//     destination port 4791) + BTH + the extension headers the opcode
//     carries (RETH: VA, RKey, DMALen; AETH: Syndrome, MSN; ImmDt: Imm) +
//     payload + pad (PadCnt is computed, p.PadCnt ignored) + ICRC. The IPv4
//     header checksum is set and the UDP checksum left 0, as RoCE NICs do;
//     over IPv6 the UDP checksum is computed (it is mandatory there).
//     KindCNP writes opcode 0x81 and, in place of the payload (which must be
//     empty), the 16 reserved zero bytes.
//   - KindPFC: a 802.1Qbb frame from SrcMAC to DstMAC (01:80:C2:00:00:01
//     when DstMAC is zero) with ClassEnable and the eight Quanta.
//   - KindPause: a 802.3x PAUSE frame with Quanta[0].
//
// Frames shorter than 60 bytes are padded with zeros to the Ethernet minimum.
// The Has* flags, offsets, Raw and Len of p are ignored: the opcode decides
// which extension headers are written.
func AppendFrame(dst []byte, p *Packet, payload []byte) ([]byte, error) {
	switch p.Kind {
	case KindRoCE, KindCNP:
		return appendRoCE(dst, p, payload)
	case KindPFC, KindPause:
		return appendMACControl(dst, p)
	}
	return dst, fmt.Errorf("wire: build: %w: kind %d has no builder", ErrInvalidSpec, p.Kind)
}

// BuildFrame is AppendFrame into a new buffer of the right size.
func BuildFrame(p *Packet, payload []byte) ([]byte, error) {
	return AppendFrame(make([]byte, 0, 128+len(payload)), p, payload)
}

// extend grows dst by n zero bytes and returns it with the new part.
func extend(dst []byte, n int) (whole, tail []byte) {
	dst = slices.Grow(dst, n)
	whole = dst[:len(dst)+n]
	tail = whole[len(dst):]
	clear(tail)
	return whole, tail
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("wire: build: %w: %s", ErrInvalidSpec, fmt.Sprintf(format, args...))
}

func checkRoCESpec(p *Packet, op Opcode, payload []byte) error {
	switch {
	case !p.SrcIP.IsValid() || !p.DstIP.IsValid():
		return invalid("source and destination IP must be set")
	case p.SrcIP.Is4() != p.DstIP.Is4():
		return invalid("source %v and destination %v are not the same IP version", p.SrcIP, p.DstIP)
	case p.HasVLAN && (p.PCP > 7 || p.VLANID > 0xFFF):
		return invalid("PCP %d / VLAN ID %d out of range", p.PCP, p.VLANID)
	case p.DSCP > 63 || p.ECN > 3:
		return invalid("DSCP %d / ECN %d out of range", p.DSCP, p.ECN)
	case p.FlowLabel > 0xFFFFF:
		return invalid("flow label %#x wider than 20 bits", p.FlowLabel)
	case p.TVer > 15:
		return invalid("TVer %d wider than 4 bits", p.TVer)
	case p.DestQP > 0xFFFFFF || p.PSN > 0xFFFFFF || p.MSN > 0xFFFFFF:
		return invalid("DestQP %#x / PSN %#x / MSN %#x wider than 24 bits", p.DestQP, p.PSN, p.MSN)
	case op == OpCNP && len(payload) != 0:
		return invalid("a CNP carries no payload")
	}
	return nil
}

func appendRoCE(dst []byte, p *Packet, payload []byte) ([]byte, error) {
	op := Opcode(p.Opcode)
	if p.Kind == KindCNP {
		op = OpCNP
	}
	if err := checkRoCESpec(p, op, payload); err != nil {
		return dst, err
	}
	ext := op.Ext()
	body := len(payload)
	if op == OpCNP {
		body = CNPReservedLen
	}
	pad := (4 - body%4) % 4
	udpLen := UDPLen + BTHLen + ext.Len() + body + pad + ICRCLen
	l3 := EthernetLen
	if p.HasVLAN {
		l3 += VLANTagLen
	}
	ipLen := IPv6Len
	if p.SrcIP.Is4() {
		ipLen = IPv4MinLen
	}
	// The UDP length and IPv6's payload length count the UDP datagram;
	// IPv4's total length counts its own header too.
	limit := udpLen
	if ipLen == IPv4MinLen {
		limit += ipLen
	}
	if limit > 0xFFFF {
		return dst, invalid("payload of %d bytes does not fit an IP packet", len(payload))
	}
	l4 := l3 + ipLen
	end := l4 + udpLen
	dst, f := extend(dst, max(end, MinFrameLen))

	writeEthernet(f, p.DstMAC, p.SrcMAC, p.HasVLAN, p.PCP, p.VLANID, ipEtherType(ipLen))
	ttl := p.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	tos := p.DSCP<<2 | p.ECN
	ip := f[l3:l4]
	if ipLen == IPv4MinLen {
		ip[0] = 0x45
		ip[1] = tos
		binary.BigEndian.PutUint16(ip[2:], uint16(ipLen+udpLen))
		binary.BigEndian.PutUint16(ip[4:], p.IPID)
		ip[6] = 0x40 // DF
		ip[8] = ttl
		ip[9] = ProtoUDP
		a4 := p.SrcIP.As4()
		copy(ip[12:], a4[:])
		a4 = p.DstIP.As4()
		copy(ip[16:], a4[:])
		setIPv4Checksum(ip)
	} else {
		binary.BigEndian.PutUint32(ip, 6<<28|uint32(tos)<<20|p.FlowLabel)
		binary.BigEndian.PutUint16(ip[4:], uint16(udpLen))
		ip[6] = ProtoUDP
		ip[7] = ttl
		a16 := p.SrcIP.As16()
		copy(ip[8:], a16[:])
		a16 = p.DstIP.As16()
		copy(ip[24:], a16[:])
	}
	u := f[l4:end]
	binary.BigEndian.PutUint16(u[0:], p.SrcPort)
	binary.BigEndian.PutUint16(u[2:], RoCEPort)
	binary.BigEndian.PutUint16(u[4:], uint16(udpLen))
	h := PutBTH(u[UDPLen:], op, p, uint8(pad))
	b := u[UDPLen:]
	if ext&ExtDETH != 0 {
		qkey, src := p.DETH()
		binary.BigEndian.PutUint32(b[h:], qkey)
		binary.BigEndian.PutUint32(b[h+4:], src&0xFFFFFF)
		h += DETHLen
	}
	if ext&ExtRETH != 0 {
		binary.BigEndian.PutUint64(b[h:], p.VA)
		binary.BigEndian.PutUint32(b[h+8:], p.RKey)
		binary.BigEndian.PutUint32(b[h+12:], p.DMALen)
		h += RETHLen
	}
	if ext&ExtAtomicETH != 0 {
		swap, cmp := p.AtomicETH()
		binary.BigEndian.PutUint64(b[h:], p.VA)
		binary.BigEndian.PutUint32(b[h+8:], p.RKey)
		binary.BigEndian.PutUint64(b[h+12:], swap)
		binary.BigEndian.PutUint64(b[h+20:], cmp)
		h += AtomicETHLen
	}
	if ext&ExtAETH != 0 {
		binary.BigEndian.PutUint32(b[h:], uint32(p.Syndrome)<<24|p.MSN)
		h += AETHLen
	}
	if ext&ExtAtomicAckETH != 0 {
		binary.BigEndian.PutUint64(b[h:], p.AtomicAck())
		h += AtomicAckETHLen
	}
	if ext&ExtImmDt != 0 {
		binary.BigEndian.PutUint32(b[h:], p.Imm)
		h += ImmDtLen
	}
	copy(b[h:], payload) // a CNP's reserved bytes and any pad are already zero
	binary.LittleEndian.PutUint32(f[end-ICRCLen:], computeICRC(f, uint8(ipVersion(ipLen)), l3, l4, end))
	if ipLen == IPv6Len {
		setUDPChecksum(f, 6, l3, l4, end)
	}
	return dst, nil
}

func ipEtherType(ipLen int) uint16 {
	if ipLen == IPv4MinLen {
		return EtherTypeIPv4
	}
	return EtherTypeIPv6
}

func ipVersion(ipLen int) int {
	if ipLen == IPv4MinLen {
		return 4
	}
	return 6
}

// writeEthernet writes the Ethernet header (and tag) at the start of f.
func writeEthernet(f []byte, dstMAC, srcMAC [6]byte, vlan bool, pcp uint8, vid uint16, et uint16) {
	copy(f[0:], dstMAC[:])
	copy(f[6:], srcMAC[:])
	if vlan {
		binary.BigEndian.PutUint16(f[12:], EtherTypeVLAN)
		binary.BigEndian.PutUint16(f[14:], uint16(pcp)<<13|vid)
		binary.BigEndian.PutUint16(f[16:], et)
		return
	}
	binary.BigEndian.PutUint16(f[12:], et)
}

// PutBTH writes a BTH at the start of b and returns its length: the one
// place that knows its bit layout on encode (wire/capture's gopacket
// layer uses it too).
func PutBTH(b []byte, op Opcode, p *Packet, pad uint8) int {
	b[0] = uint8(op)
	b[1] = pad<<4 | p.TVer
	if p.SE {
		b[1] |= 0x80
	}
	if p.MigReq {
		b[1] |= 0x40
	}
	binary.BigEndian.PutUint16(b[2:], p.PKey)
	binary.BigEndian.PutUint32(b[4:], p.DestQP)
	if p.FECN {
		b[4] |= 0x80
	}
	if p.BECN {
		b[4] |= 0x40
	}
	binary.BigEndian.PutUint32(b[8:], p.PSN)
	if p.AckReq {
		b[8] |= 0x80
	}
	return BTHLen
}

func appendMACControl(dst []byte, p *Packet) ([]byte, error) {
	dst, f := extend(dst, MinFrameLen)
	da := p.DstMAC
	if da == ([6]byte{}) {
		da = PFCDstMAC
	}
	writeEthernet(f, da, p.SrcMAC, false, 0, 0, EtherTypeMACControl)
	b := f[EthernetLen:]
	if p.Kind == KindPause {
		binary.BigEndian.PutUint16(b, MACControlPause)
		binary.BigEndian.PutUint16(b[2:], p.Quanta[0])
		return dst, nil
	}
	binary.BigEndian.PutUint16(b, MACControlPFC)
	binary.BigEndian.PutUint16(b[2:], uint16(p.ClassEnable))
	for i, q := range p.Quanta {
		binary.BigEndian.PutUint16(b[4+2*i:], q)
	}
	return dst, nil
}
