package wire

import (
	"net/netip"

	"github.com/rocelab/rocelab/core/clock"
)

// Kind says what a Packet carries, as far as the switch and the NIC care.
type Kind uint8

// Kinds of packets.
const (
	KindOther Kind = iota // an Ethernet frame the lab does not interpret
	KindIP                // IPv4/IPv6 that is not RoCEv2 (FE traffic: ping, TCP, …)
	KindRoCE              // RoCEv2: UDP dport 4791 with a BTH (data, ACK/NAK, MetaRoCE opcodes)
	KindCNP               // RoCEv2 congestion notification packet (BTH opcode 0x81)
	KindPFC               // 802.1Qbb priority flow control (MAC control opcode 0x0101)
	KindPause             // 802.3x PAUSE (MAC control opcode 0x0001)
)

// DefaultPKey is the default partition key (full membership), the one
// every RoCEv2 packet rocelab builds carries.
const DefaultPKey = 0xFFFF

// BTHControl is the base transport header's control fields: all of it but
// the opcode, the destination QP, AckReq and the PSN. The descriptor
// ([Packet]) and the capture layer (capture.BTH) both embed it, so the
// header's fields are named once.
type BTHControl struct {
	SE     bool // solicited event
	MigReq bool
	PadCnt uint8
	TVer   uint8
	PKey   uint16
	FECN   bool
	BECN   bool
}

// Packet is the descriptor the models work on: the fields a switch and a
// NIC look at, parsed once at the edge. Raw keeps the frame's bytes when
// they exist (emulation, captures); the simulator may leave Raw nil and set
// only the fields.
//
// Len is the Ethernet frame length as AF_PACKET sees it: destination MAC
// through the end of the payload (ICRC included), without the 4-byte FCS.
// Wire overhead (FCS, preamble, inter-frame gap) is added where
// serialization is modelled, not here.
type Packet struct {
	// The fields a switch reads for every packet come first, so that
	// forwarding touches one or two of the descriptor's cache lines
	// (classification, routing and the ECMP hash; see switchmodel).
	Len       int
	Kind      Kind
	IPVersion uint8 // 0 when not IP
	DSCP      uint8
	ECN       uint8 // 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
	TTL       uint8
	Protocol  uint8 // IPv4 protocol / IPv6 next header
	HasVLAN   bool
	PCP       uint8
	// UDP (for RoCEv2, DstPort is 4791 and SrcPort is flow entropy) or TCP ports.
	SrcPort, DstPort uint16
	DestQP           uint32 // BTH destination QP, 24 bits
	DstIP            netip.Addr
	SrcIP            netip.Addr

	Raw []byte

	// The rest is grouped by size, not by header, so that the descriptor
	// has no padding to speak of: it is 192 bytes, a size class of Go's
	// allocator, and a simulation keeps hundreds of thousands of them in
	// the switches' buffers (docs/performance.md, "Memory").

	// Ethernet and optional 802.1Q tag (HasVLAN, PCP above).
	DstMAC, SrcMAC [6]byte
	VLANID         uint16
	EtherType      uint16 // of the payload, after any tag

	// RETH: the remote virtual address (HasRETH, RKey and DMALen below).
	// A UD packet has a DETH and never a RETH: VA then holds the DETH
	// (DETH, SetDETH), which keeps the descriptor at 192 bytes.
	VA uint64

	FlowLabel uint32 // IPv6 only
	PSN       uint32 // BTH, 24 bits
	RKey      uint32 // RETH
	DMALen    uint32 // RETH
	MSN       uint32 // AETH, 24 bits
	Imm       uint32 // ImmDt

	// Offsets in Raw: the IP header (L3Offset), the UDP/TCP header
	// (L4Offset, 0 when none was parsed), and the RDMA payload
	// (PayloadOffset and PayloadLen, pad and ICRC excluded). 16 bits hold
	// them in any frame Decode takes: the headers before the payload are
	// a few dozen bytes, and IP's own 16-bit lengths bound the payload.
	L3Offset      uint16
	L4Offset      uint16
	PayloadOffset uint16
	PayloadLen    uint16

	IPID uint16 // IPv4 identification (0 for IPv6)

	// MAC control (PFC: ClassEnable and all eight Quanta; PAUSE: Quanta[0]).
	// An atomic request's AtomicETH operands and an atomic acknowledge's
	// original data live here too (AtomicETH, AtomicAck), which keeps the
	// descriptor at 192 bytes: a MAC control frame is never RoCE.
	Quanta [8]uint16

	// Base transport header (RoCE and CNP; DestQP and PSN above).
	BTHControl
	Opcode uint8
	AckReq bool

	// Extension headers, valid when the opcode carries them.
	HasRETH     bool
	HasAETH     bool
	Syndrome    uint8 // AETH
	HasImm      bool
	ClassEnable uint8 // MAC control
}

