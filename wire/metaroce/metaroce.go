// Package metaroce is MetaRoCE's wire format: the opcodes it takes from
// the BTH's manufacturer-specific range, the capability bits two ends
// negotiate, and the headers and payloads it adds to RoCEv2 (Placement,
// SACK, Credit, Hello), each with its append and decode. docs/design.md
// describes the protocol; endpoint speaks it, and the compliance suite
// builds and reads its packets with this package.
package metaroce

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rocelab/rocelab/wire"
)

// psnMask keeps the 24 bits of a PSN.
const psnMask = 0xFFFFFF

// MetaRoCE packets use BTH opcodes in the manufacturer-specific range
// 0xC0–0xFF, so that any RoCEv2 parser reads a valid BTH (and the ICRC) and
// leaves the rest opaque. Control packets:
const (
	OpHello       wire.Opcode = 0xC0 // capability offer (payload: Hello)
	OpHelloAck    wire.Opcode = 0xC1 // capability confirmation (payload: Hello)
	OpSACK        wire.Opcode = 0xC2 // selective acknowledgement (payload: SACK)
	OpCreditGrant wire.Opcode = 0xC3 // receiver grants bytes (payload: Credit)
	OpCreditReq   wire.Opcode = 0xC4 // sender announces its backlog (payload: Credit)
)

// MetaRoCE data opcodes are OpDataBase | the RC opcode of the same
// operation (SEND First … READ Response Only, 0x00–0x10). Each carries a
// Placement header right after the BTH, then the payload.
const OpDataBase wire.Opcode = 0xE0

// DataOpcode returns the MetaRoCE data opcode for an RC opcode.
func DataOpcode(rc wire.Opcode) wire.Opcode { return OpDataBase | rc }

// IsDataOpcode reports whether o is a MetaRoCE data opcode, and its RC base.
func IsDataOpcode(o wire.Opcode) (wire.Opcode, bool) {
	if o >= OpDataBase && o <= OpDataBase|wire.OpReadResponseOnly {
		return o &^ OpDataBase, true
	}
	return 0, false
}

// Capability bits, in ConnInfo.Caps and Hello.Caps.
const (
	CapMetaRoCE  uint32 = 1 << 0 // selective ack/retransmit, out-of-order placement
	CapMultipath uint32 = 1 << 1 // the sender may spray over several UDP source ports
	CapCredit    uint32 = 1 << 2 // receiver-driven credit packets understood
	CapTrim      uint32 = 1 << 3 // trimmed headers (DSCP 63) are loss notifications
)

// Placement-header flags.
const (
	PlaceFirst uint8 = 1 << 0 // first packet of the message
	PlaceLast  uint8 = 1 << 1 // last packet of the message
	PlaceImm   uint8 = 1 << 2 // an immediate follows the header
)

// PlacementLen is the size of a Placement header without its immediate.
const PlacementLen = 24

// Placement is the header every MetaRoCE data packet carries after its BTH,
// so that it can be placed on arrival whatever arrived before it:
//
//	 0       1       2       3
//	+-------+-------+-------+-------+
//	| Flags |  Rsv  |    Reserved   |  0
//	+-------+-------+-------+-------+
//	|          MsgSeq (32)          |  4
//	+-------------------------------+
//	|            Addr (64)          |  8
//	|                               |
//	+-------------------------------+
//	|            RKey (32)          | 16
//	+-------------------------------+
//	|           MsgLen (32)         | 20
//	+-------------------------------+
//	|      Imm (32, with PlaceImm)  | 24
//	+-------------------------------+
//
// WRITE: Addr is the remote virtual address of this packet's first byte and
// RKey the remote key. SEND: Addr is the byte offset of this packet in the
// message, MsgSeq the send sequence number (the receive WQE it consumes).
// READ response: Addr is the byte offset in the READ. MsgLen is the whole
// message's length. WRITE with immediate also carries MsgSeq (it consumes a
// receive WQE). All fields are big-endian.
type Placement struct {
	Flags  uint8
	MsgSeq uint32
	Addr   uint64
	RKey   uint32
	MsgLen uint32
	Imm    uint32
}

