package capture

import (
	"bytes"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

func TestManufacturerSpecificOpcode(t *testing.T) {
	Register()
	for _, op := range []wire.Opcode{0xC0, 0xC7, 0xE5, 0xFF, 0x6A /* an RD opcode: unknown here too */} {
		p := baseSpec()
		p.Opcode = uint8(op)
		payload := []byte("metaroce sack block")
		frame, err := wire.BuildFrame(&p, payload)
		if err != nil {
			t.Fatal(err)
		}
		var q wire.Packet
		if err := q.Decode(frame); err != nil {
			t.Fatalf("%v: Decode: %v", op, err)
		}
		if q.Kind != wire.KindRoCE || wire.Opcode(q.Opcode) != op || q.DestQP != 17 || q.PSN != 5 ||
			q.HasRETH || q.HasAETH || q.HasImm || !bytes.Equal(q.Payload(), payload) {
			t.Errorf("%v: decoded %s", op, q.Summary())
		}
		if err := q.VerifyICRC(); err != nil {
			t.Errorf("%v: %v", op, err)
		}
		pkt := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
		bth, ok := pkt.Layer(LayerTypeBTH).(*BTH)
		if !ok || bth.Opcode != op || pkt.ErrorLayer() != nil {
			t.Errorf("%v: gopacket layers %v, error %v", op, layerTypes(pkt), pkt.ErrorLayer())
			continue
		}
		if !bytes.Equal(pkt.ApplicationLayer().Payload(), payload) {
			t.Errorf("%v: gopacket payload %q", op, pkt.ApplicationLayer().Payload())
		}
		if op.ManufacturerSpecific() != (op >= 0xC0) || op.Known() {
			t.Errorf("%v: ManufacturerSpecific %v Known %v", op, op.ManufacturerSpecific(), op.Known())
		}
	}
}
