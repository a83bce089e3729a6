package capture

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

// AtomicETH is the atomic extended transport header of an RC CmpSwap or
// FetchAdd request, as a gopacket layer: the remote 8-byte word (VA, RKey),
// the swap (or add) data and the compare data.
type AtomicETH struct {
	layers.BaseLayer
	VA      uint64
	RKey    uint32
	SwapAdd uint64
	Compare uint64
}

// LayerType returns LayerTypeAtomicETH.
func (a *AtomicETH) LayerType() gopacket.LayerType { return LayerTypeAtomicETH }

// CanDecode returns the layer type this DecodingLayer can decode.
func (a *AtomicETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicETH }

// NextLayerType returns the payload (an atomic request has none).
func (a *AtomicETH) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes decodes an AtomicETH at the start of data.
func (a *AtomicETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	return decodeHeader(&a.BaseLayer, "AtomicETH", wire.AtomicETHLen, data, df, func(h []byte) {
		a.VA = binary.BigEndian.Uint64(h)
		a.RKey = binary.BigEndian.Uint32(h[8:])
		a.SwapAdd = binary.BigEndian.Uint64(h[12:])
		a.Compare = binary.BigEndian.Uint64(h[20:])
	})
}

// SerializeTo prepends the AtomicETH.
func (a *AtomicETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependHeader(b, wire.AtomicETHLen, func(h []byte) {
		binary.BigEndian.PutUint64(h, a.VA)
		binary.BigEndian.PutUint32(h[8:], a.RKey)
		binary.BigEndian.PutUint64(h[12:], a.SwapAdd)
		binary.BigEndian.PutUint64(h[20:], a.Compare)
	})
}

// AtomicAckETH is the atomic acknowledge extended transport header: the
// remote word's value before the operation.
type AtomicAckETH struct {
	layers.BaseLayer
	Original uint64
}

// LayerType returns LayerTypeAtomicAckETH.
func (a *AtomicAckETH) LayerType() gopacket.LayerType { return LayerTypeAtomicAckETH }

// CanDecode returns the layer type this DecodingLayer can decode.
func (a *AtomicAckETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicAckETH }

// NextLayerType returns the payload (an atomic acknowledge has none).
func (a *AtomicAckETH) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes decodes an AtomicAckETH at the start of data.
func (a *AtomicAckETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	return decodeHeader(&a.BaseLayer, "AtomicAckETH", wire.AtomicAckETHLen, data, df, func(h []byte) {
		a.Original = binary.BigEndian.Uint64(h)
	})
}

// SerializeTo prepends the AtomicAckETH.
func (a *AtomicAckETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependHeader(b, wire.AtomicAckETHLen, func(h []byte) {
		binary.BigEndian.PutUint64(h, a.Original)
	})
}
