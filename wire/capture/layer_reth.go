package capture

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

// RETH is the RDMA extended transport header (RDMA WRITE First/Only, READ
// Request), as a gopacket layer.
//
//	 0               1               2               3
//	+---------------------------------------------------------------+
//	|                     Virtual Address (64)                      |
//	|                                                               |
//	+---------------------------------------------------------------+
//	|                        Remote Key (32)                        |
//	+---------------------------------------------------------------+
//	|                        DMA Length (32)                        |
//	+---------------------------------------------------------------+
type RETH struct {
	layers.BaseLayer
	VA     uint64
	RKey   uint32
	DMALen uint32

	followed // next: ImmDt after RDMA WRITE Only with Immediate
}

// LayerType returns LayerTypeRETH.
func (r *RETH) LayerType() gopacket.LayerType { return LayerTypeRETH }

// CanDecode returns the layer type this DecodingLayer can decode.
func (r *RETH) CanDecode() gopacket.LayerClass { return LayerTypeRETH }

// DecodeFromBytes decodes a RETH at the start of data.
func (r *RETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	return decodeHeader(&r.BaseLayer, "RETH", wire.RETHLen, data, df, func(h []byte) {
		r.VA = binary.BigEndian.Uint64(h)
		r.RKey = binary.BigEndian.Uint32(h[8:])
		r.DMALen = binary.BigEndian.Uint32(h[12:])
		r.next = 0
	})
}

// SerializeTo prepends the RETH.
func (r *RETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependHeader(b, wire.RETHLen, func(h []byte) {
		binary.BigEndian.PutUint64(h, r.VA)
		binary.BigEndian.PutUint32(h[8:], r.RKey)
		binary.BigEndian.PutUint32(h[12:], r.DMALen)
	})
}
