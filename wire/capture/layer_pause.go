package capture

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Pause is the body of an 802.3x PAUSE frame (MAC control opcode 0x0001),
// as a gopacket layer: one pause time for the whole link, in quanta of 512
// bit times. The Ethernet padding after it is not part of the layer.
type Pause struct {
	layers.BaseLayer
	Quanta uint16
}

// LayerType returns LayerTypePause.
func (f *Pause) LayerType() gopacket.LayerType { return LayerTypePause }

// CanDecode returns the layer type this DecodingLayer can decode.
func (f *Pause) CanDecode() gopacket.LayerClass { return LayerTypePause }

// NextLayerType returns gopacket.LayerTypeZero: a PAUSE frame carries
// nothing after its pause time but padding.
func (f *Pause) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes the pause time at the start of data.
func (f *Pause) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	return decodeHeader(&f.BaseLayer, "PAUSE", 2, data, df, func(h []byte) {
		f.Quanta = binary.BigEndian.Uint16(h)
		f.Payload = nil
	})
}

// SerializeTo prepends the pause time.
func (f *Pause) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependHeader(b, 2, func(h []byte) {
		binary.BigEndian.PutUint16(h, f.Quanta)
	})
}