// Len returns the encoded size of h.
func (h *Placement) Len() int {
	if h.Flags&PlaceImm != 0 {
		return PlacementLen + 4
	}
	return PlacementLen
}

// AppendPlacement appends h's encoding to b.
func AppendPlacement(b []byte, h *Placement) []byte {
	var w [PlacementLen + 4]byte
	w[0] = h.Flags
	binary.BigEndian.PutUint32(w[4:], h.MsgSeq)
	binary.BigEndian.PutUint64(w[8:], h.Addr)
	binary.BigEndian.PutUint32(w[16:], h.RKey)
	binary.BigEndian.PutUint32(w[20:], h.MsgLen)
	binary.BigEndian.PutUint32(w[24:], h.Imm)
	return append(b, w[:h.Len()]...)
}

// ErrShort reports a MetaRoCE payload shorter than its header.
var ErrShort = errors.New("metaroce: payload too short")

// DecodePlacement parses a Placement header from the start of b and returns
// the bytes after it.
func DecodePlacement(b []byte, h *Placement) ([]byte, error) {
	if len(b) < PlacementLen {
		return nil, fmt.Errorf("placement header: %w (%d bytes)", ErrShort, len(b))
	}
	h.Flags = b[0]
	h.MsgSeq = binary.BigEndian.Uint32(b[4:])
	h.Addr = binary.BigEndian.Uint64(b[8:])
	h.RKey = binary.BigEndian.Uint32(b[16:])
	h.MsgLen = binary.BigEndian.Uint32(b[20:])
	h.Imm = 0
	if h.Flags&PlaceImm != 0 {
		if len(b) < PlacementLen+4 {
			return nil, fmt.Errorf("placement immediate: %w (%d bytes)", ErrShort, len(b))
		}
		h.Imm = binary.BigEndian.Uint32(b[24:])
	}
	return b[h.Len():], nil
}

// SACK flags.
const (
	SACKECE  uint8 = 1 << 0 // the triggering packet arrived CE-marked
	SACKTrim uint8 = 1 << 1 // the triggering packet arrived trimmed: it is lost
	SACKDup  uint8 = 1 << 2 // the triggering packet was a duplicate
)

// MaxSACKWords bounds the SACK bitmap (8 words, 256 PSNs).
const MaxSACKWords = 8

// SACK is the payload of an OpSACK packet. The BTH PSN is the cumulative
// acknowledgement: every PSN up to and including it arrived. Bitmap bit i
// (word i/32, bit i%32 counted from the least significant) says that PSN
// BTH.PSN+2+i arrived (BTH.PSN+1 is missing, or the SACK would say so).
//
//	 0       1       2       3
//	+-------+-------+-------+-------+
//	| Flags | Words |   Reserved    |  0
//	+-------+-------+-------+-------+
//	| Rsv   |   Trigger PSN (24)    |  4
//	+-------+-----------------------+
//	| Rsv   |       MSN (24)        |  8
//	+-------+-----------------------+
//	|   Bitmap, Words × 32 bits     | 12
//	+-------------------------------+
type SACK struct {
	Flags   uint8
	Trigger uint32 // PSN of the packet whose arrival caused this SACK
	MSN     uint32 // messages completed by the responder (24 bits)
	Words   int
	Bitmap  [MaxSACKWords]uint32
}

// SACKHeaderLen is the size of a SACK payload without bitmap.
const SACKHeaderLen = 12

// AppendSACK appends s's encoding to b.
func AppendSACK(b []byte, s *SACK) []byte {
	var w [SACKHeaderLen + 4*MaxSACKWords]byte
	n := min(max(s.Words, 0), MaxSACKWords)
	w[0] = s.Flags
	w[1] = uint8(n)
	binary.BigEndian.PutUint32(w[4:], s.Trigger&psnMask)
	binary.BigEndian.PutUint32(w[8:], s.MSN&psnMask)
	for i := range n {
		binary.BigEndian.PutUint32(w[SACKHeaderLen+4*i:], s.Bitmap[i])
	}
	return append(b, w[:SACKHeaderLen+4*n]...)
}

