package wire

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/rocelab/rocelab/internal/testenv"
)

// expectDecoded returns the descriptor Decode must produce for a sample:
// its spec plus the fields that follow from the layout.
func expectDecoded(s Sample) Packet {
	want := s.Spec
	want.Len = len(s.Frame)
	want.EtherType = EtherTypeMACControl
	if want.Kind == KindPFC || want.Kind == KindPause {
		return want
	}
	want.L3Offset = EthernetLen
	if want.HasVLAN {
		want.L3Offset += VLANTagLen
	}
	want.EtherType, want.L4Offset = EtherTypeIPv4, want.L3Offset+IPv4MinLen
	if want.IPVersion == 6 {
		want.EtherType, want.L4Offset = EtherTypeIPv6, want.L3Offset+IPv6Len
	}
	ext := Opcode(want.Opcode).Ext()
	want.HasRETH, want.HasAETH, want.HasImm = ext&ExtRETH != 0, ext&ExtAETH != 0, ext&ExtImmDt != 0
	want.PayloadOffset = want.L4Offset + uint16(UDPLen+BTHLen+ext.Len())
	want.PayloadLen = uint16(len(s.Payload))
	if want.Kind == KindCNP {
		want.PayloadLen = CNPReservedLen
	}
	return want
}

func TestSamplesDecode(t *testing.T) {
	samples, err := Samples()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[Kind]int{}
	for _, s := range samples {
		t.Run(s.Name, func(t *testing.T) {
			kinds[s.Spec.Kind]++
			var got Packet
			if err := got.Decode(s.Frame); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(expectDecoded(s), got, ignoreRaw); diff != "" {
				t.Errorf("decoded descriptor (-want +got):\n%s", diff)
			}
			if len(s.Frame) < MinFrameLen {
				t.Errorf("frame is %d bytes, below the Ethernet minimum", len(s.Frame))
			}
			if got.Kind != KindRoCE && got.Kind != KindCNP {
				return
			}
			if !bytes.Equal(got.Payload(), s.Payload) && got.Kind == KindRoCE {
				t.Errorf("payload = %x, want %x", got.Payload(), s.Payload)
			}
			if err := got.VerifyICRC(); err != nil {
				t.Errorf("VerifyICRC: %v", err)
			}
			if want, carried := referenceICRC(t, s.Frame); want != carried {
				t.Errorf("reference ICRC %08x, frame carries %08x", want, carried)
			}
		})
	}
	for _, k := range []Kind{KindRoCE, KindCNP, KindPFC, KindPause} {
		if kinds[k] == 0 {
			t.Errorf("no sample of kind %v", k)
		}
	}
}

// referenceICRC recomputes a RoCEv2 frame's ICRC the plain way, sharing no
// code with icrc.go: copy the bytes from the IP header to the ICRC, mask
// the variant fields one by one, prepend eight 0xFF, CRC-32 the lot. It
// returns it with the ICRC carried (last 4 UDP bytes, least-significant first).
func referenceICRC(t *testing.T, frame []byte) (computed, carried uint32) {
	t.Helper()
	l3 := 14
	if frame[12] == 0x81 && frame[13] == 0x00 {
		l3 = 18
	}
	ipHdr := 40
	if frame[l3]>>4 == 4 {
		ipHdr = int(frame[l3]&0xF) * 4
	}
	l4 := l3 + ipHdr
	end := l4 + int(frame[l4+4])<<8 + int(frame[l4+5])
	buf := []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
	for i := l3; i < end-4; i++ {
		c := frame[i]
		ip, udp, bth := i-l3, i-l4, i-l4-8
		switch {
		case ipHdr != 40 && (ip == 1 || ip == 8 || ip == 10 || ip == 11): // TOS, TTL, checksum
			c = 0xFF
		case ipHdr == 40 && ip == 0:
			c |= 0x0F // traffic class high nibble
		case ipHdr == 40 && (ip == 1 || ip == 2 || ip == 3 || ip == 7): // TC, flow label, hop limit
			c = 0xFF
		case udp == 6 || udp == 7: // UDP checksum
			c = 0xFF
		case bth == 4: // FECN, BECN, reserved
			c = 0xFF
		}
		buf = append(buf, c)
	}
	return crc32.ChecksumIEEE(buf), binary.LittleEndian.Uint32(frame[end-4:])
}

func TestReferenceICRCConnectX4(t *testing.T) {
	got, carried := referenceICRC(t, testenv.MustHex(t, cnpConnectX4))
	if got != carried {
		t.Fatalf("reference ICRC %08x, NIC wrote %08x", got, carried)
	}
}

func TestWriteSamplesPcap(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSamplesPcap(&buf); err != nil {
		t.Fatal(err)
	}
	samples, _ := Samples()
	r, err := pcapgo.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			if i != len(samples) {
				t.Fatalf("read %d frames (%v), want %d", i, err, len(samples))
			}
			break
		}
		if !bytes.Equal(data, samples[i].Frame) || ci.Length != len(data) {
			t.Errorf("frame %d differs from sample %q", i+1, samples[i].Name)
		}
	}
}
