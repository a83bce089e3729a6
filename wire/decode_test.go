package wire

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rocelab/rocelab/internal/testenv"
)

// cnpConnectX4 is a CNP sent by a Mellanox ConnectX-4 Lx, captured on the wire:
//
//	0x0000:  e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2  ..-.+.|..d;2..E.
//	0x0010:  003c 718c 4000 4011 9161 0a00 1101 0a00  .<q.@.@..a......
//	0x0020:  1201 0000 12b7 0028 0000 8100 ffff 4000  .......(......@.
//	0x0030:  0118 0000 0000 0000 0000 0000 0000 0000  ................
//	0x0040:  0000 0000 0000 82fd 002a                 .........*
//
// BTH opcode 0x81, P_Key 0xffff, BECN set, DestQP 0x118, PSN 0; 16 reserved
// bytes; ICRC 82fd002a (least-significant byte first).
const cnpConnectX4 = "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a"

// ignoreRaw compares descriptors by their parsed fields.
var ignoreRaw = cmp.Options{cmpopts.IgnoreFields(Packet{}, "Raw"), cmpopts.EquateComparable(netip.Addr{})}

func TestDecodeConnectX4CNP(t *testing.T) {
	frame := testenv.MustHex(t, cnpConnectX4)
	var got Packet
	if err := got.Decode(frame); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want := Packet{
		Len:        74,
		Kind:       KindCNP,
		DstMAC:     [6]byte{0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2},
		SrcMAC:     [6]byte{0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32},
		EtherType:  EtherTypeIPv4,
		IPVersion:  4,
		SrcIP:      netip.MustParseAddr("10.0.17.1"),
		DstIP:      netip.MustParseAddr("10.0.18.1"),
		DSCP:       48,
		ECN:        ECNECT0,
		TTL:        64,
		Protocol:   ProtoUDP,
		L3Offset:   14,
		IPID:       0x718c,
		L4Offset:   34,
		SrcPort:    0,
		DstPort:    4791,
		Opcode:     0x81,
		BTHControl: BTHControl{PKey: 0xffff, BECN: true},
		DestQP:     0x118,
		PSN:        0,
		// The 16 reserved bytes.
		PayloadOffset: 54,
		PayloadLen:    16,
	}
	if diff := cmp.Diff(want, got, ignoreRaw); diff != "" {
		t.Errorf("Decode mismatch (-want +got):\n%s", diff)
	}
	computed, carried, err := got.ICRC()
	if err != nil {
		t.Fatal(err)
	}
	if computed != 0x2a00fd82 || carried != computed {
		t.Errorf("ICRC computed %08x carried %08x, want both 2a00fd82 (bytes 82fd002a)", computed, carried)
	}
	if err := VerifyICRC(frame); err != nil {
		t.Errorf("VerifyICRC: %v", err)
	}
	// Any change to a covered byte breaks it.
	frame[60] ^= 1
	if err := VerifyICRC(frame); !errors.Is(err, ErrBadICRC) {
		t.Errorf("VerifyICRC after corrupting the reserved bytes = %v, want ErrBadICRC", err)
	}
}

func diffPackets(want, got Packet) string { return cmp.Diff(want, got, ignoreRaw) }
