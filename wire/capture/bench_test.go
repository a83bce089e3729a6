package capture

import (
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

// BenchmarkGopacketNewPacket is the slow, convenient path, for comparison.
func BenchmarkGopacketNewPacket(b *testing.B) {
	Register()
	spec, payload := benchSpec()
	frame, err := wire.BuildFrame(&spec, payload)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		pkt := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.NoCopy)
		if pkt.Layer(LayerTypeRETH) == nil {
			b.Fatal("no RETH")
		}
	}
}

// BenchmarkDecodingLayerParser is gopacket's fast path with these layers.
func BenchmarkDecodingLayerParser(b *testing.B) {
	Register()
	spec, payload := benchSpec()
	frame, err := wire.BuildFrame(&spec, payload)
	if err != nil {
		b.Fatal(err)
	}
	var (
		eth  layers.Ethernet
		vlan layers.Dot1Q
		ip4  layers.IPv4
		udp  layers.UDP
		bth  BTH
		reth RETH
		pl   gopacket.Payload
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &vlan, &ip4, &udp, &bth, &reth, &pl)
	decoded := make([]gopacket.LayerType, 0, 8)
	b.ReportAllocs()
	for b.Loop() {
		if err := parser.DecodeLayers(frame, &decoded); err != nil {
			b.Fatal(err)
		}
	}
	if len(decoded) != 7 {
		b.Fatalf("decoded %v", decoded)
	}
}
