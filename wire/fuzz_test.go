package wire

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// addSeeds adds the samples and the real NIC's CNP to a fuzz corpus.
func addSeeds(f *testing.F) {
	samples, err := Samples()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range samples {
		f.Add(s.Frame)
	}
	f.Add(mustHex(f, cnpConnectX4))
}

// FuzzDecode: Decode never panics, its offsets stay inside the frame, and
// what it decodes as RoCE rebuilds into a frame that decodes the same.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		var p Packet
		err := p.Decode(frame)
		if err != nil {
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode error %v wraps no sentinel", err)
			}
			return
		}
		_ = p.Summary()
		if p.Kind != KindRoCE && p.Kind != KindCNP {
			p.MarkCE()
			return
		}
		if p.PayloadOffset < 0 || p.PayloadLen < 0 || p.PayloadOffset+p.PayloadLen > len(frame) {
			t.Fatalf("payload [%d:+%d] outside a %d-byte frame", p.PayloadOffset, p.PayloadLen, len(frame))
		}
		_ = p.VerifyICRC()
		payload := bytes.Clone(p.Payload())
		spec := p
		if spec.Kind == KindCNP {
			payload = nil
		}
		rebuilt, err := BuildFrame(&spec, payload)
		if errors.Is(err, ErrInvalidSpec) && strings.Contains(err.Error(), "does not fit an IP packet") && len(payload) > 0xFFFF-80 {
			// Rebuilt with the pad its payload needs, which may be more
			// than the frame carried: near 64 KiB that no longer fits.
			return
		}
		if err != nil {
			t.Fatalf("rebuilding %s: %v", p.Summary(), err)
		}
		var q Packet
		if err := q.Decode(rebuilt); err != nil {
			t.Fatalf("decoding the rebuilt frame: %v", err)
		}
		if err := q.VerifyICRC(); err != nil {
			t.Fatalf("rebuilt frame: %v", err)
		}
		// The builder normalises these: IPv4 options are dropped, the pad is
		// recomputed, a CNP gets its 16 reserved bytes, TTL 0 becomes 64.
		ignore := cmpopts.IgnoreFields(Packet{}, "Raw", "Len", "L3Offset", "L4Offset", "PayloadOffset",
			"PayloadLen", "PadCnt", "TTL", "IPID")
		if !p.HasVLAN {
			p.VLANID, p.PCP, q.VLANID, q.PCP = 0, 0, 0, 0
		}
		if p.TTL != 0 && q.TTL != p.TTL {
			t.Errorf("TTL %d rebuilt as %d", p.TTL, q.TTL)
		}
		if d := cmp.Diff(p, q, ignore, cmpopts.EquateComparable(p.SrcIP)); d != "" {
			t.Errorf("rebuild changed fields (-orig +rebuilt):\n%s", d)
		}
		if p.Kind == KindRoCE && !bytes.Equal(q.Payload(), payload) {
			t.Errorf("payload changed on rebuild")
		}
		p.MarkCE()
	})
}

// FuzzVerifyICRC: VerifyICRC and SealICRC never panic, and a sealed frame verifies.
func FuzzVerifyICRC(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		_ = VerifyICRC(frame)
		c := bytes.Clone(frame)
		if err := SealICRC(c); err != nil {
			return
		}
		if err := VerifyICRC(c); err != nil {
			t.Fatalf("sealed frame does not verify: %v", err)
		}
	})
}

// layerUnderTest is a gopacket layer of this package.
type layerUnderTest interface {
	gopacket.DecodingLayer
	gopacket.SerializableLayer
}

// FuzzLayers feeds data to every layer's DecodeFromBytes: an error or a
// decode, never a panic; what decodes serializes and decodes back the same.
func FuzzLayers(f *testing.F) {
	samples, _ := Samples()
	for _, s := range samples {
		var p Packet
		if p.Decode(s.Frame) != nil {
			f.Fatal(s.Name)
		}
		switch p.Kind {
		case KindRoCE, KindCNP:
			end := p.PayloadOffset + p.PayloadLen + int(p.PadCnt) + ICRCLen // end of the UDP datagram
			f.Add(s.Frame[p.L4Offset+UDPLen : end])
			f.Add(s.Frame[p.L4Offset+UDPLen+BTHLen:])
		default:
			f.Add(s.Frame[EthernetLen:])
			f.Add(s.Frame[EthernetLen+2:])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mk := range []func() layerUnderTest{
			func() layerUnderTest { return &BTH{} },
			func() layerUnderTest { return &RETH{} },
			func() layerUnderTest { return &AETH{} },
			func() layerUnderTest { return &ImmDt{} },
			func() layerUnderTest { return &MACControl{} },
			func() layerUnderTest { return &PFC{} },
			func() layerUnderTest { return &Pause{} },
		} {
			l := mk()
			if err := l.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
				if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrMalformed) {
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
				cmpopts.EquateEmpty(), cmp.AllowUnexported(RETH{})); d != "" {
				t.Errorf("%T: round trip (-first +second):\n%s", l, d)
			}
		}
	})
}

// wireFrame matches a stack frame of this package's decoders (not its tests).
var wireFrame = regexp.MustCompile(`rocelab/wire\.(decode|\(\*)`)

// FuzzGopacket decodes whole frames through gopacket with the layers
// registered. gopacket recovers decoder panics into a DecodeFailure layer
// with the stack; a panic whose stack passes through this package fails.
// (Panics inside gopacket's own layers are gopacket's to fix.)
func FuzzGopacket(f *testing.F) {
	Register()
	addSeeds(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		pkt := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.DecodeOptions{NoCopy: true})
		if df, ok := pkt.ErrorLayer().(*gopacket.DecodeFailure); ok {
			if dump := df.Dump(); wireFrame.MatchString(dump) {
				t.Fatalf("a wire decoder panicked: %s", dump)
			}
		}
		_ = pkt.String()
	})
}
