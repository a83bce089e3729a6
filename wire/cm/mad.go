package cm

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MAD sizes and the management class of the CM.
const (
	MADLen    = 256 // a MAD, header and data
	HeaderLen = 24
	DataLen   = MADLen - HeaderLen // a CM message with its private data

	BaseVersion  = 1
	MgmtClassCM  = 0x07
	ClassVersion = 2
	// MethodSend is the method of every CM message.
	MethodSend = 0x03
)

// GSI is the general services QP every port has, and QKeyGSI the Q_Key
// its datagrams carry.
const (
	GSI     = 1
	QKeyGSI = 0x80010000
)

// AttrID names a CM message (the MAD header's attribute ID).
type AttrID uint16

// CM attribute IDs (IBTA table 104).
const (
	AttrREQ  AttrID = 0x0010
	AttrMRA  AttrID = 0x0011
	AttrREJ  AttrID = 0x0012
	AttrREP  AttrID = 0x0013
	AttrRTU  AttrID = 0x0014
	AttrDREQ AttrID = 0x0015
	AttrDREP AttrID = 0x0016
)

var attrNames = map[AttrID]string{AttrREQ: "REQ", AttrMRA: "MRA", AttrREJ: "REJ", AttrREP: "REP",
	AttrRTU: "RTU", AttrDREQ: "DREQ", AttrDREP: "DREP"}

func (a AttrID) String() string {
	if s, ok := attrNames[a]; ok {
		return s
	}
	return fmt.Sprintf("attr 0x%04x", uint16(a))
}

// Header is the common MAD header of a CM message.
type Header struct {
	Method uint8
	Status uint16
	// ClassSpecific is 0 in every CM message.
	ClassSpecific uint16
	// TID is the transaction ID: a REQ's, kept by the messages that
	// answer it.
	TID     uint64
	Attr    AttrID
	AttrMod uint32
}

// ErrMAD is wrapped by every decode error of this package.
var ErrMAD = errors.New("not a CM MAD")

// appendHeader appends h with the CM's versions and class.
func appendHeader(b []byte, h *Header) []byte {
	b = append(b, BaseVersion, MgmtClassCM, ClassVersion, h.Method)
	b = binary.BigEndian.AppendUint16(b, h.Status)
	b = binary.BigEndian.AppendUint16(b, h.ClassSpecific)
	b = binary.BigEndian.AppendUint64(b, h.TID)
	b = binary.BigEndian.AppendUint16(b, uint16(h.Attr))
	b = append(b, 0, 0)
	return binary.BigEndian.AppendUint32(b, h.AttrMod)
}

// DecodeHeader reads the header of mad, a whole MAD, and returns its
// message data.
func DecodeHeader(mad []byte, h *Header) ([]byte, error) {
	if len(mad) < MADLen {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrMAD, len(mad), MADLen)
	}
	if mad[0] != BaseVersion || mad[1] != MgmtClassCM || mad[2] != ClassVersion {
		return nil, fmt.Errorf("%w: version %d, class 0x%02x, class version %d", ErrMAD, mad[0], mad[1], mad[2])
	}
	*h = Header{Method: mad[3], Status: binary.BigEndian.Uint16(mad[4:]), ClassSpecific: binary.BigEndian.Uint16(mad[6:]),
		TID: binary.BigEndian.Uint64(mad[8:]), Attr: AttrID(binary.BigEndian.Uint16(mad[16:])), AttrMod: binary.BigEndian.Uint32(mad[20:])}
	return mad[HeaderLen:MADLen], nil
}

// Message is a CM message: it knows its attribute and fills its data (the
// DataLen bytes after the header, zeroed).
type Message interface {
	Attr() AttrID
	put(d []byte)
}

// AppendMAD appends the MAD of m with transaction ID tid to b.
func AppendMAD(b []byte, tid uint64, m Message) []byte {
	b = appendHeader(b, &Header{Method: MethodSend, TID: tid, Attr: m.Attr()})
	start := len(b)
	b = append(b, make([]byte, DataLen)...)
	m.put(b[start:])
	return b
}

// field is bits [bit, bit+width) of the big-endian word of n bytes at
// off, counted from its most significant bit, as IBTA draws them.
type field struct{ off, n, bit, width int }

func (f field) shift() uint  { return uint(f.n*8 - f.bit - f.width) }
func (f field) mask() uint64 { return 1<<uint(f.width) - 1 }

func (f field) get(d []byte) uint64 {
	var w uint64
	for _, c := range d[f.off : f.off+f.n] {
		w = w<<8 | uint64(c)
	}
	return w >> f.shift() & f.mask()
}

func (f field) set(d []byte, v uint64) {
	var w uint64
	for _, c := range d[f.off : f.off+f.n] {
		w = w<<8 | uint64(c)
	}
	w = w&^(f.mask()<<f.shift()) | (v&f.mask())<<f.shift()
	for i := f.n - 1; i >= 0; i-- {
		d[f.off+i] = byte(w)
		w >>= 8
	}
}

// u8, u16, u32, u64 and u24 are whole fields; bits a part of a byte.
func u8(off int) field           { return field{off, 1, 0, 8} }
func u16(off int) field          { return field{off, 2, 0, 16} }
func u32(off int) field          { return field{off, 4, 0, 32} }
func u64(off int) field          { return field{off, 8, 0, 64} }
func u24(off int) field          { return field{off, 4, 0, 24} } // the top 24 bits of a word
func bits(off, bit, w int) field { return field{off, 1, bit, w} }
