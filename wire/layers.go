package wire

import (
	"sync"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// gopacket layer types of this package. They take the private range
// 1500–1519 of gopacket's application range (1000–1999); nothing else in
// rocelab may use those numbers.
const (
	layerTypeBase = 1500

	LayerTypeBTH        = gopacket.LayerType(layerTypeBase + 0) // RoCEv2 base transport header
	LayerTypeRETH       = gopacket.LayerType(layerTypeBase + 1) // RDMA extended transport header
	LayerTypeAETH       = gopacket.LayerType(layerTypeBase + 2) // ACK extended transport header
	LayerTypeImmDt      = gopacket.LayerType(layerTypeBase + 3) // immediate data
	LayerTypeMACControl = gopacket.LayerType(layerTypeBase + 4) // IEEE 802.3 MAC control (EtherType 0x8808)
	LayerTypePFC        = gopacket.LayerType(layerTypeBase + 5) // 802.1Qbb priority flow control
	LayerTypePause      = gopacket.LayerType(layerTypeBase + 6) // 802.3x PAUSE
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
		reg := func(lt gopacket.LayerType, name string, dec func([]byte, gopacket.PacketBuilder) error) {
			gopacket.RegisterLayerType(int(lt), gopacket.LayerTypeMetadata{Name: name, Decoder: gopacket.DecodeFunc(dec)})
		}
		reg(LayerTypeBTH, "BTH", decodeBTH)
		reg(LayerTypeRETH, "RETH", decodeRETH)
		reg(LayerTypeAETH, "AETH", decodeAETH)
		reg(LayerTypeImmDt, "ImmDt", decodeImmDt)
		reg(LayerTypeMACControl, "MACControl", decodeMACControl)
		reg(LayerTypePFC, "PFC", decodePFC)
		reg(LayerTypePause, "Pause", decodePause)
		layers.RegisterUDPPortLayerType(RoCEPort, LayerTypeBTH)
		layers.EthernetTypeMetadata[EtherTypeMACControl] = layers.EnumMetadata{
			DecodeWith: gopacket.DecodeFunc(decodeMACControl),
			Name:       "MACControl",
			LayerType:  LayerTypeMACControl,
		}
	})
}
