package wire

import (
	"testing"

	"github.com/rocelab/rocelab/internal/testenv"
)

// benchSpec is a 1 KiB RDMA WRITE Middle over IPv4 with a VLAN tag.
func benchSpec() (Packet, []byte) {
	p := baseSpec()
	p.Opcode = uint8(OpWriteOnly)
	p.HasVLAN, p.PCP, p.VLANID = true, 3, 100
	p.VA, p.RKey, p.DMALen = 0x7f0000001000, 0x1234, 1024
	return p, pattern(1024)
}

func BenchmarkDecode(b *testing.B) {
	spec, payload := benchSpec()
	frame, err := BuildFrame(&spec, payload)
	if err != nil {
		b.Fatal(err)
	}
	var p Packet
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if err := p.Decode(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeCNP(b *testing.B) {
	frame := testenv.MustHex(b, cnpConnectX4)
	var p Packet
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Decode(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeVerifyICRC(b *testing.B) {
	spec, payload := benchSpec()
	frame, err := BuildFrame(&spec, payload)
	if err != nil {
		b.Fatal(err)
	}
	var p Packet
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if err := p.Decode(frame); err != nil {
			b.Fatal(err)
		}
		if err := p.VerifyICRC(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendFrame(b *testing.B) {
	spec, payload := benchSpec()
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		var err error
		if buf, err = AppendFrame(buf[:0], &spec, payload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendFrameIPv6ACK(b *testing.B) {
	samples, err := Samples()
	if err != nil {
		b.Fatal(err)
	}
	var s Sample
	for _, s = range samples {
		if s.Spec.IPVersion == 6 && Opcode(s.Spec.Opcode) == OpAcknowledge {
			break
		}
	}
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = AppendFrame(buf[:0], &s.Spec, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarkCE(b *testing.B) {
	spec, payload := benchSpec()
	frame, err := BuildFrame(&spec, payload)
	if err != nil {
		b.Fatal(err)
	}
	var p Packet
	if err := p.Decode(frame); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.ECN = ECNECT0
		p.MarkCE()
	}
}
