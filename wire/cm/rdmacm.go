package cm

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/rocelab/rocelab/wire"
)

// rdma_cm's port spaces (the protocol byte of a service ID).
const (
	PortSpaceTCP   = 0x0106 // RDMA_PS_TCP: RC connections
	PortSpaceUDP   = 0x0111 // RDMA_PS_UDP: UD
	PortSpaceIPoIB = 0x0002
)

// ServiceID is the REQ's service ID of an rdma_cm listener on port in
// port space ps (IBTA annex A11: 0x0000000001, the protocol, the port).
func ServiceID(ps, port uint16) uint64 { return uint64(ps)<<16 | uint64(port) }

// ServicePort splits a service ID into rdma_cm's port space and port; ok
// is false for a service ID outside annex A11's range.
func ServicePort(id uint64) (ps, port uint16, ok bool) {
	return uint16(id >> 16), uint16(id), id>>24 == 1
}

// IPPrivateLen is the size of the RDMA IP CM Service header at the front
// of a REQ's private data; rdma_cm's consumer gets the 56 bytes after it.
const IPPrivateLen = 36

// IPPrivate is the RDMA IP CM Service header (IBTA annex A11): the
// addresses and source port of the rdma_cm connection a REQ asks for.
type IPPrivate struct {
	SrcPort  uint16
	Src, Dst netip.Addr
}

// AppendIPPrivate appends h (version 0.0) then consumer data to b.
func AppendIPPrivate(b []byte, h IPPrivate, consumer []byte) []byte {
	ipv := byte(4)
	if h.Src.Is6() && !h.Src.Is4In6() {
		ipv = 6
	}
	b = append(b, 0, ipv<<4)
	b = binary.BigEndian.AppendUint16(b, h.SrcPort)
	for _, a := range []netip.Addr{h.Src, h.Dst} {
		var raw [16]byte
		if ipv == 4 {
			v4 := a.Unmap().As4()
			copy(raw[12:], v4[:]) // IPv4 in the last 4 bytes
		} else {
			raw = a.As16()
		}
		b = append(b, raw[:]...)
	}
	return append(b, consumer...)
}

// DecodeIPPrivate reads the header at the front of a REQ's private data
// and returns the consumer's data after it.
func DecodeIPPrivate(p []byte, h *IPPrivate) ([]byte, error) {
	if len(p) < IPPrivateLen {
		return nil, fmt.Errorf("%w: %d bytes of private data, want the %d of an IP CM header", ErrMAD, len(p), IPPrivateLen)
	}
	if p[0]>>4 != 0 {
		return nil, fmt.Errorf("%w: IP CM version %d.%d", ErrMAD, p[0]>>4, p[0]&15)
	}
	h.SrcPort = binary.BigEndian.Uint16(p[2:])
	switch p[1] >> 4 {
	case 4:
		h.Src, h.Dst = netip.AddrFrom4([4]byte(p[16:20])), netip.AddrFrom4([4]byte(p[32:36]))
	case 6:
		h.Src, h.Dst = netip.AddrFrom16([16]byte(p[4:20])), netip.AddrFrom16([16]byte(p[20:36]))
	default:
		return nil, fmt.Errorf("%w: IP CM IP version %d", ErrMAD, p[1]>>4)
	}
	return p[IPPrivateLen:], nil
}

// GID is the RoCEv2 GID of addr: IPv4-mapped for IPv4.
func GID(addr netip.Addr) [16]byte {
	if addr.Is4() {
		return netip.AddrFrom16(addr.As16()).As16()
	}
	return addr.As16()
}

// Frame builds the RoCEv2 frame that carries mad from the GSI of the NIC
// p names (its MACs, addresses, UDP source port, priority) to its peer's:
// a UD SEND Only to QP1 with the GSI's Q_Key, PSN psn.
func Frame(p wire.Packet, psn uint32, mad []byte) ([]byte, error) {
	if len(mad) != MADLen {
		return nil, fmt.Errorf("cm frame: a MAD of %d bytes, want %d", len(mad), MADLen)
	}
	p.Kind, p.Opcode, p.DestQP, p.PSN, p.PKey = wire.KindRoCE, uint8(wire.OpUDSendOnly), GSI, psn&0xFFFFFF, 0xFFFF
	p.SetDETH(QKeyGSI, GSI)
	return wire.BuildFrame(&p, mad)
}