// DecodeSACK parses a SACK payload.
func DecodeSACK(b []byte, s *SACK) error {
	if len(b) < SACKHeaderLen {
		return fmt.Errorf("sack: %w (%d bytes)", ErrShort, len(b))
	}
	n := int(b[1])
	if n > MaxSACKWords {
		return fmt.Errorf("sack: %d bitmap words, at most %d", n, MaxSACKWords)
	}
	if len(b) < SACKHeaderLen+4*n {
		return fmt.Errorf("sack bitmap: %w (%d bytes for %d words)", ErrShort, len(b), n)
	}
	*s = SACK{Flags: b[0], Words: n,
		Trigger: binary.BigEndian.Uint32(b[4:]) & psnMask,
		MSN:     binary.BigEndian.Uint32(b[8:]) & psnMask}
	for i := range n {
		s.Bitmap[i] = binary.BigEndian.Uint32(b[SACKHeaderLen+4*i:])
	}
	return nil
}

// Has reports whether bitmap bit i is set.
func (s *SACK) Has(i int) bool {
	return i >= 0 && i < 32*s.Words && s.Bitmap[i/32]&(1<<uint(i%32)) != 0
}

// CreditLen is the size of a Credit payload.
const CreditLen = 12

// Credit is the payload of OpCreditGrant (Bytes granted to flow Flow) and of
// OpCreditReq (the sender's backlog of Bytes on flow Flow). Flow is the path
// index on the sender's QP. BTH DestQP is the QP the packet is for.
//
//	+-------------------------------+
//	|           Flow (32)           |  0
//	+-------------------------------+
//	|           Bytes (64)          |  4
//	+-------------------------------+
type Credit struct {
	Flow  uint32
	Bytes int64
}

// AppendCredit appends c's encoding to b.
func AppendCredit(b []byte, c *Credit) []byte {
	var w [CreditLen]byte
	binary.BigEndian.PutUint32(w[0:], c.Flow)
	binary.BigEndian.PutUint64(w[4:], uint64(c.Bytes))
	return append(b, w[:]...)
}

// DecodeCredit parses a Credit payload.
func DecodeCredit(b []byte, c *Credit) error {
	if len(b) < CreditLen {
		return fmt.Errorf("credit: %w (%d bytes)", ErrShort, len(b))
	}
	c.Flow = binary.BigEndian.Uint32(b)
	c.Bytes = int64(binary.BigEndian.Uint64(b[4:]))
	if c.Bytes < 0 {
		return fmt.Errorf("credit: negative byte count %d", c.Bytes)
	}
	return nil
}

// HelloLen is the size of a Hello payload.
const HelloLen = 12

// HelloVersion is the MetaRoCE protocol version this code speaks.
const HelloVersion = 1

// Hello is the payload of OpHello and OpHelloAck: the capabilities the
// sender offers (Hello) or accepts (HelloAck), the number of paths it
// sprays over and the version.
//
//	+-------+-------+---------------+
//	|  Ver  | Paths |   Reserved    |  0
//	+-------+-------+---------------+
//	|           Caps (32)           |  4
//	+-------------------------------+
//	|        Reserved (32)          |  8
//	+-------------------------------+
type Hello struct {
	Version uint8
	Paths   uint8
	Caps    uint32
}

// AppendHello appends h's encoding to b.
func AppendHello(b []byte, h *Hello) []byte {
	var w [HelloLen]byte
	w[0], w[1] = h.Version, h.Paths
	binary.BigEndian.PutUint32(w[4:], h.Caps)
	return append(b, w[:]...)
}

// DecodeHello parses a Hello payload.
func DecodeHello(b []byte, h *Hello) error {
	if len(b) < HelloLen {
		return fmt.Errorf("hello: %w (%d bytes)", ErrShort, len(b))
	}
	*h = Hello{Version: b[0], Paths: b[1], Caps: binary.BigEndian.Uint32(b[4:])}
	if h.Version == 0 {
		return errors.New("hello: version 0")
	}
	return nil
}
