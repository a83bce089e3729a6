package metaroce

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocelab/rocelab/wire"
)

func TestPlacementRoundTrip(t *testing.T) {
	for _, h := range []Placement{
		{Flags: PlaceFirst, MsgSeq: 7, Addr: 0x7f0000001000, RKey: 0xabcdef, MsgLen: 1 << 20},
		{Flags: PlaceLast | PlaceImm, MsgSeq: 0xFFFFFFFF, Addr: 1, MsgLen: 5, Imm: 0xdeadbeef},
	} {
		b := AppendPlacement(nil, &h)
		if len(b) != h.Len() {
			t.Fatalf("encoded %d bytes, Len %d", len(b), h.Len())
		}
		var got Placement
		rest, err := DecodePlacement(append(b, 1, 2, 3), &got)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(h, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
		if len(rest) != 3 {
			t.Errorf("rest %d bytes, want 3", len(rest))
		}
	}
}

func TestSACKRoundTrip(t *testing.T) {
	s := SACK{Flags: SACKECE | SACKTrim, Trigger: 0xFFFFFE, MSN: 12, Words: 3}
	s.Bitmap[0], s.Bitmap[2] = 0x80000001, 0x10
	var got SACK
	if err := DecodeSACK(AppendSACK(nil, &s), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for i, want := range map[int]bool{0: true, 1: false, 31: true, 68: true, 96: false} {
		if got.Has(i) != want {
			t.Errorf("Has(%d) = %v", i, !want)
		}
	}
}

func TestControlPayloadErrors(t *testing.T) {
	var s SACK
	var c Credit
	var h Hello
	var p Placement
	for name, err := range map[string]error{
		"short sack":      DecodeSACK(make([]byte, 11), &s),
		"sack words":      DecodeSACK([]byte{0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, &s),
		"sack bitmap":     DecodeSACK([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, &s),
		"short credit":    DecodeCredit(make([]byte, 11), &c),
		"negative credit": DecodeCredit([]byte{0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0}, &c),
		"hello version":   DecodeHello(make([]byte, 12), &h),
		"short placement": func() error { _, err := DecodePlacement(make([]byte, 23), &p); return err }(),
		"placement imm":   func() error { _, err := DecodePlacement(append([]byte{PlaceImm}, make([]byte, 23)...), &p); return err }(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestMetaRoCEFramesDecodeAsRoCEv2: MetaRoCE packets are RoCEv2 frames
// with a valid BTH and ICRC that the generic decoder reads.
func TestMetaRoCEFramesDecodeAsRoCEv2(t *testing.T) {
	var pl []byte
	pl = AppendSACK(pl, &SACK{Trigger: 5, Words: 1})
	for _, op := range []wire.Opcode{OpHello, OpHelloAck, OpSACK, OpCreditGrant, OpCreditReq, DataOpcode(wire.OpWriteMiddle)} {
		spec := &wire.Packet{Kind: wire.KindRoCE, SrcIP: netip.MustParseAddr("10.0.0.1"), DstIP: netip.MustParseAddr("10.0.0.2"),
			SrcPort: 0xC001, Opcode: uint8(op), DestQP: 0x123, PSN: 0xFFFFFF}
		f, err := wire.BuildFrame(spec, pl)
		if err != nil {
			t.Fatal(err)
		}
		var p wire.Packet
		if err := p.Decode(f); err != nil {
			t.Fatalf("%v: %v", op, err)
		}
		if err := p.VerifyICRC(); err != nil {
			t.Errorf("%v: %v", op, err)
		}
		if p.Kind != wire.KindRoCE || wire.Opcode(p.Opcode) != op || p.DestQP != 0x123 || p.PSN != 0xFFFFFF || !cmp.Equal(p.Payload(), pl) {
			t.Errorf("%v decoded as %+v", op, p)
		}
	}
}

func FuzzMetaRoCEPayloads(f *testing.F) {
	f.Add(AppendSACK(nil, &SACK{Flags: 1, Trigger: 3, Words: 2, Bitmap: [MaxSACKWords]uint32{1, 2}}))
	f.Add(AppendPlacement(nil, &Placement{Flags: PlaceImm, Imm: 4}))
	f.Add(AppendCredit(nil, &Credit{Flow: 1, Bytes: 4096}))
	f.Add(AppendHello(nil, &Hello{Version: 1, Caps: 3}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s SACK
		if DecodeSACK(b, &s) == nil {
			var s2 SACK
			if err := DecodeSACK(AppendSACK(nil, &s), &s2); err != nil || !cmp.Equal(s, s2) {
				t.Fatalf("sack re-encode: %v %+v %+v", err, s, s2)
			}
		}
		var p Placement
		if _, err := DecodePlacement(b, &p); err == nil {
			var p2 Placement
			if _, err := DecodePlacement(AppendPlacement(nil, &p), &p2); err != nil || p != p2 {
				t.Fatalf("placement re-encode: %v", err)
			}
		}
		var c Credit
		if DecodeCredit(b, &c) == nil {
			var c2 Credit
			if err := DecodeCredit(AppendCredit(nil, &c), &c2); err != nil || c != c2 {
				t.Fatalf("credit re-encode: %v", err)
			}
		}
		var h Hello
		if DecodeHello(b, &h) == nil {
			var h2 Hello
			if err := DecodeHello(AppendHello(nil, &h), &h2); err != nil || h != h2 {
				t.Fatalf("hello re-encode: %v", err)
			}
		}
	})
}
