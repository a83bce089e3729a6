package capture

import (
	"errors"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocelab/rocelab/wire"
)

// layerUnderTest is a gopacket layer of this package.
type layerUnderTest interface {
	gopacket.DecodingLayer
	gopacket.SerializableLayer
}

// FuzzLayers feeds data to every layer's DecodeFromBytes: an error or a
// decode, never a panic; what decodes serializes and decodes back the same.
func FuzzLayers(f *testing.F) {
	samples, _ := wire.Samples()
	for _, s := range samples {
		var p wire.Packet
		if p.Decode(s.Frame) != nil {
			f.Fatal(s.Name)
		}
		switch p.Kind {
		case wire.KindRoCE, wire.KindCNP:
			end := int(p.PayloadOffset) + int(p.PayloadLen) + int(p.PadCnt) + wire.ICRCLen // end of the UDP datagram
			f.Add(s.Frame[p.L4Offset+wire.UDPLen : end])
			f.Add(s.Frame[p.L4Offset+wire.UDPLen+wire.BTHLen:])
		default:
			f.Add(s.Frame[wire.EthernetLen:])
			f.Add(s.Frame[wire.EthernetLen+2:])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mk := range []func() layerUnderTest{
			func() layerUnderTest { return &BTH{} },
			func() layerUnderTest { return &RETH{} },
			func() layerUnderTest { return &AETH{} },
			func() layerUnderTest { return &ImmDt{} },
			func() layerUnderTest { return &AtomicETH{} },
			func() layerUnderTest { return &AtomicAckETH{} },
			func() layerUnderTest { return &MACControl{} },
			func() layerUnderTest { return &PFC{} },
			func() layerUnderTest { return &Pause{} },
		} {
			l := mk()
			if err := l.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
				if !errors.Is(err, wire.ErrTruncated) && !errors.Is(err, wire.ErrMalformed) {
					t.Fatalf("%T: error %v wraps no sentinel", l, err)
				}
				continue
			}
			_ = l.NextLayerType()
			buf := gopacket.NewSerializeBuffer()
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, l, gopacket.Payload(l.LayerPayload())); err != nil {
				t.Fatalf("%T: serialize: %v", l, err)
			}
			again := mk()
			if err := again.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
				t.Fatalf("%T: decoding its own serialization %x: %v", l, buf.Bytes(), err)
			}
			if d := cmp.Diff(l, again, cmpopts.IgnoreFields(layers.BaseLayer{}, "Contents"),
				cmpopts.EquateEmpty(), cmp.AllowUnexported(RETH{}, AETH{}, DETH{}, followed{})); d != "" {
				t.Errorf("%T: round trip (-first +second):\n%s", l, d)
			}
		}
	})
}

// FuzzGopacket decodes whole frames through gopacket with the layers
// registered. gopacket recovers decoder panics into a DecodeFailure layer
// with the stack; a panic whose stack passes through this package fails.
// (Panics inside gopacket's own layers are gopacket's to fix.)
// ourFrame matches a stack frame of rocelab's decoders (this package's
// layers, or wire's descriptor decoder they call), not its tests.
var ourFrame = regexp.MustCompile(`rocelab/wire(/capture)?\.(decode|\(\*)`)

func FuzzGopacket(f *testing.F) {
	Register()
	addSeeds(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		pkt := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.DecodeOptions{NoCopy: true})
		if df, ok := pkt.ErrorLayer().(*gopacket.DecodeFailure); ok {
			if dump := df.Dump(); ourFrame.MatchString(dump) {
				t.Fatalf("a rocelab decoder panicked: %s", dump)
			}
		}
		_ = pkt.String()
	})
}
