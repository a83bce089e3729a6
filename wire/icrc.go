package wire

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The invariant CRC (ICRC) of a RoCEv2 packet is a CRC-32 (IEEE) over:
// 8 bytes of 0xFF (standing for InfiniBand's LRH); the IP header with the
// fields routers change set to all ones (IPv4: TOS, TTL, header checksum;
// IPv6: traffic class, flow label, hop limit); the UDP header with its
// checksum set to ones; the BTH with byte 4 (FECN, BECN, reserved) set to
// ones; then everything after the BTH through the pad. It is carried in
// the last 4 bytes of the UDP payload, least-significant byte first.
//
// Because TOS is masked, ECN marking (see [Packet.MarkCE]) keeps the ICRC valid.

// computeICRC returns the ICRC of the RoCEv2 packet in frame whose IP
// header starts at l3, UDP header at l4, and UDP datagram ends at end
// (ICRC included). The caller guarantees the offsets are in range and the
// IP header is at most 60 bytes.
//
// The masked headers are copied into one stack buffer and hashed with a
// slicing-by-8 loop (crc32.Update would make the buffer escape, costing an
// allocation per packet); the rest of the packet goes to crc32.Update,
// which uses the CPU's CRC instructions.
func computeICRC(frame []byte, ipVersion uint8, l3, l4, end int) uint32 {
	var h [8 + 60 + UDPLen + BTHLen]byte
	copy(h[:8], "\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF") // stands for InfiniBand's LRH
	ip := h[8:]
	n := copy(ip[:l4-l3], frame[l3:l4])
	if ipVersion == 4 {
		ip[1] = 0xFF                // TOS
		ip[8] = 0xFF                // TTL
		ip[10], ip[11] = 0xFF, 0xFF // header checksum
	} else {
		ip[0] |= 0x0F                          // traffic class, high nibble
		ip[1], ip[2], ip[3] = 0xFF, 0xFF, 0xFF // traffic class, low nibble; flow label
		ip[7] = 0xFF                           // hop limit
	}
	u := ip[n:]
	copy(u[:UDPLen+BTHLen], frame[l4:])
	u[6], u[7] = 0xFF, 0xFF // UDP checksum
	u[UDPLen+4] = 0xFF      // BTH: FECN, BECN, reserved
	crc := slicing8Update(0, h[:8+n+UDPLen+BTHLen])
	return crc32.Update(crc, crc32.IEEETable, frame[l4+UDPLen+BTHLen:end-ICRCLen])
}

// ieee8 holds the slicing-by-8 tables of CRC-32 IEEE. It is computed once
// at package initialisation and never written again.
var ieee8 = func() (t [8][256]uint32) {
	t[0] = *crc32.IEEETable
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][byte(c)] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}()

// slicing8Update is crc32.Update(crc, crc32.IEEETable, p) in plain Go.
func slicing8Update(crc uint32, p []byte) uint32 {
	crc = ^crc
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint32(p)
		crc = ieee8[0][p[7]] ^ ieee8[1][p[6]] ^ ieee8[2][p[5]] ^ ieee8[3][p[4]] ^
			ieee8[4][crc>>24] ^ ieee8[5][byte(crc>>16)] ^ ieee8[6][byte(crc>>8)] ^ ieee8[7][byte(crc)]
		p = p[8:]
	}
	for _, c := range p {
		crc = ieee8[0][byte(crc)^c] ^ crc>>8
	}
	return ^crc
}

// roceBounds returns the UDP header offset and datagram end of a decoded
// RoCEv2 packet, or an error if p is not one with its bytes.
func (p *Packet) roceBounds() (l4, end int, err error) {
	if p.Kind != KindRoCE && p.Kind != KindCNP {
		return 0, 0, ErrNotRoCE
	}
	if p.Raw == nil {
		return 0, 0, fmt.Errorf("ICRC: %w: descriptor has no raw bytes", ErrNotRoCE)
	}
	l4 = int(p.L4Offset)
	if l4+UDPLen > len(p.Raw) {
		return 0, 0, truncated("UDP", l4, UDPLen, len(p.Raw)-l4)
	}
	end = l4 + int(binary.BigEndian.Uint16(p.Raw[l4+4:]))
	if end > len(p.Raw) || end-l4 < UDPLen+BTHLen+ICRCLen || l4-int(p.L3Offset) > 60 {
		return 0, 0, malformed("UDP", l4, "length does not fit a RoCEv2 packet")
	}
	return l4, end, nil
}

// ICRC computes the ICRC a decoded RoCEv2 packet (Kind KindRoCE or KindCNP,
// Raw set) should carry, and returns it with the ICRC it does carry.
func (p *Packet) ICRC() (computed, carried uint32, err error) {
	l4, end, err := p.roceBounds()
	if err != nil {
		return 0, 0, err
	}
	computed = computeICRC(p.Raw, p.IPVersion, int(p.L3Offset), l4, end)
	carried = binary.LittleEndian.Uint32(p.Raw[end-ICRCLen:])
	return computed, carried, nil
}

// VerifyICRC checks the ICRC of a decoded RoCEv2 packet: nil when it
// matches, an error wrapping ErrBadICRC when it does not.
func (p *Packet) VerifyICRC() error {
	computed, carried, err := p.ICRC()
	if err != nil {
		return err
	}
	if computed != carried {
		return fmt.Errorf("wire: %w: carried %08x, computed %08x", ErrBadICRC, carried, computed)
	}
	return nil
}

// VerifyICRC decodes frame and checks its ICRC.
func VerifyICRC(frame []byte) error {
	var p Packet
	if err := p.Decode(frame); err != nil {
		return err
	}
	return p.VerifyICRC()
}

// SealICRC computes the ICRC of the RoCEv2 frame and writes it into the
// frame's last 4 UDP payload bytes; it then recomputes the UDP checksum,
// which covers the ICRC, when the frame uses one (always over IPv6; over
// IPv4 when it is not 0). Use it after serializing layers with
// gopacket (whose BTH layer leaves room for the ICRC); [AppendFrame] seals
// its frames itself.
func SealICRC(frame []byte) error {
	var p Packet
	if err := p.Decode(frame); err != nil {
		return fmt.Errorf("seal ICRC: %w", err)
	}
	l4, end, err := p.roceBounds()
	if err != nil {
		return fmt.Errorf("seal ICRC: %w", err)
	}
	binary.LittleEndian.PutUint32(frame[end-ICRCLen:], computeICRC(frame, p.IPVersion, int(p.L3Offset), l4, end))
	if p.IPVersion == 6 || frame[l4+6]|frame[l4+7] != 0 {
		setUDPChecksum(frame, p.IPVersion, int(p.L3Offset), l4, end)
	}
	return nil
}
