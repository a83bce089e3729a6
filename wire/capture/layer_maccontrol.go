package capture

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

// MACControl is the IEEE 802.3 MAC control header (EtherType 0x8808): a
// 16-bit opcode, followed by the PFC or PAUSE parameters.
type MACControl struct {
	layers.BaseLayer
	Opcode uint16 // MACControlPFC, MACControlPause, or another
}

// LayerType returns LayerTypeMACControl.
func (m *MACControl) LayerType() gopacket.LayerType { return LayerTypeMACControl }

// CanDecode returns the layer type this DecodingLayer can decode.
func (m *MACControl) CanDecode() gopacket.LayerClass { return LayerTypeMACControl }

// NextLayerType returns PFC or Pause by opcode, else the payload.
func (m *MACControl) NextLayerType() gopacket.LayerType {
	switch m.Opcode {
	case wire.MACControlPFC:
		return LayerTypePFC
	case wire.MACControlPause:
		return LayerTypePause
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the opcode at the start of data.
func (m *MACControl) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	return decodeHeader(&m.BaseLayer, "MAC control", 2, data, df, func(h []byte) {
		m.Opcode = binary.BigEndian.Uint16(h)
	})
}

// SerializeTo prepends the opcode.
func (m *MACControl) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependHeader(b, 2, func(h []byte) {
		binary.BigEndian.PutUint16(h, m.Opcode)
	})
}