// Sink takes packets: a switch port, a NIC, a link, a capture tap.
// Whoever calls Receive hands over the packet; the sink may keep it.
type Sink interface {
	Receive(p *Packet)
}

// A ReceivePrefetcher is a Sink that can ask ahead for its own state that
// Receive(p) touches first (internal/prefetch). A link asks for its head
// packet, and its sink's state this way, one event before delivering it
// (sim.Prefetcher). It must change nothing.
type ReceivePrefetcher interface {
	Sink
	PrefetchReceive(p *Packet)
}

// LaunchSink is a Sink that can take a frame when its transmission starts.
// Launch(p, end) takes p now and treats it as if Receive(p) were called at
// end, the time its last bit leaves the transmitter (a link then delivers
// it at end plus its delay). A transmitter that launches needs no event at
// the end of each transmission. Launch reports false, taking nothing, when
// the sink cannot take p early (a fault chain with stages, which act at the
// time a frame is on the wire): the transmitter then calls Receive at end.
// Calls come in nondecreasing end.
type LaunchSink interface {
	Sink
	Launch(p *Packet, end clock.Time) bool
}

// DETH returns the datagram extended transport header of a UD packet: the
// Q_Key and the source QP (24 bits).
func (p *Packet) DETH() (qkey, srcQP uint32) { return uint32(p.VA >> 32), uint32(p.VA) & 0xFFFFFF }

// SetDETH sets a UD packet's DETH (see VA).
func (p *Packet) SetDETH(qkey, srcQP uint32) { p.VA = uint64(qkey)<<32 | uint64(srcQP&0xFFFFFF) }

// AtomicETH returns an atomic request's operands: the swap (CmpSwap) or add
// (FetchAdd) data and the compare data. Its VA and RKey are the packet's.
func (p *Packet) AtomicETH() (swapAdd, compare uint64) {
	return quantaWord(&p.Quanta, 0), quantaWord(&p.Quanta, 4)
}

// SetAtomicETH sets an atomic request's operands (see Quanta).
func (p *Packet) SetAtomicETH(swapAdd, compare uint64) {
	setQuantaWord(&p.Quanta, 0, swapAdd)
	setQuantaWord(&p.Quanta, 4, compare)
}

// AtomicAck returns an atomic acknowledge's original remote data.
func (p *Packet) AtomicAck() uint64 { return quantaWord(&p.Quanta, 0) }

// SetAtomicAck sets an atomic acknowledge's original remote data.
func (p *Packet) SetAtomicAck(orig uint64) { setQuantaWord(&p.Quanta, 0, orig) }

func quantaWord(q *[8]uint16, i int) uint64 {
	return uint64(q[i])<<48 | uint64(q[i+1])<<32 | uint64(q[i+2])<<16 | uint64(q[i+3])
}

func setQuantaWord(q *[8]uint16, i int, v uint64) {
	q[i], q[i+1], q[i+2], q[i+3] = uint16(v>>48), uint16(v>>32), uint16(v>>16), uint16(v)
}
