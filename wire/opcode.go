package wire

import "fmt"

// Opcode is a BTH opcode. Bits 7:5 select the transport (000 RC, 001 UC,
// 010 RD, 011 UD, 100 CNP, 101 XRC, 110 and 111 manufacturer-specific),
// bits 4:0 the operation.
type Opcode uint8

// The RC opcodes the lab speaks, and CNP.
const (
	OpSendFirst          Opcode = 0x00
	OpSendMiddle         Opcode = 0x01
	OpSendLast           Opcode = 0x02
	OpSendLastImm        Opcode = 0x03
	OpSendOnly           Opcode = 0x04
	OpSendOnlyImm        Opcode = 0x05
	OpWriteFirst         Opcode = 0x06
	OpWriteMiddle        Opcode = 0x07
	OpWriteLast          Opcode = 0x08
	OpWriteLastImm       Opcode = 0x09
	OpWriteOnly          Opcode = 0x0A
	OpWriteOnlyImm       Opcode = 0x0B
	OpReadRequest        Opcode = 0x0C
	OpReadResponseFirst  Opcode = 0x0D
	OpReadResponseMiddle Opcode = 0x0E
	OpReadResponseLast   Opcode = 0x0F
	OpReadResponseOnly   Opcode = 0x10
	OpAcknowledge        Opcode = 0x11
	OpAtomicAcknowledge  Opcode = 0x12
	OpCompareSwap        Opcode = 0x13
	OpFetchAdd           Opcode = 0x14
	// Unreliable Datagram (InfiniBand: the UD opcodes are
	// 0b011 in the top three bits).
	OpUDSendOnly    Opcode = 0x64
	OpUDSendOnlyImm Opcode = 0x65
	OpCNP           Opcode = 0x81
)

// Ext is a set of extension headers that follow the BTH.
type Ext uint8

// Extension headers. After the BTH they appear as DETH, RETH or
// AtomicETH, AETH, AtomicAckETH, ImmDt (the codecs' order).
const (
	ExtRETH         Ext = 1 << iota // RDMA extended transport header, 16 bytes
	ExtAETH                         // ACK extended transport header, 4 bytes
	ExtImmDt                        // immediate data, 4 bytes
	ExtDETH                         // datagram extended transport header, 8 bytes (UD)
	ExtAtomicETH                    // atomic extended transport header, 28 bytes
	ExtAtomicAckETH                 // atomic acknowledge extended transport header, 8 bytes
)

// Extension header sizes in bytes.
const (
	BTHLen   = 12
	RETHLen  = 16
	AETHLen  = 4
	ImmDtLen = 4
	DETHLen  = 8
	// AtomicETHLen: virtual address, R_Key, swap (or add) data, compare
	// data; AtomicAckETHLen: the original remote data.
	AtomicETHLen    = 28
	AtomicAckETHLen = 8
	ICRCLen         = 4
	// PFCLen is the size of the PFC parameters after the MAC control
	// opcode (class-enable vector and eight pause times).
	PFCLen = 18
	// CNPReservedLen is the size of the reserved block after a CNP's BTH.
	CNPReservedLen = 16
	// RoCEPort is the UDP destination port of RoCEv2.
	RoCEPort = 4791
)

// extLens are the sizes of the extension headers, by bit of Ext.
var extLens = [...]int{RETHLen, AETHLen, ImmDtLen, DETHLen, AtomicETHLen, AtomicAckETHLen}

// Len is the total size of the extension headers in e.
func (e Ext) Len() int {
	n := 0
	for i, l := range extLens {
		if e&(1<<i) != 0 {
			n += l
		}
	}
	return n
}

type opcodeInfo struct {
	name  string
	ext   Ext
	known bool
}

