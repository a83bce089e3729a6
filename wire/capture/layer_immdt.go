package capture

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

// ImmDt is the immediate data header (SEND/RDMA WRITE … with Immediate),
// as a gopacket layer: 4 bytes handed to the receiver's completion.
type ImmDt struct {
	layers.BaseLayer
	Imm uint32
}

// LayerType returns LayerTypeImmDt.
func (i *ImmDt) LayerType() gopacket.LayerType { return LayerTypeImmDt }

// CanDecode returns the layer type this DecodingLayer can decode.
func (i *ImmDt) CanDecode() gopacket.LayerClass { return LayerTypeImmDt }

// NextLayerType returns the payload.
func (i *ImmDt) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes decodes an ImmDt at the start of data.
func (i *ImmDt) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	return decodeHeader(&i.BaseLayer, "ImmDt", wire.ImmDtLen, data, df, func(h []byte) {
		i.Imm = binary.BigEndian.Uint32(h)
	})
}

// SerializeTo prepends the ImmDt.
func (i *ImmDt) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependHeader(b, wire.ImmDtLen, func(h []byte) {
		binary.BigEndian.PutUint32(h, i.Imm)
	})
}
