package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"
)

// TestDecodeTruncated cuts every sample at every length: Decode must return
// ErrTruncated for a cut inside a header it reads, never panic, and never
// report success for a RoCE packet that lost bytes.
func TestDecodeTruncated(t *testing.T) {
	samples, err := Samples()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		var full Packet
		if err := full.Decode(s.Frame); err != nil {
			t.Fatal(err)
		}
		// Bytes the decoder needs: the IP datagram (RoCE) or the MAC control body.
		need := len(s.Frame)
		switch full.Kind {
		case KindPFC:
			need = EthernetLen + 2 + PFCLen
		case KindPause:
			need = EthernetLen + 4
		}
		if full.Kind == KindRoCE || full.Kind == KindCNP {
			need = int(full.L4Offset) + int(binary.BigEndian.Uint16(s.Frame[full.L4Offset+4:]))
		}
		for n := 0; n < need; n++ {
			var p Packet
			err := p.Decode(s.Frame[:n])
			if !errors.Is(err, ErrTruncated) {
				t.Errorf("%s cut to %d bytes: Decode error %v, want ErrTruncated", s.Name, n, err)
			}
			var de *DecodeError
			if !errors.As(err, &de) || de.Layer == "" {
				t.Errorf("%s cut to %d: error %v is not a *DecodeError with a layer", s.Name, n, err)
			}
		}
	}
}

func TestDecodeMalformed(t *testing.T) {
	samples, _ := Samples()
	v4 := samples[0].Frame // IPv4 RC SEND First
	var v6 []byte
	for _, s := range samples {
		if s.Spec.IPVersion == 6 && !s.Spec.HasVLAN {
			v6 = s.Frame
			break
		}
	}
	tests := []struct {
		name  string
		frame []byte
		mod   func(f []byte)
		want  error
	}{
		{"IPv4 version 5", v4, func(f []byte) { f[14] = 0x55 }, ErrMalformed},
		{"IPv4 IHL 4", v4, func(f []byte) { f[14] = 0x44 }, ErrMalformed},
		{"IPv4 IHL 15: options swallow the UDP header", v4, func(f []byte) { f[14] = 0x4F }, ErrTruncated},
		{"IPv4 total length below IHL", v4, func(f []byte) { binary.BigEndian.PutUint16(f[16:], 10) }, ErrMalformed},
		{"IPv4 total length past frame", v4, func(f []byte) { binary.BigEndian.PutUint16(f[16:], 2000) }, ErrTruncated},
		{"UDP length 7", v4, func(f []byte) { binary.BigEndian.PutUint16(f[38:], 7) }, ErrMalformed},
		{"UDP length past IP", v4, func(f []byte) { binary.BigEndian.PutUint16(f[38:], 1000) }, ErrTruncated},
		{"UDP too short for BTH+ICRC", v4, func(f []byte) { binary.BigEndian.PutUint16(f[38:], 8+15) }, ErrTruncated},
		{"IPv6 version 4", v6, func(f []byte) { f[14] = 0x46 }, ErrMalformed},
		{"IPv6 payload length past frame", v6, func(f []byte) { binary.BigEndian.PutUint16(f[18:], 3000) }, ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := bytes.Clone(tt.frame)
			tt.mod(f)
			var p Packet
			if err := p.Decode(f); !errors.Is(err, tt.want) {
				t.Errorf("Decode error = %v, want %v", err, tt.want)
			}
		})
	}

	// A pad count larger than what follows the headers.
	p := baseSpec()
	p.Opcode = uint8(OpAcknowledge)
	f, err := BuildFrame(&p, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Shrink the UDP datagram to BTH+AETH+ICRC and claim 3 pad bytes.
	f[34+8+1] |= 0x30
	var q Packet
	if err := q.Decode(f); !errors.Is(err, ErrMalformed) {
		t.Errorf("pad beyond payload: Decode error = %v, want ErrMalformed", err)
	}
}

// TestPacketSize holds the descriptor to 192 bytes, a size class of Go's
// allocator: a congested simulation keeps hundreds of thousands in its
// switches' buffers (docs/performance.md, "Memory"), and a field added
// in the wrong place costs a size class (240 bytes, 25 % more).
func TestPacketSize(t *testing.T) {
	if n := unsafe.Sizeof(Packet{}); n > 192 {
		t.Errorf("wire.Packet is %d bytes, want at most 192: group new fields by size (see the struct's comment)", n)
	}
}

func TestDecodeNotRoCE(t *testing.T) {
	samples, _ := Samples()
	f := bytes.Clone(samples[0].Frame)
	binary.BigEndian.PutUint16(f[36:], 4792) // another UDP port
	var p Packet
	if err := p.Decode(f); err != nil || p.Kind != KindIP || p.DstPort != 4792 {
		t.Errorf("UDP to 4792: kind %v err %v", p.Kind, err)
	}
	if err := p.VerifyICRC(); !errors.Is(err, ErrNotRoCE) {
		t.Errorf("VerifyICRC on non-RoCE = %v, want ErrNotRoCE", err)
	}
	f[12], f[13] = 0x88, 0xCC // LLDP
	if err := p.Decode(f); err != nil || p.Kind != KindOther || p.EtherType != 0x88CC {
		t.Errorf("LLDP: kind %v type %#x err %v", p.Kind, p.EtherType, err)
	}
	// An IPv4 fragment is IP, not RoCE.
	f = bytes.Clone(samples[0].Frame)
	f[20] |= 0x20 // MF
	if err := p.Decode(f); err != nil || p.Kind != KindIP {
		t.Errorf("fragment: kind %v err %v", p.Kind, err)
	}
	// Unknown MAC control opcode.
	pfc := bytes.Clone(samples[len(samples)-1].Frame)
	pfc[15] = 0x02
	if err := p.Decode(pfc); err != nil || p.Kind != KindOther || p.EtherType != EtherTypeMACControl {
		t.Errorf("MAC control opcode 2: kind %v err %v", p.Kind, err)
	}
}
