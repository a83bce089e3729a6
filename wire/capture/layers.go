// Package capture reads captures with rocelab's codecs and lets gopacket
// read them too: [Read] decodes every frame of a pcap or pcapng file into
// wire's descriptor and checks each RoCEv2 frame's ICRC (what `rocelab
// wire decode` prints), and [Register] makes gopacket decode RoCEv2
// (UDP port 4791) with this package's layers ([BTH], [RETH], [AETH],
// [ImmDt]) and MAC control frames ([MACControl], [PFC], [Pause]).
//
// It is apart from wire because gopacket's layers package takes about
// 22 ms to initialise in every process that links it: a lab node, which
// only builds and decodes frames, does not.
package capture

import (
	"sync"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

// gopacket layer types of this package. They take the private range
// 1500–1519 of gopacket's application range (1000–1999); nothing else in
// rocelab may use those numbers.
const (
	layerTypeBase = 1500

	LayerTypeBTH          = gopacket.LayerType(layerTypeBase + 0) // RoCEv2 base transport header
	LayerTypeRETH         = gopacket.LayerType(layerTypeBase + 1) // RDMA extended transport header
	LayerTypeAETH         = gopacket.LayerType(layerTypeBase + 2) // ACK extended transport header
	LayerTypeImmDt        = gopacket.LayerType(layerTypeBase + 3) // immediate data
	LayerTypeMACControl   = gopacket.LayerType(layerTypeBase + 4) // IEEE 802.3 MAC control (EtherType 0x8808)
	LayerTypePFC          = gopacket.LayerType(layerTypeBase + 5) // 802.1Qbb priority flow control
	LayerTypePause        = gopacket.LayerType(layerTypeBase + 6) // 802.3x PAUSE
	LayerTypeDETH         = gopacket.LayerType(layerTypeBase + 7) // datagram extended transport header (UD)
	LayerTypeAtomicETH    = gopacket.LayerType(layerTypeBase + 8) // atomic extended transport header
	LayerTypeAtomicAckETH = gopacket.LayerType(layerTypeBase + 9) // atomic acknowledge extended transport header
)

var registerOnce sync.Once

// Register makes gopacket decode rocelab's packets: it registers the layer
// types above, decodes UDP destination port 4791 as a BTH, and EtherType
// 0x8808 as MAC control (gopacket v1.1.19 has no decoder for it and fails
// such frames with "Unable to decode EthernetType"; Register installs this
// package's). gopacket's registries are process-global, so this is the one
// place the package touches global state; Register is idempotent and safe
// to call from several goroutines. Call it before gopacket.NewPacket.
// DecodingLayerParser users need it only for the port and EtherType
// dispatch out of UDP and Ethernet.
func Register() {
	registerOnce.Do(func() {
		reg := func(lt gopacket.LayerType, name string, dec gopacket.DecodeFunc) {
			gopacket.RegisterLayerType(int(lt), gopacket.LayerTypeMetadata{Name: name, Decoder: dec})
		}
		reg(LayerTypeBTH, "BTH", decodeBTH)
		reg(LayerTypeRETH, "RETH", decoder[RETH]())
		reg(LayerTypeAETH, "AETH", decoder[AETH]())
		reg(LayerTypeImmDt, "ImmDt", decoder[ImmDt]())
		reg(LayerTypeDETH, "DETH", decoder[DETH]())
		reg(LayerTypeAtomicETH, "AtomicETH", decoder[AtomicETH]())
		reg(LayerTypeAtomicAckETH, "AtomicAckETH", decoder[AtomicAckETH]())
		reg(LayerTypeMACControl, "MACControl", decoder[MACControl]())
		reg(LayerTypePFC, "PFC", decoder[PFC]())
		reg(LayerTypePause, "Pause", decoder[Pause]())
		layers.RegisterUDPPortLayerType(wire.RoCEPort, LayerTypeBTH)
		layers.EthernetTypeMetadata[wire.EtherTypeMACControl] = layers.EnumMetadata{
			DecodeWith: decoder[MACControl](),
			Name:       "MACControl",
			LayerType:  LayerTypeMACControl,
		}
	})
}

// header is what each layer of this package is to gopacket.
type header interface {
	gopacket.DecodingLayer
	gopacket.Layer
}

// decodeHeader takes the first n bytes of data as the header of the layer
// called name (its Contents) and the rest as its Payload, or fails
// truncated, and has get read the layer's fields from the header. A layer
// that ends the frame (PFC, PAUSE) then sets its Payload to nil: the rest
// is padding.
func decodeHeader(b *layers.BaseLayer, name string, n int, data []byte, df gopacket.DecodeFeedback, get func(h []byte)) error {
	if len(data) < n {
		df.SetTruncated()
		return truncated(name, 0, n, len(data))
	}
	b.Contents, b.Payload = data[:n], data[n:]
	get(b.Contents)
	return nil
}

// prependHeader prepends a header of n bytes to buf and has put write the
// layer's fields into it.
func prependHeader(buf gopacket.SerializeBuffer, n int, put func(h []byte)) error {
	h, err := buf.PrependBytes(n)
	if err != nil {
		return err
	}
	put(h)
	return nil
}

// decodeInto decodes l from the start of data and adds it to p.
func decodeInto(l header, data []byte, p gopacket.PacketBuilder) error {
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	return nil
}

// decoder is gopacket's decoder for the layer a T is: it decodes a new T,
// adds it, and hands what follows to the layer the T names next, or stops
// where it names none (gopacket.LayerTypeZero).
func decoder[T any, P interface {
	*T
	header
}]() gopacket.DecodeFunc {
	return func(data []byte, p gopacket.PacketBuilder) error {
		l := P(new(T))
		if err := decodeInto(l, data, p); err != nil {
			return err
		}
		if next := l.NextLayerType(); next != gopacket.LayerTypeZero {
			return p.NextDecoder(next)
		}
		return nil
	}
}

// followed is embedded by the extension headers another one may follow:
// the BTH's decoder sets next to it, and NextLayerType returns it, else the
// payload.
type followed struct{ next gopacket.LayerType }

// NextLayerType returns the header the BTH said follows, else the payload.
func (f *followed) NextLayerType() gopacket.LayerType {
	if f.next != 0 {
		return f.next
	}
	return gopacket.LayerTypePayload
}
