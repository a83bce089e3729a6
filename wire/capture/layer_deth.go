package capture

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

// DETH is the datagram extended transport header of UD packets, as a
// gopacket layer: the Q_Key the receiving QP checks and the sending QP.
type DETH struct {
	layers.BaseLayer
	QKey     uint32
	SrcQP    uint32 // 24 bits
	followed        // next: ImmDt after UD SEND Only with Immediate
}

// LayerType returns LayerTypeDETH.
func (d *DETH) LayerType() gopacket.LayerType { return LayerTypeDETH }

// CanDecode returns the layer type this DecodingLayer can decode.
func (d *DETH) CanDecode() gopacket.LayerClass { return LayerTypeDETH }

// DecodeFromBytes decodes a DETH at the start of data.
func (d *DETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	return decodeHeader(&d.BaseLayer, "DETH", wire.DETHLen, data, df, func(h []byte) {
		d.QKey = binary.BigEndian.Uint32(h)
		d.SrcQP = binary.BigEndian.Uint32(h[4:]) & 0xFFFFFF
		d.next = 0
	})
}

// SerializeTo prepends the DETH.
func (d *DETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if d.SrcQP > 0xFFFFFF {
		return invalid("DETH: source QP %#x out of range", d.SrcQP)
	}
	return prependHeader(b, wire.DETHLen, func(h []byte) {
		binary.BigEndian.PutUint32(h, d.QKey)
		binary.BigEndian.PutUint32(h[4:], d.SrcQP)
	})
}
