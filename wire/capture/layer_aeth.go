package capture

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

// AETH is the ACK extended transport header (Acknowledge, RDMA READ
// Response First/Last/Only), as a gopacket layer.
//
//	 0               1               2               3
//	+---------------+-----------------------------------------------+
//	|   Syndrome    |          Message Sequence Number (24)         |
//	+---------------+-----------------------------------------------+
//
// Syndrome bits 6:5 give the class (ACK, RNR NAK, NAK); see [SyndromeString].
type AETH struct {
	layers.BaseLayer
	Syndrome uint8
	MSN      uint32 // 24 bits
	followed        // next: AtomicAckETH after an ATOMIC Acknowledge
}

// LayerType returns LayerTypeAETH.
func (a *AETH) LayerType() gopacket.LayerType { return LayerTypeAETH }

// CanDecode returns the layer type this DecodingLayer can decode.
func (a *AETH) CanDecode() gopacket.LayerClass { return LayerTypeAETH }

// DecodeFromBytes decodes an AETH at the start of data.
func (a *AETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	return decodeHeader(&a.BaseLayer, "AETH", wire.AETHLen, data, df, func(h []byte) {
		w := binary.BigEndian.Uint32(h)
		a.Syndrome = uint8(w >> 24)
		a.MSN = w & 0xFFFFFF
		a.next = 0
	})
}

// SerializeTo prepends the AETH.
func (a *AETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if a.MSN > 0xFFFFFF {
		return invalid("AETH: MSN %#x wider than 24 bits", a.MSN)
	}
	return prependHeader(b, wire.AETHLen, func(h []byte) {
		binary.BigEndian.PutUint32(h, uint32(a.Syndrome)<<24|a.MSN)
	})
}
