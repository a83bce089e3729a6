package capture

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

// PFC is the body of an 802.1Qbb priority-based flow control frame (MAC
// control opcode 0x0101), as a gopacket layer.
//
//	+-------------------------------+
//	| class-enable vector (16 bits; |  bit i set: Quanta[i] is valid
//	| the high 8 bits are reserved) |
//	+-------------------------------+
//	| time[0] … time[7] (16 bits    |  one quantum = 512 bit times;
//	| each)                         |  0 resumes the priority (XON)
//	+-------------------------------+
//
// The Ethernet padding after it is not part of the layer.
type PFC struct {
	layers.BaseLayer
	ClassEnable uint8
	Quanta      [8]uint16
}

// LayerType returns LayerTypePFC.
func (f *PFC) LayerType() gopacket.LayerType { return LayerTypePFC }

// CanDecode returns the layer type this DecodingLayer can decode.
func (f *PFC) CanDecode() gopacket.LayerClass { return LayerTypePFC }

// NextLayerType returns gopacket.LayerTypeZero: a PFC frame carries
// nothing after its pause times but padding.
func (f *PFC) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes the PFC parameters at the start of data.
func (f *PFC) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	return decodeHeader(&f.BaseLayer, "PFC", wire.PFCLen, data, df, func(h []byte) {
		f.ClassEnable = h[1]
		for i := range f.Quanta {
			f.Quanta[i] = binary.BigEndian.Uint16(h[2+2*i:])
		}
		f.Payload = nil
	})
}

// SerializeTo prepends the PFC parameters.
func (f *PFC) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependHeader(b, wire.PFCLen, func(h []byte) {
		binary.BigEndian.PutUint16(h, uint16(f.ClassEnable))
		for i, q := range f.Quanta {
			binary.BigEndian.PutUint16(h[2+2*i:], q)
		}
	})
}