// opcodes is the opcode table: name and extension headers of each opcode
// the codecs understand. Opcodes not in it decode as a valid BTH whose
// payload is left opaque.
var opcodes = [256]opcodeInfo{
	OpSendFirst:          {"RC SEND First", 0, true},
	OpSendMiddle:         {"RC SEND Middle", 0, true},
	OpSendLast:           {"RC SEND Last", 0, true},
	OpSendLastImm:        {"RC SEND Last with Immediate", ExtImmDt, true},
	OpSendOnly:           {"RC SEND Only", 0, true},
	OpSendOnlyImm:        {"RC SEND Only with Immediate", ExtImmDt, true},
	OpWriteFirst:         {"RC RDMA WRITE First", ExtRETH, true},
	OpWriteMiddle:        {"RC RDMA WRITE Middle", 0, true},
	OpWriteLast:          {"RC RDMA WRITE Last", 0, true},
	OpWriteLastImm:       {"RC RDMA WRITE Last with Immediate", ExtImmDt, true},
	OpWriteOnly:          {"RC RDMA WRITE Only", ExtRETH, true},
	OpWriteOnlyImm:       {"RC RDMA WRITE Only with Immediate", ExtRETH | ExtImmDt, true},
	OpReadRequest:        {"RC RDMA READ Request", ExtRETH, true},
	OpReadResponseFirst:  {"RC RDMA READ Response First", ExtAETH, true},
	OpReadResponseMiddle: {"RC RDMA READ Response Middle", 0, true},
	OpReadResponseLast:   {"RC RDMA READ Response Last", ExtAETH, true},
	OpReadResponseOnly:   {"RC RDMA READ Response Only", ExtAETH, true},
	OpAcknowledge:        {"RC Acknowledge", ExtAETH, true},
	OpAtomicAcknowledge:  {"RC ATOMIC Acknowledge", ExtAETH | ExtAtomicAckETH, true},
	OpCompareSwap:        {"RC CmpSwap", ExtAtomicETH, true},
	OpFetchAdd:           {"RC FetchAdd", ExtAtomicETH, true},
	OpUDSendOnly:         {"UD Send Only", ExtDETH, true},
	OpUDSendOnlyImm:      {"UD Send Only with Immediate", ExtDETH | ExtImmDt, true},
	OpCNP:                {"CNP", 0, true},
}

// Known reports whether the codecs know the opcode's extension headers.
func (o Opcode) Known() bool { return opcodes[o].known }

// Ext returns the extension headers the opcode carries (none for an
// unknown opcode, whose payload stays opaque).
func (o Opcode) Ext() Ext { return opcodes[o].ext }

// ManufacturerSpecific reports whether o is in 0xC0–0xFF, the range
// MetaRoCE uses for its own packets.
func (o Opcode) ManufacturerSpecific() bool { return o >= 0xC0 }

// String returns the opcode's name, or its number for an unknown one.
func (o Opcode) String() string {
	if opcodes[o].known {
		return opcodes[o].name
	}
	if o.ManufacturerSpecific() {
		return fmt.Sprintf("manufacturer-specific 0x%02x", uint8(o))
	}
	return fmt.Sprintf("opcode 0x%02x", uint8(o))
}

// AETH syndromes: bits 6:5 give the class, bits 4:0 a credit count (ACK),
// an RNR timer (RNR NAK) or a NAK code.
const (
	SyndromeClassACK = 0x00 // ACK; low 5 bits: credit code (0x1F: invalid)
	SyndromeClassRNR = 0x20 // RNR NAK; low 5 bits: minimum RNR NAK timer
	SyndromeClassNAK = 0x60 // NAK; low 5 bits: one of the NAK codes below

	SyndromeNAKPSNSequence    = 0x60 // PSN sequence error
	SyndromeNAKInvalidRequest = 0x61 // invalid request
	SyndromeNAKRemoteAccess   = 0x62 // remote access error
	SyndromeNAKRemoteOp       = 0x63 // remote operational error
)

// SyndromeACK is the syndrome of an ACK with the given credit code (0–31).
func SyndromeACK(credit uint8) uint8 { return SyndromeClassACK | credit&0x1F }

// SyndromeRNR is the syndrome of an RNR NAK with the given timer code (0–31).
func SyndromeRNR(timer uint8) uint8 { return SyndromeClassRNR | timer&0x1F }

// SyndromeString names an AETH syndrome.
func SyndromeString(s uint8) string {
	switch s & 0x60 {
	case SyndromeClassACK:
		return fmt.Sprintf("ACK credit %d", s&0x1F)
	case SyndromeClassRNR:
		return fmt.Sprintf("RNR NAK timer %d", s&0x1F)
	case SyndromeClassNAK:
		switch s & 0x7F {
		case SyndromeNAKPSNSequence:
			return "NAK PSN sequence error"
		case SyndromeNAKInvalidRequest:
			return "NAK invalid request"
		case SyndromeNAKRemoteAccess:
			return "NAK remote access error"
		case SyndromeNAKRemoteOp:
			return "NAK remote operational error"
		}
		return fmt.Sprintf("NAK code %d", s&0x1F)
	}
	return fmt.Sprintf("reserved syndrome 0x%02x", s)
}
