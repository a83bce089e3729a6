package wire

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestMarkCE(t *testing.T) {
	samples, err := Samples()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		t.Run(s.Name, func(t *testing.T) {
			frame := bytes.Clone(s.Frame)
			var p Packet
			if err := p.Decode(frame); err != nil {
				t.Fatal(err)
			}
			before := bytes.Clone(frame)
			marked := p.MarkCE()
			wantMarked := p.IPVersion != 0 && s.Spec.ECN != ECNNotECT
			if marked != wantMarked {
				t.Fatalf("MarkCE() = %v, want %v (ECN %d)", marked, wantMarked, s.Spec.ECN)
			}
			if !marked {
				if !bytes.Equal(frame, before) {
					t.Fatal("MarkCE changed a frame it did not mark")
				}
				return
			}
			// The frame decodes as CE, with every other field unchanged.
			var q Packet
			if err := q.Decode(frame); err != nil {
				t.Fatal(err)
			}
			if q.ECN != ECNCE || p.ECN != ECNCE {
				t.Errorf("ECN after MarkCE: frame %d, descriptor %d, want 3", q.ECN, p.ECN)
			}
			want := expectDecoded(s)
			want.ECN = ECNCE
			if d := diffPackets(want, q); d != "" {
				t.Errorf("after MarkCE (-want +got):\n%s", d)
			}
			// Only the TOS / traffic class bits (and the IPv4 checksum) changed.
			changed := 0
			for i := range frame {
				if frame[i] != before[i] {
					changed++
				}
			}
			if s.Spec.ECN == ECNCE {
				if changed != 0 {
					t.Errorf("%d bytes changed in a packet already marked CE", changed)
				}
			} else if max := map[uint8]int{4: 3, 6: 1}[p.IPVersion]; changed == 0 || changed > max {
				t.Errorf("%d bytes changed", changed)
			}
			// The IPv4 header checksum is still right: recompute it in full.
			if p.IPVersion == 4 {
				h := bytes.Clone(frame[p.L3Offset : p.L3Offset+20])
				got := binary.BigEndian.Uint16(h[10:])
				setIPv4Checksum(h)
				if w := binary.BigEndian.Uint16(h[10:]); got != w {
					t.Errorf("IPv4 checksum after MarkCE = %04x, full recompute %04x", got, w)
				}
			}
			// ICRC masks TOS: still valid, by both implementations.
			if err := q.VerifyICRC(); err != nil {
				t.Errorf("ICRC after MarkCE: %v", err)
			}
			if c, carried := referenceICRC(t, frame); c != carried {
				t.Errorf("reference ICRC after MarkCE %08x, carried %08x", c, carried)
			}
			// The IPv6 UDP checksum does not cover the traffic class either.
			if p.IPVersion == 6 {
				l4, end, _ := q.roceBounds()
				c := bytes.Clone(frame)
				setUDPChecksum(c, 6, int(q.L3Offset), l4, end)
				if !bytes.Equal(c, frame) {
					t.Error("IPv6 UDP checksum no longer valid after MarkCE")
				}
			}
			if !p.MarkCE() {
				t.Error("second MarkCE() = false")
			}
		})
	}
}

// TestMarkCEChecksumExhaustive checks the incremental IPv4 checksum update
// against a full recompute for every TOS byte and many header contents.
func TestMarkCEChecksumExhaustive(t *testing.T) {
	h := []byte{0x45, 0, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0, 0, 10, 0, 17, 1, 10, 0, 18, 1}
	frame := make([]byte, EthernetLen+len(h))
	binary.BigEndian.PutUint16(frame[12:], EtherTypeIPv4)
	for id := 0; id < 1<<16; id += 257 {
		for tos := 0; tos < 256; tos++ {
			if tos&3 == 0 {
				continue
			}
			copy(frame[EthernetLen:], h)
			frame[EthernetLen+1] = byte(tos)
			binary.BigEndian.PutUint16(frame[EthernetLen+4:], uint16(id))
			setIPv4Checksum(frame[EthernetLen:])
			p := Packet{Raw: frame, IPVersion: 4, L3Offset: EthernetLen, ECN: uint8(tos & 3)}
			p.MarkCE()
			got := binary.BigEndian.Uint16(frame[EthernetLen+10:])
			setIPv4Checksum(frame[EthernetLen:])
			if want := binary.BigEndian.Uint16(frame[EthernetLen+10:]); got != want {
				t.Fatalf("id %04x tos %02x: incremental checksum %04x, full %04x", id, tos, got, want)
			}
		}
	}
}
