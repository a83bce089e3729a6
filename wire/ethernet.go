package wire

import "github.com/rocelab/rocelab/core/clock"

// Ethernet facts every sender and every queue needs: how many bytes a frame
// really occupies on the wire, how long a PFC pause lasts, and the
// conventional DSCP → priority marking of a RoCE fabric.

// Frame overhead added to Packet.Len (which excludes the FCS) to get the
// bytes a frame occupies on the wire.
const (
	FCSBytes      = 4
	PreambleBytes = 8 // preamble and start-of-frame delimiter
	IFGBytes      = 12
	MinFrameBytes = 64 // minimum Ethernet frame, FCS included
	// OverheadBytes is what a frame of at least the minimum size adds.
	OverheadBytes = FCSBytes + PreambleBytes + IFGBytes
)

// OnWireBytes returns the bytes a frame of length n (Packet.Len, FCS
// excluded) occupies on the wire: padded to the 64-byte minimum with FCS,
// plus preamble, start delimiter and inter-frame gap.
func OnWireBytes(n int) int {
	f := n + FCSBytes
	if f < MinFrameBytes {
		f = MinFrameBytes
	}
	return f + PreambleBytes + IFGBytes
}

// PauseTime returns how long quanta pause quanta last on a link of rate r:
// one 802.1Qbb quantum is 512 bit times.
func PauseTime(r clock.Rate, quanta uint16) clock.Duration {
	return r.Serialize(int(quanta) * 64)
}

// Conventional RoCE marking (docs/design.md, protocol notes): RoCE data in DSCP
// 26 rides the lossless priority 3, CNPs in DSCP 48 a strict priority 6.
const (
	DSCPRoCEData = 26
	DSCPCNP      = 48
	PrioRoCEData = 3
	PrioCNP      = 6
)

// DefaultDSCPToTC returns the conventional DSCP → traffic class map: DSCP
// 26 → 3, DSCP 48 → 6, every other DSCP → 0.
func DefaultDSCPToTC() [64]uint8 {
	var m [64]uint8
	m[DSCPRoCEData] = PrioRoCEData
	m[DSCPCNP] = PrioCNP
	return m
}

// MessageOnWire returns the bytes an RDMA message of size payload bytes
// occupies on the wire as RoCEv2 over IPv4 without VLAN tag, cut into
// packets of at most mtu payload bytes (the path MTU): per packet
// Ethernet, IPv4, UDP, BTH, ICRC and the frame overhead of OnWireBytes,
// plus firstExt bytes of extension headers in the first packet (RETHLen
// for a WRITE). A message of 0 bytes is one packet. The best goodput a
// link of rate r carries for such messages is size/MessageOnWire × r.
func MessageOnWire(size, mtu, firstExt int) int {
	const hdr = EthernetLen + IPv4MinLen + UDPLen + BTHLen + ICRCLen
	if mtu <= 0 {
		mtu = max(size, 1)
	}
	first := min(size, mtu)
	n := OnWireBytes(hdr + firstExt + first)
	rest := size - first
	n += rest / mtu * OnWireBytes(hdr+mtu)
	if r := rest % mtu; r > 0 {
		n += OnWireBytes(hdr + r)
	}
	return n
}
